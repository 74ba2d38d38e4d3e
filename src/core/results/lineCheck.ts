// The lines of a run folder's JSONL files as they are read: items.jsonl and the variants' items
// files (a benchmark item per line: scored multiple choice, or generated), and flips.jsonl (a
// flipped document of one cell per line). Every field a reader uses is checked for its type
// against lines.schema.json; a line that is not JSON, or has a field of the wrong type, is a
// DamagedRunFileError at `file:line: field`.
import Ajv, { type ValidateFunction } from "ajv";
import type { BenchmarkItem } from "../analysis/generation";
import type { Metric } from "../analysis/ais";
import { DamagedRunFileError, schemaErrorText } from "./inputError";
import schema from "./lines.schema.json";

const ajv = new Ajv({ allErrors: true, verbose: true, strict: false }).addSchema(schema);
const validatorOf = (definition: string): ValidateFunction => ajv.getSchema(`${schema.$id}#/definitions/${definition}`)!;
const validateItem = validatorOf("item");
const validateFlip = validatorOf("flip");

/**
 * One line of flips.jsonl, checked: the cell (`variant`: its items_file, `benchmark`, `metric`) and
 * the flipped document's fields (report/types.ts's FlippedDocument, which this layer does not see).
 */
export interface FlipLine extends Record<string, unknown> {
  variant: string;
  benchmark: string;
  metric: Metric;
}

/** The benchmark items of an items file's text, each line checked. */
export function itemsOfText(text: string, file: string): BenchmarkItem[] {
  return checkedLines(text, file, validateItem) as unknown as BenchmarkItem[];
}

/** The records of a flips.jsonl's text, each line checked. */
export function flipLinesOfText(text: string, file: string): FlipLine[] {
  return checkedLines(text, file, validateFlip) as FlipLine[];
}

/** Each non-blank line parsed and validated; the first that fails is an error at its line and field. */
function checkedLines(text: string, file: string, validate: ValidateFunction): Record<string, unknown>[] {
  const records: Record<string, unknown>[] = [];
  for (const [i, line] of text.split("\n").entries()) {
    if (line.trim() === "") continue;
    let raw: unknown;
    try {
      raw = JSON.parse(line);
    } catch {
      throw new DamagedRunFileError(`${file}:${i + 1}: not a JSON line`);
    }
    if (!validate(raw)) throw new DamagedRunFileError(`${file}:${i + 1}: ${schemaErrorText(validate.errors ?? [], schema)}`);
    records.push(raw as Record<string, unknown>);
  }
  return records;
}
