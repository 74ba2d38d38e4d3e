// `bprof convert`: a file of diagnostic items in the paper's released-code format (question_type,
// options, answer as text) as a `*.diag.jsonl` (core: diagnostic/authorsFormat.ts). Lines already in
// this format are kept; a line that does not convert is reported at its field, and then nothing is
// written.
import { promises as fs } from "node:fs";
import * as path from "node:path";
import { writeFileAtomic } from "../core/base/fsutil";
import { formatProblem } from "../core/base/problems";
import { convertedLine } from "../core/diagnostic/authorsFormat";
import { checkDiagnosticDataset } from "../core/diagnostic/dataset";
import { isBlankLine, jsonlLines } from "../core/diagnostic/jsonl";

export const CONVERT_USAGE = `  convert <items.jsonl> [--out FILE]
                                 diagnostic items in the format of the paper's released code
                                 (question_type, options, answer as the option's text) as a
                                 *.diag.jsonl (default: stdout); a line that does not convert is
                                 reported where it fails, and nothing is written
`;

/** Runs the command; returns the exit code (0 ok, 2 bad input). */
export async function convertCommand(input: string, out: string | undefined): Promise<number> {
  const file = path.resolve(input);
  let text: string;
  try {
    text = await fs.readFile(file, "utf8");
  } catch (e) {
    process.stderr.write(`bprof convert: cannot read ${file}: ${(e as Error).message}\n`);
    return 2;
  }
  const original = jsonlLines(text);
  const lines = original.map((raw, i) => convertedLine(raw, i + 1) ?? raw);
  // the converted lines checked as a dataset: a line that did not convert (or was never an item) is its error, at its line
  const errors = checkDiagnosticDataset(file, lines.join("\n")).problems.filter((p) => p.severity === "error");
  if (errors.length > 0) {
    for (const p of errors) process.stderr.write(formatProblem(p) + "\n");
    process.stderr.write(
      `bprof convert: ${path.basename(file)} has ${errors.length} error${errors.length === 1 ? "" : "s"}; nothing written\n`,
    );
    return 2;
  }
  const converted = lines.filter((l) => !isBlankLine(l)).join("\n") + "\n";
  const count = lines.filter((l, i) => l !== original[i]).length;
  if (out === undefined || out === "-") {
    await new Promise<void>((resolve, reject) => process.stdout.write(converted, (e) => (e ? reject(e) : resolve())));
  } else {
    await writeFileAtomic(path.resolve(out), converted);
    process.stderr.write(`${count} items converted -> ${path.resolve(out)}\n`);
  }
  return 0;
}
