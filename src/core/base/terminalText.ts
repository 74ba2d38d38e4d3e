// Text bound for a terminal, made safe to print. Names, messages and reports carry what a user's
// files hold (a config's `expects`, a run folder's ability names and run_id), and a terminal obeys
// control characters in them: ESC starts sequences that clear the screen, retitle the window or
// write the clipboard (OSC 52), BEL ends them, a lone CR rewrites the line, and the bidi overrides
// make a line read in another order than its characters run. Each of these is written as a visible
// escape instead of being dropped, so a user sees that something was there.
//
// The escape is `\uXXXX` (four hex digits): in JSON and in JavaScript strings (a report's data) it
// means the very character it replaces, and in CSV, Markdown, LaTeX and plain text it is text. Line
// breaks (LF, CRLF) and tabs stay: they are the layout of the output itself.

/**
 * A CR not followed by LF, the other C0 controls but tab and line feed, DEL, the C1 controls, and
 * the bidi embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069).
 */
// eslint-disable-next-line no-control-regex -- the control characters are what is looked for
const UNSAFE = /\r(?!\n)|[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

/** `text` with every character a terminal would act on (UNSAFE) written as `\uXXXX`. */
export function terminalText(text: string): string {
  return text.replace(UNSAFE, escapedControl);
}

/** One character as the visible escape `\uXXXX` that stands for it here and in the reports (report/format.ts). */
export function escapedControl(c: string): string {
  return `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`;
}
