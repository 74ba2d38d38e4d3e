import { promises as fs } from "node:fs";
import { problemAt, type Problem } from "../problems";

export interface JsonlRecord {
  line: number;
  value: unknown;
}

/** Parses one JSON value per non-blank line; each bad line becomes a problem at its line. */
export async function readJsonl(file: string): Promise<{ records: JsonlRecord[]; problems: Problem[] }> {
  const text = await fs.readFile(file, "utf8");
  const records: JsonlRecord[] = [];
  const problems: Problem[] = [];
  text.split("\n").forEach((raw, index) => {
    const line = index + 1;
    if (raw.trim() === "") return;
    try {
      records.push({ line, value: JSON.parse(raw) });
    } catch (e) {
      const message = e instanceof Error ? e.message : String(e);
      const column = Number(/position (\d+)/.exec(message)?.[1] ?? 0) + 1;
      problems.push(problemAt({ file, line, column }, "json.syntax", `invalid JSON: ${message}`));
    }
  });
  return { records, problems };
}
