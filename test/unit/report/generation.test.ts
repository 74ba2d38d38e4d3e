// A profile whose benchmarks mix multiple choice and generate_until, from the runner's files to
// every report format: the generation benchmark's cells are exact_match (chance 0), the
// multiple-choice benchmark's acc and acc_norm; a mixed table names each column's metric; the
// flipped documents of a negative generation cell show the generations before and after.
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, before, test } from "node:test";
import { formatAisTables, formatBaseline } from "../../../src/cli/aisTable";
import type { GeneratedItem } from "../../../src/core/analysis/generation";
import type { ResolvedBenchmark } from "../../../src/core/config/load";
import type { GenerationItem, MultipleChoiceItem, Task } from "../../../src/core/lmeval/task";
import type { ItemRef } from "../../../src/core/plan/job";
import { renderReport } from "../../../src/core/report/index";
import { loadRun, ReportInputError, RunItems } from "../../../src/core/report/load";
import { buildReport } from "../../../src/core/report/model";
import { assembleProfile, baselineAccuracies, type RunnerManifest } from "../../../src/core/results/profile";
import { type RunnerScores } from "../../../src/core/results/items";
import { type Results } from "../../../src/core/results/schema";
import { writeJsonl } from "../../../src/core/results/runFolder";
import { ConfinedFolder } from "../../../src/core/base/confinedFolder";

const QUANT = "Quantitative Reasoning";
const SPATIAL = "Spatial Reasoning";
const utf8 = (text: string) => [...Buffer.from(text, "utf8")];
/** The byte-level tokenizer's decoding: ids below 256 are bytes, the special tokens are skipped. */
const decode = (ids: readonly number[]) => Buffer.from(ids.filter((id) => id < 256)).toString("utf8");

// "mc": 4 two-choice documents (chance 1/2), 3 right at baseline.
const MC_TARGETS = [0, 1, 0, 1];
const mcTask = {
  name: "mc",
  file: "/tasks/mc.yaml",
  outputType: "multiple_choice",
  filters: [],
  exactMatch: {},
  items: MC_TARGETS.map((target, index): MultipleChoiceItem => ({
    kind: "multiple_choice",
    index,
    context: `Q${index}`,
    prompt: { description: "", fewshot: [], text: `Q${index}` },
    choices: ["A", "B"],
    continuations: [" A", " B"],
    target,
  })),
} as unknown as Task;

// "gen": 5 documents whose answer is the first word of the generation up to the first newline,
// matched ignoring case. The second filter takes the whole response.
const GEN_TARGETS = ["yes", "no", "yes", "no", "yes"];
const genTask = {
  name: "gen",
  file: "/tasks/gen.yaml",
  outputType: "generate_until",
  generation: { until: ["\n"], maxGenToks: 8 },
  filters: [
    { name: "first-word", steps: [{ function: "regex", regex_pattern: "(\\w+)" }, { function: "take_first" }] },
    { name: "none", steps: [{ function: "take_first" }] },
  ],
  exactMatch: { ignore_case: true },
  items: GEN_TARGETS.map((target, index): GenerationItem => ({
    kind: "generate_until",
    index,
    context: `Say ${target}:`,
    prompt: { description: "", fewshot: [], text: `Say ${target}:` },
    target,
  })),
} as unknown as Task;

const BENCHMARKS: ResolvedBenchmark[] = [
  { name: "mc", task: mcTask },
  { name: "gen", task: genTask },
];
const REFS: ItemRef[] = BENCHMARKS.flatMap((b) =>
  b.task.items.map((i) => ({ id: `${b.name}/${i.index}`, benchmark: b.name, index: i.index })),
);

/** Baseline generations: documents 0-2 right ("Yes, it is" -> "Yes"), 3 and 4 wrong. */
const BASELINE_TEXT = ["Yes, it is\nQ", "no.\n", "YES <b>", "yes & <i>no</i>", "No"];
/** Per variant, the generations that differ from the baseline's. */
const CHANGED: Record<string, Record<number, string>> = {
  "quant.top.k0": { 0: "Nope\n" }, // right -> wrong: AIS (0.6 - 0.4) / 0.6
  "spatial.top.k0": { 3: "No | never\nyes" }, // wrong -> right: AIS (0.6 - 0.8) / 0.6
  "random.k0": {},
};
const FILES: Record<string, string> = {
  "quant.top.k0": "variants/quant.top.k0.jsonl",
  "spatial.top.k0": "variants/spatial.top.k0.jsonl",
  "random.k0": "variants/random.k0.jsonl",
};

function runnerScores(changed: Record<number, string>, mcRight: number[]): RunnerScores {
  const scores: RunnerScores = new Map();
  MC_TARGETS.forEach((target, i) => {
    const pick = mcRight[i] ? target : 1 - target;
    scores.set(
      `mc/${i}`,
      [0, 1].map((c) => ({ logprob: c === pick ? -1 : -3, tokens: 1, greedy: c === pick })),
    );
  });
  BASELINE_TEXT.forEach((text, i) => {
    const generated = utf8(changed[i] ?? text);
    scores.set(`gen/${i}`, { generated, stopped: generated.includes(10) });
  });
  return scores;
}

const MANIFEST: RunnerManifest = {
  parameters: 1000,
  candidates: { total: 500 },
  variants: [
    { ability: "quant", selection: "top", k: 0.01, n: 10, file: FILES["quant.top.k0"]! },
    { ability: "spatial", selection: "top", k: 0.01, n: 10, file: FILES["spatial.top.k0"]! },
    { ability: null, selection: "random", k: 0.01, n: 10, file: FILES["random.k0"]! },
  ],
  overlap: [
    {
      k: 0.01,
      n: 10,
      abilities: ["quant", "spatial"],
      intersections: [
        [10, 2],
        [2, 10],
      ],
    },
  ],
};

let runDir: string;
let results: Results;

before(async () => {
  const assembled = assembleProfile(
    MANIFEST,
    runnerScores({}, [1, 1, 1, 0]),
    new Map(
      Object.entries(CHANGED).map(([key, changed]) => [
        FILES[key]!,
        runnerScores(changed, key === "quant.top.k0" ? [1, 0, 1, 0] : [1, 1, 1, 0]),
      ]),
    ),
    {
      benchmarks: BENCHMARKS,
      refs: REFS,
      abilities: [
        { id: "quant", name: QUANT, sequences: 3 },
        { id: "spatial", name: SPATIAL, sequences: 3 },
      ],
      k: [0.01],
      selections: ["top", "random"],
      methods: ["paper"],
      seed: 2,
      bootstrap: { resamples: 300, confidence: 0.95 },
      decode,
    },
  );
  results = {
    schema: "bprof.results",
    schema_version: 1,
    run_id: "20260102-100000-beef",
    created: "2026-01-02T10:00:00.000Z",
    config_file: "/p/x.bprof.yaml",
    runner_version: "test",
    models: [
      {
        name: "m",
        path: "/p/model",
        dtype: "float32",
        benchmarks: baselineAccuracies(assembled.baseline, BENCHMARKS),
        profile: assembled.profiles[0]!,
      },
    ],
  };
  const root = await fs.mkdtemp(path.join(os.tmpdir(), "bprof-generation-report-"));
  runDir = path.join(root, "runs", results.run_id);
  const modelDir = path.join(runDir, "models", "m");
  await fs.mkdir(path.join(modelDir, "variants"), { recursive: true });
  await fs.writeFile(path.join(runDir, "results.json"), JSON.stringify(results, null, 2));
  const files = await ConfinedFolder.at(runDir, "the run folder");
  await writeJsonl(files, path.join(modelDir, "items.jsonl"), assembled.baseline);
  for (const [file, items] of assembled.variantItems) await writeJsonl(files, path.join(modelDir, file), items);
});
after(async () => fs.rm(path.dirname(path.dirname(runDir)), { recursive: true, force: true }));

test("results: exact_match cells with chance 0 for the generation benchmark, acc and acc_norm for multiple choice", () => {
  const [mc, gen] = results.models[0]!.benchmarks;
  assert.deepEqual(mc, {
    name: "mc",
    task_file: "/tasks/mc.yaml",
    output_type: "multiple_choice",
    items: 4,
    acc: 0.75,
    acc_norm: 0.75,
    chance: 0.5,
  });
  assert.deepEqual(gen, {
    name: "gen",
    task_file: "/tasks/gen.yaml",
    output_type: "generate_until",
    items: 5,
    exact_match: 0.6,
    chance: 0,
    filter: "first-word",
    exact_match_by_filter: { "first-word": 0.6, none: 0 },
  });
  const variants = results.models[0]!.profile!.variants;
  const cell = (ability: string | null) => variants.find((v) => v.ability === ability)!.benchmarks.find((b) => b.name === "gen")!;
  assert.deepEqual(Object.keys(cell(QUANT)), ["name", "exact_match"]);
  assert.deepEqual(Object.keys(variants[0]!.benchmarks[0]!), ["name", "acc", "acc_norm"]);
  const quant = cell(QUANT).exact_match!;
  assert.deepEqual([quant.baseline, quant.ablated, quant.chance, quant.flips], [0.6, 0.4, 0, { right_to_wrong: 1, wrong_to_right: 0 }]);
  assert.ok(Math.abs(quant.ais! - (0.6 - 0.4) / 0.6) < 1e-15);
  const spatial = cell(SPATIAL).exact_match!;
  assert.ok(Math.abs(spatial.ais! - (0.6 - 0.8) / 0.6) < 1e-15);
  assert.deepEqual(spatial.flips, { right_to_wrong: 0, wrong_to_right: 1 });
  assert.equal(spatial.specificity!.value, spatial.ais! - 0, "the random control changed nothing");
  // The multiple-choice benchmark is untouched by the generation benchmark beside it.
  const mcQuant = variants[0]!.benchmarks[0]!.acc!;
  assert.deepEqual([mcQuant.baseline, mcQuant.ablated, mcQuant.chance, mcQuant.ais], [0.75, 0.5, 0.5, 1]);
});

test("items.jsonl keeps the raw generation, the response cut at `until`, each filter's answer, the target and correctness", async () => {
  const lines = (await fs.readFile(path.join(runDir, "models", "m", "items.jsonl"), "utf8"))
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));
  const first = lines.find((l: GeneratedItem) => l.benchmark === "gen" && l.index === 0) as GeneratedItem;
  assert.deepEqual(first, {
    kind: "generate_until",
    benchmark: "gen",
    index: 0,
    target: "yes",
    answer: "Yes",
    correct: true,
    response: "Yes, it is",
    generation: "Yes, it is\nQ",
    tokens: utf8("Yes, it is\nQ"),
    stopped: true,
    filters: [
      { name: "first-word", answer: "Yes", correct: true },
      { name: "none", answer: "Yes, it is", correct: false },
    ],
  });
  assert.equal(lines.filter((l: { kind?: string }) => l.kind === undefined).length, 4, "multiple-choice lines are unchanged (no kind)");
});

test("the CLI's tables: exact_match on the baseline line, each column of a mixed AIS table names its metric", async () => {
  const model = (await buildReport(await loadRun(runDir))).models[0]!;
  assert.equal(formatBaseline(model.baseline[0]!), "mc  acc 0.7500  acc_norm 0.7500  chance 0.5000  (4 items)");
  assert.equal(formatBaseline(model.baseline[1]!), "gen  exact_match 0.6000 (first-word)  none 0.0000  chance 0.0000  (5 items)");
  const lines = formatAisTables(model).split("\n");
  assert.match(
    lines[0]!,
    /^m: AIS \(acc; exact_match for generate_until benchmarks\) at k = 0\.01 \(n = 10 of 1000 parameters, paper importance\), 95% CI/,
  );
  assert.match(lines[1]!, /^ability\s+mc \(acc\)\s+gen \(exact_match\)$/);
  assert.match(lines[3]!, /^Spatial Reasoning\s+ 0\.000 .*-0\.333 \[/);
});

test("reports: per-benchmark metrics in every format, generations in the flipped documents of a negative cell", async () => {
  const run = await loadRun(runDir);
  const report = await buildReport(run, { items: new RunItems(run.dir) });
  const section = report.models[0]!.profile!.sections[0]!;
  assert.deepEqual(section.metrics, ["acc", "exact_match"]);
  assert.deepEqual(section.columns, ["mc (acc)", "gen (exact_match)"]);
  assert.equal(section.metricLabel, "acc; exact_match for generate_until benchmarks");
  assert.deepEqual(section.heatmap.columns, section.columns);
  const negative = section.negativeCells.find((c) => c.benchmark === "gen")!;
  assert.equal(negative.metric, "exact_match");
  assert.deepEqual(negative.documents, [
    {
      kind: "generate_until",
      index: 3,
      direction: "wrong_to_right",
      target: "no",
      baselineAnswer: "yes",
      ablatedAnswer: "No",
      baselineResponse: "yes & <i>no</i>",
      ablatedResponse: "No | never",
    },
  ]);
  assert.deepEqual(report.models[0]!.baseline[1], {
    name: "gen",
    outputType: "generate_until",
    items: 5,
    acc: null,
    acc_norm: null,
    exact_match: 0.6,
    chance: 0,
    filter: "first-word",
    exactMatchByFilter: { "first-word": 0.6, none: 0 },
  });
  // acc_norm switches the multiple-choice columns only.
  const norm = (await buildReport(run, { metric: "acc_norm" })).models[0]!.profile!.sections[0]!;
  assert.deepEqual(norm.columns, ["mc (acc_norm)", "gen (exact_match)"]);

  const md = (await renderReport(run, { format: "md" })).text;
  assert.ok(md.includes("| mc | 4 | 0.750 | 0.750 | – |  | 0.500 |"), md);
  assert.ok(md.includes("| gen | 5 | – | – | 0.600 | first-word (none 0.000) | 0.000 |"), md);
  assert.match(md, /^\| ability \| mc \(acc\) \| gen \(exact\\_match\) \|$/m);
  assert.match(md, /^#### Spatial Reasoning × gen \(exact\\_match\): AIS -0\.333/m);
  assert.ok(md.includes("| 3 | wrong → right | “no” | “yes” → “No” | “yes & \\<i\\>no\\</i\\>” | “No \\| never” |"), md);

  const html = (await renderReport(run, { format: "html", script: "" })).text;
  assert.ok(html.includes("<th>gen (exact_match)</th>"));
  assert.ok(html.includes(`<span class="gen">yes &amp; &lt;i&gt;no&lt;/i&gt;</span>`), "generations are escaped");
  assert.ok(!html.includes("<i>no</i>"));

  const json = JSON.parse((await renderReport(run, { format: "json" })).text);
  const genCells = json.cells.filter((c: { benchmark: string }) => c.benchmark === "gen");
  assert.deepEqual([...new Set(genCells.map((c: { metric: string }) => c.metric))], ["exact_match"]);
  assert.equal(json.cells.length, 3 * (2 + 1), "3 variants x (acc, acc_norm of mc + exact_match of gen)");
  assert.deepEqual(
    json.flipped_documents.find((d: { benchmark: string }) => d.benchmark === "gen"),
    {
      model: "m",
      ability: SPATIAL,
      method: "paper",
      selection: "top",
      k: 0.01,
      benchmark: "gen",
      metric: "exact_match",
      ais: genCells.find((c: { ability: string }) => c.ability === SPATIAL).ais,
      index: 3,
      direction: "wrong_to_right",
      target: "no",
      baseline_prediction: "yes",
      ablated_prediction: "No",
      baseline_response: "yes & <i>no</i>",
      ablated_response: "No | never",
    },
  );
  assert.deepEqual(json.models[0].baseline[1], {
    benchmark: "gen",
    output_type: "generate_until",
    items: 5,
    exact_match: 0.6,
    filter: "first-word",
    exact_match_by_filter: { "first-word": 0.6, none: 0 },
    chance: 0,
  });

  const csv = (await renderReport(run, { format: "csv", metric: "exact_match" })).text.trimEnd().split("\r\n");
  assert.equal(csv.length, 1 + 3);
  assert.ok(
    csv.slice(1).every((l) => l.includes(",gen,exact_match,5,0.6,")),
    csv.join("\n"),
  );

  const latex = (await renderReport(run, { format: "latex" })).text;
  assert.ok(latex.includes("Ability & mc (acc) & gen (exact\\_match) \\\\"), latex);
  assert.ok(latex.includes("\\caption{Ability Impact Scores (acc; exact\\_match for generate\\_until benchmarks) of m"));

  await assert.rejects(
    renderReport(run, { format: "md", metric: "exact_match" }),
    (e: Error) => e instanceof ReportInputError && /picks the multiple-choice metric/.test(e.message),
  );
});
