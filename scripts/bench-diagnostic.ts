// Benchmark of checking a diagnostic dataset: 20,000 realistic items (300-600 characters each,
// ten abilities, a few planted duplicates, near duplicates and benchmark copies) against 1,000
// benchmark documents, all checks on. Generated in memory from a fixed seed, so every run checks
// the same text. Target: under one second on a slow 2-core machine.
//
//   node --import tsx scripts/bench-diagnostic.ts [items] [documents] [runs]
import { performance } from "node:perf_hooks";
import { PAPER_ABILITIES } from "../src/core/abilities";
import { checkDiagnosticDataset, type DiagnosticItem } from "../src/core/datasets/diagnostic";
import { buildBenchmarkIndex, type BenchmarkText } from "../src/core/datasets/ngrams";

const ITEMS = Number(process.argv[2] ?? 20000);
const DOCUMENTS = Number(process.argv[3] ?? 1000);
const RUNS = Number(process.argv[4] ?? 5);

/** mulberry32: small, fast, good enough for test data. */
function randomSource(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const random = randomSource(20251002);
const int = (lo: number, hi: number) => lo + Math.floor(random() * (hi - lo + 1));

// A Zipf-distributed vocabulary: common English words first, then made-up words, so the word
// frequencies (and so the shingle frequencies the duplicate search depends on) look like text.
const COMMON = "the of and to a in is that for it as was with be by on not he this are or his from at which but have an they you were her she there would their we him been has when who will more no if out so said what up its about into than them can only other new some could time these two may then do first any my now such like our over man me even most made after also did many before must through back years where much your way well down should because each just those people how too little state good very make world still own see men work long get here between both life being under never day same another know while last might us great old year off come since against go came right used take three".split(" ");
const SYLLABLES = "ba be bi bo bu ca ce ci co cu da de di do du fa fe fi fo ga ge gi go ka ke ki ko la le li lo lu ma me mi mo mu na ne ni no nu pa pe pi po ra re ri ro ru sa se si so su ta te ti to tu va ve vi vo za ze zi zo ran ter mon vel dor kin".split(" ");
const VOCABULARY = [...COMMON, ...Array.from({ length: 8000 }, () => Array.from({ length: int(1, 4) }, () => SYLLABLES[int(0, SYLLABLES.length - 1)]).join(""))];
const CUMULATIVE = (() => {
  let total = 0;
  return VOCABULARY.map((_, rank) => (total += 1 / (rank + 1) ** 1.05));
})();

function word(): string {
  const r = random() * CUMULATIVE[CUMULATIVE.length - 1]!;
  let [lo, hi] = [0, CUMULATIVE.length - 1];
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (CUMULATIVE[mid]! < r) lo = mid + 1;
    else hi = mid;
  }
  return VOCABULARY[lo]!;
}

function words(count: number): string[] {
  return Array.from({ length: count }, word);
}

function sentence(min: number, max: number, end = "."): string {
  const w = words(int(min, max)).map((x) => (random() < 0.08 ? `${x},` : x));
  const first = w[0]!;
  w[0] = first[0]!.toUpperCase() + first.slice(1);
  return w.join(" ").replace(/,$/, "") + end;
}

function passage(minChars: number, maxChars: number): string {
  const target = int(minChars, maxChars);
  let text = sentence(8, 20);
  while (text.length < target) text += " " + sentence(8, 20);
  return text;
}

function benchmarkTexts(): BenchmarkText[] {
  const names = ["mmlu", "arc_challenge", "hellaswag", "logiqa", "gsm8k"];
  return Array.from({ length: DOCUMENTS }, (_, i) => ({ benchmark: names[i % names.length]!, docIndex: Math.floor(i / names.length), text: passage(300, 1200) }));
}

/** A diagnostic item as written to the file (the checker adds `line` when it reads it back). */
type GeneratedItem = Omit<DiagnosticItem, "line">;

function generatedItems(docs: readonly BenchmarkText[]): GeneratedItem[] {
  const items: GeneratedItem[] = [];
  for (let i = 0; i < ITEMS; i++) {
    const ability = PAPER_ABILITIES[i % PAPER_ABILITIES.length]!;
    const n = random() < 0.7 ? 4 : int(2, 5);
    let context = passage(150, 330);
    let question = sentence(6, 14, "?");
    const r = random();
    const earlier = items[int(0, Math.max(0, items.length - 1))];
    if (earlier && r < 0.003) [context, question] = [earlier.context.toUpperCase(), earlier.question]; // duplicate
    else if (earlier && r < 0.006) [context, question] = [earlier.context.replace(/ \w+\./, " changed."), earlier.question]; // near duplicate
    else if (r < 0.007) {
      const doc = wordRun(docs[int(0, docs.length - 1)]!.text, 15);
      context = `${context} ${doc}`;
    }
    // Numbered so that no item repeats a choice (an error, which would drop it from the checks).
    const choices = Array.from({ length: n }, (_, k) => `${words(int(1, 6)).join(" ")} ${k + 1}`);
    const meta = i % 7 === 0 ? { meta: { source: "generated", seed: i } } : {};
    items.push({ id: `${ability.split(" ")[0]!.toLowerCase()}-${i}`, ability, context, question, choices, answer: int(0, n - 1), ...meta });
  }
  return items;
}

/** A run of `count` words from a benchmark text: the item copies a benchmark sentence. */
function wordRun(text: string, count: number): string {
  const w = text.split(/\s+/);
  const start = int(0, Math.max(0, w.length - count));
  return w.slice(start, start + count).join(" ");
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

const docs = benchmarkTexts();
const items = generatedItems(docs);
const text = items.map((it) => JSON.stringify(it)).join("\n") + "\n";
const lengths = text.split("\n").filter(Boolean).map((l) => l.length);
console.log(`${ITEMS} items, ${(text.length / 1e6).toFixed(1)} MB, ${Math.min(...lengths)}-${Math.max(...lengths)} characters a line (mean ${Math.round(text.length / ITEMS)}); ${DOCUMENTS} benchmark documents`);

const timesAll: number[] = [];
let diagnostics = 0;
const kinds = new Map<string, number>();
for (let run = 0; run < RUNS; run++) {
  const t0 = performance.now();
  const result = checkDiagnosticDataset("bench.diag.jsonl", text, { benchmarkTexts: docs });
  timesAll.push(performance.now() - t0);
  diagnostics = result.diagnostics.length;
  if (run === 0) for (const d of result.diagnostics) kinds.set(d.message.split(":")[0]!, (kinds.get(d.message.split(":")[0]!) ?? 0) + 1);
}
const index = buildBenchmarkIndex(docs);
const timesIndexed: number[] = [];
for (let run = 0; run < RUNS; run++) {
  const t0 = performance.now();
  checkDiagnosticDataset("bench.diag.jsonl", text, { benchmarkIndex: index });
  timesIndexed.push(performance.now() - t0);
}
console.log(`diagnostics: ${diagnostics} (${[...kinds].map(([k, n]) => `${n} ${k}`).join(", ")})`);
console.log(`all checks, benchmark index built in the call: median ${median(timesAll).toFixed(0)} ms of ${RUNS} runs (${timesAll.map((t) => t.toFixed(0)).join(", ")})`);
console.log(`all checks, benchmark index built once beforehand: median ${median(timesIndexed).toFixed(0)} ms of ${RUNS} runs (${timesIndexed.map((t) => t.toFixed(0)).join(", ")})`);
