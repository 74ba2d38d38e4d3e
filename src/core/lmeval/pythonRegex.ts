// lm-eval task files hold Python `re` patterns. Most read the same in JavaScript; these are the
// differences that occur in real task files, translated, and the rest refused by name.

export class PythonRegexError extends Error {}

/** A JavaScript RegExp equivalent to Python's `re.compile(pattern)`, with extra flags (e.g. "g"). */
export function pythonRegex(pattern: string, extraFlags = ""): RegExp {
  let source = pattern;
  let flags = extraFlags;
  // Leading inline flags, e.g. (?s) or (?im): JavaScript takes them as RegExp flags.
  const inline = /^\(\?([aiLmsux]+)\)/.exec(source);
  if (inline) {
    for (const f of inline[1]!) {
      if (f === "i" || f === "m" || f === "s") flags += flags.includes(f) ? "" : f;
      else if (f !== "u") throw new PythonRegexError(`inline flag (?${f}) has no JavaScript equivalent in ${JSON.stringify(pattern)}`);
    }
    source = source.slice(inline[0].length);
  }
  source = source
    .replace(/\(\?P<([A-Za-z_][A-Za-z0-9_]*)>/g, "(?<$1>") // named group
    .replace(/\(\?P=([A-Za-z_][A-Za-z0-9_]*)\)/g, "\\k<$1>") // named backreference
    .replace(/\\Z/g, "$(?![\\s\\S])") // end of string
    .replace(/\\A/g, "^(?<![\\s\\S])"); // start of string
  if (/\(\?[aiLmsux-]+[:)]/.test(source)) throw new PythonRegexError(`scoped inline flags are not supported in ${JSON.stringify(pattern)}`);
  try {
    return new RegExp(source, flags);
  } catch (e) {
    throw new PythonRegexError(`invalid pattern ${JSON.stringify(pattern)}: ${(e as Error).message}`);
  }
}

/** Python's `re.findall`: whole matches without groups, the group with one, tuples with several. */
export function findall(regex: RegExp, text: string): (string | string[])[] {
  const global = new RegExp(regex.source, regex.flags.includes("g") ? regex.flags : regex.flags + "g");
  const out: (string | string[])[] = [];
  for (const m of text.matchAll(global)) {
    if (m.length === 1) out.push(m[0]);
    else if (m.length === 2) out.push(m[1] ?? "");
    else out.push(m.slice(1).map((g) => g ?? ""));
  }
  return out;
}

/** `text` as a pattern that matches it literally. */
export function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
