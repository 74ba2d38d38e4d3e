// Benchmark of the editor's views of a large run: the results view's model (one figure of 10
// abilities x 60 benchmarks at one of 6 k, from a results.json with 1,000 bootstrap resamples per
// cell behind its intervals) and the cases marked in a 10,000-document data file (its lines, from
// the run's flips.jsonl). The run is made here, with a fixed seed. Target: each under 200 ms.
// Row 5e of `npm run bench`; on its own:
//
//   node --import tsx scripts/bench/views.ts [abilities] [benchmarks] [documents] [runs]
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { performance } from "node:perf_hooks";
import { pathToFileURL } from "node:url";
import { dataFileCases, RunDocuments } from "../../src/core/report/cases";
import { FLIPS_FILE, loadRun, type FlipRecord } from "../../src/core/report/load";
import { resultsView } from "../../src/core/report/view";
import { type CellMetric, type Results, type VariantResult } from "../../src/core/results/schema";
import { CONFIG_SNAPSHOT } from "../../src/core/results/runFolder";
import { median } from "./text";

const K = [0.00001, 0.00004, 0.00016, 0.00064, 0.00256, 0.01024];
const SMALL_BENCHMARK = 100;
/** Share of a cell's documents an ablation flips. */
const FLIP_SHARE = 0.02;

export interface ViewsBenchResult {
  abilities: number;
  benchmarks: number;
  k: number;
  documents: number;
  /** The results view's model for one query, each run (a fresh load of results.json). */
  view_milliseconds: number[];
  view_median_ms: number;
  /** The cases of the large benchmark's data file, each run from a fresh run (flips.jsonl and the data file read again). */
  cases_milliseconds: number[];
  cases_median_ms: number;
  marked_lines: number;
}

/** A deterministic stream of numbers in [0, 1). */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 4294967296;
}

function writeRun(dir: string, abilities: number, benchmarks: number, documents: number): { runDir: string; dataFile: string } {
  const next = random(20251125);
  const project = path.join(dir, "project");
  fs.mkdirSync(path.join(project, "tasks"), { recursive: true });
  const dataFile = path.join(project, "tasks", "large.jsonl");
  fs.writeFileSync(
    dataFile,
    Array.from({ length: documents }, (_, i) =>
      JSON.stringify({ question: `Question ${i}: which of these comes next?`, choices: ["a", "b", "c", "d"], answer: i % 4 }),
    ).join("\n") + "\n",
  );
  fs.writeFileSync(
    path.join(project, "tasks", "large.yaml"),
    'task: large\ndataset_path: json\ndataset_kwargs:\n  data_files:\n    test: large.jsonl\noutput_type: multiple_choice\ndoc_to_text: "{{question}}"\ndoc_to_choice: choices\ndoc_to_target: answer\n',
  );
  const names = ["large", ...Array.from({ length: benchmarks - 1 }, (_, b) => `bench_${b}`)];
  const cell = (ais: number): CellMetric => ({
    baseline: 0.7,
    ablated: 0.7 - ais * 0.45,
    chance: 0.25,
    ais,
    ci: { low: ais - 0.05, high: ais + 0.05, confidence: 0.95 },
    significant: Math.abs(ais) > 0.05,
    undefined_resamples: 0,
    flips: { right_to_wrong: 3, wrong_to_right: 1 },
  });
  const variants: VariantResult[] = [];
  const flips: FlipRecord[] = [];
  const abilityNames = Array.from({ length: abilities }, (_, a) => `Ability ${a}`);
  for (const [ki, k] of K.entries()) {
    for (const ability of [...abilityNames, null]) {
      const file = ability === null ? `random.k${ki}` : `${ability.replace(" ", "-").toLowerCase()}.top.k${ki}`;
      const items_file = `variants/${file}.items.jsonl`;
      const ais = () => (next() - 0.35) * 0.6;
      const largeAis = ais();
      variants.push({
        ability,
        ability_id: ability === null ? null : ability.replace(" ", "-").toLowerCase(),
        selection: ability === null ? "random" : "top",
        k,
        n: Math.floor(k * 1e9),
        scores_file: `runner/variants/${file}.jsonl`,
        items_file,
        benchmarks: names.map((name) => ({ name, acc: cell(name === "large" ? largeAis : ais()), acc_norm: cell(ais()) })),
      });
      for (const metric of ["acc", "acc_norm"] as const) {
        for (let i = 0; i < documents; i++) {
          if (next() >= FLIP_SHARE) continue;
          const direction = next() < 0.5 ? "wrong_to_right" : "right_to_wrong";
          const [before, after] = direction === "wrong_to_right" ? [(i + 1) % 4, i % 4] : [i % 4, (i + 1) % 4];
          const logprobs = (chosen: number) => [0, 1, 2, 3].map((c) => (c === chosen ? -1 : -3 - c));
          flips.push({
            variant: items_file,
            benchmark: "large",
            metric,
            index: i,
            direction,
            target: i % 4,
            baselinePrediction: before,
            ablatedPrediction: after,
            baselineLogprobs: logprobs(before),
            ablatedLogprobs: logprobs(after),
            choiceBytes: [1, 1, 1, 1],
          });
        }
      }
    }
  }
  const results: Results = {
    schema: "bprof.results",
    schema_version: 1,
    run_id: "20260101-000000-bench",
    created: "2026-01-01T00:00:00.000Z",
    config_file: path.join(project, "bench.bprof.yaml"),
    runner_version: "bench",
    models: [
      {
        name: "bench",
        path: path.join(project, "model"),
        dtype: "bfloat16",
        benchmarks: names.map((name) => ({
          name,
          task_file: path.join(project, "tasks", `${name}.yaml`),
          items: name === "large" ? documents : SMALL_BENCHMARK,
          acc: 0.7,
          acc_norm: 0.68,
          chance: 0.25,
          ...(name === "large"
            ? { data_file: dataFile, data_sha256: createHash("sha256").update(fs.readFileSync(dataFile)).digest("hex") }
            : {}),
        })),
        profile: {
          parameters: 1e9,
          candidates: 6e8,
          k: K,
          selections: ["top", "random"],
          method: "paper",
          seed: 1,
          bootstrap: { resamples: 1000, confidence: 0.95, seed: 1 },
          abilities: abilityNames.map((name) => ({ name, id: name.replace(" ", "-").toLowerCase(), sequences: 2000 })),
          variants,
          overlap: [],
        },
      },
    ],
  };
  const runDir = path.join(project, ".bprof", "runs", results.run_id);
  fs.mkdirSync(path.join(runDir, "models", "bench"), { recursive: true });
  fs.writeFileSync(path.join(runDir, "results.json"), JSON.stringify(results));
  fs.writeFileSync(path.join(runDir, CONFIG_SNAPSHOT), "models:\n  - path: ./model\nbenchmarks:\n  - task: ./tasks/large.yaml\n");
  fs.writeFileSync(path.join(runDir, "models", "bench", FLIPS_FILE), flips.map((f) => JSON.stringify(f)).join("\n") + "\n");
  return { runDir, dataFile };
}

export async function benchViews(abilities: number, benchmarks: number, documents: number, runs: number): Promise<ViewsBenchResult> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "bprof-bench-views-"));
  try {
    const { runDir, dataFile } = writeRun(dir, abilities, benchmarks, documents);
    const view: number[] = [];
    const cases: number[] = [];
    let marked = 0;
    for (let run = 0; run < runs; run++) {
      let t0 = performance.now();
      const built = await resultsView(await loadRun(runDir), { k: K[3], cells: "top" });
      view.push(performance.now() - t0);
      if (built.profile?.heatmap.cells.length !== abilities * benchmarks) throw new Error("the view has the wrong number of cells");
      t0 = performance.now();
      const found = await dataFileCases(new RunDocuments(await loadRun(runDir), "run"), dataFile, "acc");
      cases.push(performance.now() - t0);
      marked = found.lines.length;
    }
    return {
      abilities,
      benchmarks,
      k: K.length,
      documents,
      view_milliseconds: view,
      view_median_ms: median(view),
      cases_milliseconds: cases,
      cases_median_ms: median(cases),
      marked_lines: marked,
    };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const [abilities, benchmarks, documents, runs] = [
    Number(process.argv[2] ?? 10),
    Number(process.argv[3] ?? 60),
    Number(process.argv[4] ?? 10000),
    Number(process.argv[5] ?? 5),
  ];
  const r = await benchViews(abilities, benchmarks, documents, runs);
  const list = (ms: number[]) => ms.map((m) => m.toFixed(0)).join(", ");
  console.log(
    `results view, ${abilities} abilities x ${benchmarks} benchmarks x ${r.k} k: median ${r.view_median_ms.toFixed(0)} ms (${list(r.view_milliseconds)})`,
  );
  console.log(
    `cases of a ${documents}-document data file (${r.marked_lines} lines marked): median ${r.cases_median_ms.toFixed(0)} ms (${list(r.cases_milliseconds)})`,
  );
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) void main();
