// Markdown made from data. Hovers and tooltips show names and texts from files a repository
// ships (item ids, ability and benchmark names, documents, run folders), and Markdown would turn
// some of them into links, remote images or HTML; every such piece goes through one of these.
// The Markdown around them is ours.

/** ASCII punctuation: CommonMark lets a backslash make any of it literal. */
const PUNCTUATION = /[!-/:-@[-`{-~]/g;

/**
 * `text` as literal words: every ASCII punctuation character escaped, so no link, image, HTML,
 * emphasis, heading or autolink (`https://`, `www.`) can form; line breaks become spaces, so it
 * cannot start a block of its own.
 */
export function mdText(text: string): string {
  return text.replace(/\s*[\r\n]+\s*/g, " ").replace(PUNCTUATION, "\\$&");
}

/** `text` as inline code, shown as it is: fenced with more backticks than it holds in a row, on one line. */
export function mdCode(text: string): string {
  const line = text.replace(/[\r\n]+/g, " ");
  if (line.trim() === "") return mdText(line) || "\u00a0";
  const fence = "`".repeat(longestRun(line) + 1);
  // A space pads code that starts or ends with a backtick (CommonMark strips one on each side).
  const pad = line.startsWith("`") || line.endsWith("`") ? " " : "";
  return `${fence}${pad}${line}${pad}${fence}`;
}

/** A block of text shown as it is: fenced with more backticks than it holds in a row. */
export function verbatim(text: string): string {
  const fence = "`".repeat(Math.max(3, longestRun(text) + 1));
  return `${fence}text\n${text}\n${fence}`;
}

function longestRun(text: string): number {
  return Math.max(0, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
}
