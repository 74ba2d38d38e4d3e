// Benchmark of checking a diagnostic dataset: 20,000 realistic items (300-600 characters each,
// ten abilities, a few planted duplicates, near duplicates and benchmark copies) against 1,000
// benchmark documents, all checks on. Generated in memory from a fixed seed, so every run checks
// the same text. Target: under one second on a slow 2-core machine. Row 5 of `npm run bench`;
// on its own, with details:
//
//   node --import tsx scripts/bench/diagnostic.ts [items] [documents] [runs]
import { performance } from "node:perf_hooks";
import { pathToFileURL } from "node:url";
import { PAPER_ABILITIES } from "../../src/core/diagnostic/paperAbilities";
import { checkDiagnosticDataset } from "../../src/core/diagnostic/dataset";
import type { DiagnosticItemFields } from "../../src/core/diagnostic/item";
import { buildBenchmarkIndex, type BenchmarkText } from "../../src/core/diagnostic/contamination";
import { median, TextSource } from "./text";

/** A diagnostic item as written to the file (the checker adds `line` when it reads it back). */

export interface DiagnosticBenchData {
  docs: BenchmarkText[];
  /** The .diag.jsonl file's text. */
  text: string;
  items: number;
}

export function diagnosticBenchData(items: number, documents: number, seed = 20251002): DiagnosticBenchData {
  const src = new TextSource(seed);
  const names = ["mmlu", "arc_challenge", "hellaswag", "logiqa", "gsm8k"];
  const docs = Array.from({ length: documents }, (_, i) => ({
    benchmark: names[i % names.length]!,
    docIndex: Math.floor(i / names.length),
    text: src.passage(300, 1200),
  }));
  /** A run of `count` words from a benchmark text: the item copies a benchmark sentence. */
  const wordRun = (text: string, count: number) => {
    const w = text.split(/\s+/);
    const start = src.int(0, Math.max(0, w.length - count));
    return w.slice(start, start + count).join(" ");
  };
  const generated: DiagnosticItemFields[] = [];
  for (let i = 0; i < items; i++) {
    const ability = PAPER_ABILITIES[i % PAPER_ABILITIES.length]!;
    const n = src.random() < 0.7 ? 4 : src.int(2, 5);
    let context = src.passage(150, 330);
    let question = src.sentence(6, 14, "?");
    const r = src.random();
    const earlier = generated[src.int(0, Math.max(0, generated.length - 1))];
    if (earlier && r < 0.003)
      [context, question] = [earlier.context.toUpperCase(), earlier.question]; // duplicate
    else if (earlier && r < 0.006)
      [context, question] = [earlier.context.replace(/ \w+\./, " changed."), earlier.question]; // near duplicate
    else if (r < 0.007) context = `${context} ${wordRun(docs[src.int(0, docs.length - 1)]!.text, 15)}`;
    // Numbered so that no item repeats a choice (an error, which would drop it from the checks).
    const choices = Array.from({ length: n }, (_, k) => `${src.words(src.int(1, 6)).join(" ")} ${k + 1}`);
    const meta = i % 7 === 0 ? { meta: { source: "generated", seed: i } } : {};
    generated.push({
      id: `${ability.split(" ")[0]!.toLowerCase()}-${i}`,
      ability,
      context,
      question,
      choices,
      answer: src.int(0, n - 1),
      ...meta,
    });
  }
  return { docs, text: generated.map((it) => JSON.stringify(it)).join("\n") + "\n", items };
}

export interface DiagnosticBenchResult {
  items: number;
  documents: number;
  bytes: number;
  problems: number;
  /** Milliseconds of each run, the benchmark index built inside the call (what `bprof validate` does). */
  milliseconds: number[];
  median_ms: number;
  /** The same with the benchmark index built once beforehand (the editor's case). */
  indexed_milliseconds: number[];
  indexed_median_ms: number;
}

export function benchDiagnostic(data: DiagnosticBenchData, runs: number): DiagnosticBenchResult & { kinds: Map<string, number> } {
  const milliseconds: number[] = [];
  let problems = 0;
  const kinds = new Map<string, number>();
  for (let run = 0; run < runs; run++) {
    const t0 = performance.now();
    const result = checkDiagnosticDataset("bench.diag.jsonl", data.text, { benchmarkTexts: data.docs });
    milliseconds.push(performance.now() - t0);
    problems = result.problems.length;
    if (run === 0) for (const d of result.problems) kinds.set(d.message.split(":")[0]!, (kinds.get(d.message.split(":")[0]!) ?? 0) + 1);
  }
  const index = buildBenchmarkIndex(data.docs);
  const indexed: number[] = [];
  for (let run = 0; run < runs; run++) {
    const t0 = performance.now();
    checkDiagnosticDataset("bench.diag.jsonl", data.text, { benchmarkIndex: index });
    indexed.push(performance.now() - t0);
  }
  return {
    items: data.items,
    documents: data.docs.length,
    bytes: Buffer.byteLength(data.text),
    problems,
    milliseconds,
    median_ms: median(milliseconds),
    indexed_milliseconds: indexed,
    indexed_median_ms: median(indexed),
    kinds,
  };
}

function main(): void {
  const items = Number(process.argv[2] ?? 20000);
  const documents = Number(process.argv[3] ?? 1000);
  const runs = Number(process.argv[4] ?? 5);
  const data = diagnosticBenchData(items, documents);
  const lengths = data.text
    .split("\n")
    .filter(Boolean)
    .map((l) => l.length);
  console.log(
    `${items} items, ${(data.text.length / 1e6).toFixed(1)} MB, ${Math.min(...lengths)}-${Math.max(...lengths)} characters a line (mean ${Math.round(data.text.length / items)}); ${documents} benchmark documents`,
  );
  const r = benchDiagnostic(data, runs);
  const list = (ms: number[]) => ms.map((t) => t.toFixed(0)).join(", ");
  console.log(`problems: ${r.problems} (${[...r.kinds].map(([k, n]) => `${n} ${k}`).join(", ")})`);
  console.log(
    `all checks, benchmark index built in the call: median ${r.median_ms.toFixed(0)} ms of ${runs} runs (${list(r.milliseconds)})`,
  );
  console.log(
    `all checks, benchmark index built once beforehand: median ${r.indexed_median_ms.toFixed(0)} ms of ${runs} runs (${list(r.indexed_milliseconds)})`,
  );
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) main();
