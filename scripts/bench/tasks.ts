// Benchmark of turning benchmark documents into runner items: 10,000 multiple-choice documents of
// a synthetic ARC-style lm-eval task (arc_easy's templates, local JSON lines) rendered by
// the task code of src/core (loadTask: reading, Jinja, choices, targets) and tokenized as
// `bprof run` tokenizes them (compileScoreJob: lm-eval's context/continuation split, byte-level
// BPE tokenizer of the demo models). Target: under one second. Row 5 of `npm run bench`; alone:
//
//   node --import tsx scripts/bench/tasks.ts [documents] [runs]
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { performance } from "node:perf_hooks";
import { pathToFileURL } from "node:url";
import { loadTask } from "../../src/core/lmeval/task";
import { byteLevelTokenizer } from "../lib/byteTokenizer";
import { compileScoreJob } from "../../src/core/plan/job";
import { loadTokenizer } from "../../src/core/prompts/tokenize";
import { median, TextSource } from "./text";

// lm-eval's arc_easy.yaml with local data, but for the target: arc_easy's
// "{{choices.label.index(answerKey)}}" calls a list method that @huggingface/jinja lacks, so the
// documents carry the answer's index.
const TASK_YAML = `task: bench_arc_style
dataset_path: json
dataset_kwargs:
  data_files:
    test: docs.jsonl
test_split: test
output_type: multiple_choice
doc_to_text: "Question: {{question}}\\nAnswer:"
doc_to_target: "{{answer}}"
doc_to_choice: "{{choices.text}}"
metric_list:
  - metric: acc
  - metric: acc_norm
`;

/** Writes the task, its documents and a tokenizer into a new folder under the system's temp folder. */
export function writeTaskBenchFolder(documents: number, seed = 6): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "bprof-bench-tasks-"));
  const src = new TextSource(seed);
  const labels = ["A", "B", "C", "D", "E"];
  const lines: string[] = [];
  for (let i = 0; i < documents; i++) {
    const n = src.random() < 0.8 ? 4 : src.int(3, 5);
    const question = `${src.passage(40, 300)} ${src.sentence(6, 14, "?")}`;
    const text = Array.from({ length: n }, () => src.words(src.int(1, 10)).join(" "));
    lines.push(JSON.stringify({ id: `doc-${i}`, question, choices: { text, label: labels.slice(0, n) }, answer: src.int(0, n - 1) }));
  }
  fs.writeFileSync(path.join(dir, "docs.jsonl"), lines.join("\n") + "\n");
  fs.writeFileSync(path.join(dir, "task.yaml"), TASK_YAML);
  const model = path.join(dir, "model");
  fs.mkdirSync(model);
  const { tokenizerJson, tokenizerConfig } = byteLevelTokenizer();
  fs.writeFileSync(path.join(model, "tokenizer.json"), JSON.stringify(tokenizerJson));
  fs.writeFileSync(path.join(model, "tokenizer_config.json"), JSON.stringify(tokenizerConfig));
  return dir;
}

export interface TaskBenchResult {
  documents: number;
  choices: number;
  tokens: number;
  /** Per run: rendering (loadTask), tokenizing (compileScoreJob) and both, milliseconds. */
  render_milliseconds: number[];
  tokenize_milliseconds: number[];
  milliseconds: number[];
  median_ms: number;
}

export async function benchTasks(documents: number, runs: number): Promise<TaskBenchResult> {
  const dir = writeTaskBenchFolder(documents);
  try {
    const tokenizer = await loadTokenizer(path.join(dir, "model"));
    const render: number[] = [];
    const tokenize: number[] = [];
    let choices = 0;
    let tokens = 0;
    for (let run = 0; run < runs; run++) {
      const t0 = performance.now();
      const { task, problems } = await loadTask(path.join(dir, "task.yaml"));
      const t1 = performance.now();
      if (!task) throw new Error(`the benchmark task does not load: ${problems.map((d) => d.message).join("; ")}`);
      const { job } = compileScoreJob(
        { name: "bench", path: path.join(dir, "model"), dtype: "float32" },
        [{ name: task.name, task }],
        tokenizer,
        "cpu",
      );
      const t2 = performance.now();
      render.push(t1 - t0);
      tokenize.push(t2 - t1);
      if (job.items.length !== documents) throw new Error(`expected ${documents} items, got ${job.items.length}`);
      const scored = job.items.map((item) => ("choices" in item ? item.choices : []));
      choices = scored.reduce((sum, c) => sum + c.length, 0);
      tokens = job.items.reduce((sum, item, i) => sum + item.context.length + scored[i]!.reduce((s, c) => s + c.length, 0), 0);
    }
    const total = render.map((r, i) => r + tokenize[i]!);
    return {
      documents,
      choices,
      tokens,
      render_milliseconds: render,
      tokenize_milliseconds: tokenize,
      milliseconds: total,
      median_ms: median(total),
    };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const documents = Number(process.argv[2] ?? 10000);
  const runs = Number(process.argv[3] ?? 5);
  const r = await benchTasks(documents, runs);
  const list = (ms: number[]) => ms.map((t) => t.toFixed(0)).join(", ");
  console.log(`${r.documents} documents, ${r.choices} choices, ${r.tokens} tokens`);
  console.log(`render (loadTask): ${list(r.render_milliseconds)} ms`);
  console.log(`tokenize (compileScoreJob): ${list(r.tokenize_milliseconds)} ms`);
  console.log(`both: median ${r.median_ms.toFixed(0)} ms of ${runs} runs`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
