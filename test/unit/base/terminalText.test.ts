// Text from a user's files printed to a terminal: every control a terminal acts on shows as an
// escape (never silently dropped), printable Unicode and the output's own line breaks stay.
import assert from "node:assert/strict";
import { test } from "node:test";
import { terminalText } from "../../../src/core/base/terminalText";

const OSC52 = "\x1b]52;c;SGVsbG8=\x07";
const CLEAR = "\x1b[2J";

test("ESC, BEL and the sequences they make (OSC 52 clipboard writes, screen clears) become visible escapes", () => {
  assert.equal(terminalText(`ability ${OSC52}${CLEAR}`), "ability \\u001b]52;c;SGVsbG8=\\u0007\\u001b[2J");
});

test("every C0 control but tab and line feed, DEL and the C1 controls are escaped", () => {
  for (let code = 0; code < 0xa0; code++) {
    const c = String.fromCharCode(code);
    const kept = c === "\t" || c === "\n" || (code >= 0x20 && code < 0x7f);
    assert.equal(terminalText(c), kept ? c : `\\u${code.toString(16).padStart(4, "0")}`, `U+${code.toString(16)}`);
  }
});

test("a CR before a line feed is a line break and stays; a lone CR, which rewrites the line, is escaped", () => {
  assert.equal(terminalText("a\r\nb"), "a\r\nb");
  assert.equal(terminalText("ok\rerror"), "ok\\u000derror");
  assert.equal(terminalText("end\r"), "end\\u000d");
});

test("the bidi embeddings, overrides and isolates are escaped; other Unicode stays as it is", () => {
  for (const code of [0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069])
    assert.equal(terminalText(`x${String.fromCharCode(code)}y`), `x\\u${code.toString(16)}y`);
  const printable = "café naïve Zürich 東京 🙂 👍🏽 Ελλάδα Москва עברית العربية \u00a0\u200d";
  assert.equal(terminalText(printable), printable);
});

test("JSON keeps its meaning: an escaped string parses to the characters it replaced", () => {
  const value = { name: `a\u0085b\u202ec\u007f${OSC52}` };
  const json = JSON.stringify(value);
  assert.deepEqual(JSON.parse(terminalText(json)), value);
  assert.doesNotMatch(terminalText(json), /[\u007f-\u009f\u202e]/);
});
