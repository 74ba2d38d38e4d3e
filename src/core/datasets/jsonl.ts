import { promises as fs } from "node:fs";
import type { Diagnostic } from "../diagnostics";

export interface JsonlRecord {
  line: number;
  value: unknown;
}

/** Parses one JSON value per non-blank line; each bad line becomes a diagnostic with its line. */
export async function readJsonl(file: string): Promise<{ records: JsonlRecord[]; diagnostics: Diagnostic[] }> {
  const text = await fs.readFile(file, "utf8");
  const records: JsonlRecord[] = [];
  const diagnostics: Diagnostic[] = [];
  text.split("\n").forEach((raw, index) => {
    const line = index + 1;
    if (raw.trim() === "") return;
    try {
      records.push({ line, value: JSON.parse(raw) });
    } catch (e) {
      const message = e instanceof Error ? e.message : String(e);
      const column = Number(/position (\d+)/.exec(message)?.[1] ?? 0) + 1;
      diagnostics.push({ file, line, column, severity: "error", message: `invalid JSON: ${message}` });
    }
  });
  return { records, diagnostics };
}
