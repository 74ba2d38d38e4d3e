// Benchmark of the editor's workspace model: a config naming a 20,000-item diagnostic dataset (row
// 5a's text, ten abilities) and a benchmark of 1,000 documents (the contamination index), checked
// once, then re-checked after each of several one-line edits of the dataset, as the model runs
// while a user types. Target: a re-check under 100 ms. Row 5d of `npm run bench`; on its own:
//
//   node --import tsx scripts/bench/workspace.ts [items] [documents] [edits]
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath, pathToFileURL } from "node:url";
import { PAPER_ABILITIES } from "../../src/core/diagnostic/paperAbilities";
import { WorkspaceModel } from "../../src/core/workspace/model";
import { diagnosticBenchData } from "./diagnostic";
import { median } from "./text";

const DEMO_MODEL = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../media/demo/model");

export interface RecheckBenchResult {
  items: number;
  documents: number;
  /** The first check of the config and everything it names (nothing cached). */
  first_ms: number;
  /** One re-check after each edit (the first edit's included: the figure is their median). */
  milliseconds: number[];
  median_ms: number;
}

export async function benchRecheck(items: number, documents: number, edits: number): Promise<RecheckBenchResult> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "bprof-bench-workspace-"));
  try {
    const data = diagnosticBenchData(items, documents);
    const dataset = path.join(dir, "abilities.diag.jsonl");
    fs.writeFileSync(dataset, data.text);
    fs.writeFileSync(
      path.join(dir, "docs.jsonl"),
      data.docs.map((d) => JSON.stringify({ text: d.text, choices: ["yes", "no"], answer: 0 })).join("\n") + "\n",
    );
    fs.writeFileSync(
      path.join(dir, "task.yaml"),
      'task: docs\ndataset_path: json\ndataset_kwargs:\n  data_files:\n    test: docs.jsonl\noutput_type: multiple_choice\ndoc_to_text: "{{text}}"\ndoc_to_choice: choices\ndoc_to_target: answer\n',
    );
    const config = path.join(dir, "bench.bprof.yaml");
    fs.writeFileSync(
      config,
      `models:\n  - path: ${JSON.stringify(DEMO_MODEL)}\nbenchmarks:\n  - task: task.yaml\nabilities:\n${PAPER_ABILITIES.map((a) => `  - name: ${a}\n    data: abilities.diag.jsonl\n`).join("")}ablation:\n  k: [0.01024]\n`,
    );

    const model = new WorkspaceModel();
    model.filesFound([config]);
    let t0 = performance.now();
    await model.update();
    const first = performance.now() - t0;

    const lines = data.text.split("\n");
    const milliseconds: number[] = [];
    for (let edit = 0; edit < edits; edit++) {
      // One word typed into one question, a different line each time, as a user edits.
      const line = Math.floor(((edit + 1) * items) / (edits + 1));
      lines[line] = lines[line]!.replace('"question":"', `"question":"Now ${edit} `);
      model.setDocument(dataset, lines.join("\n"), edit + 1);
      t0 = performance.now();
      const update = await model.update();
      milliseconds.push(performance.now() - t0);
      if (update.checked.length !== 1) throw new Error(`an edit of the dataset checked ${update.checked.join(", ")}, not its config alone`);
    }
    return { items, documents, first_ms: first, milliseconds, median_ms: median(milliseconds) };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const [items, documents, edits] = [Number(process.argv[2] ?? 20000), Number(process.argv[3] ?? 1000), Number(process.argv[4] ?? 9)];
  const r = await benchRecheck(items, documents, edits);
  console.log(
    `${items} items, ${documents} benchmark documents: first check ${r.first_ms.toFixed(0)} ms; re-check after a one-line edit: median ${r.median_ms.toFixed(1)} ms (${r.milliseconds.map((m) => m.toFixed(0)).join(", ")})`,
  );
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) void main();
