// How deep a JSON text nests, found without parsing it. JSON.parse takes any depth, but what
// places a problem in a file (jsonc-parser), prints a value or walks one recurses once per level,
// and a line of a dataset nested 100,000 deep overflows the stack ("Maximum call stack size
// exceeded"). No dataset, data file or model file nests anywhere near 64 levels (a diagnostic
// item is 2 deep, a tokenizer.json about 6), so a text that does is refused, at its first bracket
// past the limit, before anything parses it.

/** The deepest nesting of arrays and objects a JSON text from a user's file may have. */
export const MAX_JSON_NESTING = 64;

/** The offset of the first `[` or `{` (outside strings) that opens level MAX_JSON_NESTING + 1; undefined when none does. */
export function tooDeepOffset(text: string): number | undefined {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c /* \ */) i++;
      else if (c === 0x22 /* " */) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b /* [ */ || c === 0x7b /* { */) {
      if (++depth > MAX_JSON_NESTING) return i;
    } else if (c === 0x5d /* ] */ || c === 0x7d /* } */) depth = Math.max(0, depth - 1);
  }
  return undefined;
}

/** What a problem says of a text that nests past the limit. */
export const TOO_DEEP = `nested deeper than ${MAX_JSON_NESTING} levels of arrays and objects`;
