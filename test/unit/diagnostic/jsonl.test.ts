import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { test } from "node:test";
import { checkDiagnosticDataset } from "../../../src/core/diagnostic/dataset";
import { readJsonl } from "../../../src/core/diagnostic/jsonl";

test("readJsonl numbers lines and columns as the diagnostic checker does: byte order mark, CRLF and blank lines", async () => {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), "bprof-jsonl-"));
  try {
    const file = path.join(dir, "a.diag.jsonl");
    const good = JSON.stringify({ id: "a", ability: "Deductive Reasoning", context: "", question: "Q?", choices: ["x", "y"], answer: 0 });
    const bad = '{"id": "b", "ability": ,}';
    const text = `\ufeff${good}\r\n\r\n   \r\n${bad}\r\n${good.replace('"a"', '"c"')}\n`;
    await fs.writeFile(file, text);
    const { records, problems } = await readJsonl(file);
    assert.deepEqual(
      records.map((r) => [r.line, (r.value as { id: string }).id]),
      [
        [1, "a"],
        [5, "c"],
      ],
    );
    assert.equal(problems.length, 1);
    const checked = checkDiagnosticDataset(file, text).problems.filter((p) => p.code === "diag.syntax");
    assert.equal(checked.length, 1);
    assert.deepEqual([problems[0]!.code, problems[0]!.line, problems[0]!.column], ["json.syntax", checked[0]!.line, checked[0]!.column]);
    assert.equal(problems[0]!.column, bad.lastIndexOf(",") + 1);
    assert.match(problems[0]!.message, /expected a value/);
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
});
