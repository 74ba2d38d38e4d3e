// Text edits (a quick fix's) applied to a text, as the editor applies them.
import { offsetAt, type TextEdit } from "../../src/core/language/text";

/** `text` with the edits applied (the last first, so earlier offsets stay valid). */
export function applied(text: string, edits: readonly TextEdit[]): string {
  const sorted = [...edits].sort((a, b) => offsetAt(text, b.range.start) - offsetAt(text, a.range.start));
  for (const e of sorted) text = text.slice(0, offsetAt(text, e.range.start)) + e.newText + text.slice(offsetAt(text, e.range.end));
  return text;
}
