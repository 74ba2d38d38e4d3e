// An lm-eval group scored as a whole (aggregate_metric_list): two tiny tasks of different sizes
// under a group weighted by size, nested in a group that averages its tasks unweighted, loaded
// from files written here; their baseline, ablated and chance aggregates, AIS and paired-bootstrap
// interval from hand-made runner outputs, checked against numbers worked out by hand; and the
// group's column in the reports.
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, before, test } from "node:test";
import { formatAisTables, formatBaseline } from "../../../src/cli/aisTable";
import { CHANCE_TOLERANCE } from "../../../src/core/analysis/ais";
import { drawResamples, multiplicity, percentile } from "../../../src/core/analysis/bootstrap";
import { loadProfile, type Profile, type ResolvedBenchmark } from "../../../src/core/config/load";
import type { GenerationItem, Task } from "../../../src/core/lmeval/task";
import { itemId, type ItemRef } from "../../../src/core/plan/job";
import { errorsOf, formatProblem } from "../../../src/core/base/problems";
import { cellCases, RunDocuments } from "../../../src/core/report/cases";
import { flatCells } from "../../../src/core/report/cells";
import { parse as parseCsv } from "csv-parse/sync";
import { renderCsv } from "../../../src/core/report/csv";
import { renderHtml } from "../../../src/core/report/html";
import { renderLatex } from "../../../src/core/report/latex";
import { checkResults, ReportInputError } from "../../../src/core/report/load";
import { renderMarkdown } from "../../../src/core/report/markdown";
import { buildReport } from "../../../src/core/report/model";
import { baselineGroups } from "../../../src/core/results/groups";
import type { RunnerScores } from "../../../src/core/results/items";
import {
  assembleProfile,
  baselineAccuracies,
  readProfileOutput,
  type AssembledProfile,
  type ProfileInputs,
  type RunnerManifest,
} from "../../../src/core/results/profile";
import { RESULTS_SCHEMA_VERSION, type Results } from "../../../src/core/results/schema";
import { makeTinyProject, withoutLowPower, type TinyProject } from "../../support/tinyProject";

// tiny_a: 4 documents of 2 choices (chance 1/2); tiny_b: 2 documents of 4 choices (chance 1/4).
const DOCS: Record<string, { answer: number; choices: string[] }[]> = {
  tiny_a: [0, 1, 0, 1].map((answer) => ({ answer, choices: ["yes", "no"] })),
  tiny_b: [3, 2].map((answer) => ({ answer, choices: ["A", "B", "C", "D"] })),
};

function taskYaml(name: string): string {
  return [
    `task: ${name}`,
    "dataset_path: json",
    "dataset_kwargs:",
    "  data_files:",
    `    test: ${name}.jsonl`,
    "test_split: test",
    "output_type: multiple_choice",
    'doc_to_text: "Question {{question}}\\nAnswer:"',
    "doc_to_choice: choices",
    "doc_to_target: answer",
    "metric_list:",
    "  - metric: acc",
    "",
  ].join("\n");
}

const GROUP_FILES: Record<string, string> = {
  // Weighted by size, and inside the unweighted group.
  "_tiny_sized.yaml":
    "group: tiny_sized\ntask:\n  - tiny_a\n  - tiny_b\naggregate_metric_list:\n  - metric: acc\n    aggregation: mean\n    weight_by_size: true\n",
  "_tiny_all.yaml":
    "group: tiny_all\ntask:\n  - tiny_sized\naggregate_metric_list:\n  - metric: acc\n    aggregation: mean\n    weight_by_size: false\n",
  // What the profiler cannot compute: an error in the file, at its line and key.
  "_tiny_bad.yaml":
    "group: tiny_bad\ntask:\n  - tiny_a\naggregate_metric_list:\n  - metric: acc\n    aggregation: median\n    weight_by_size: yes please\n",
  // A score no task reports: a warning, and no score.
  "_tiny_generated.yaml": "group: tiny_generated\ntask:\n  - tiny_a\naggregate_metric_list:\n  metric: exact_match\n",
  // A group without aggregate_metric_list: lm-eval gives it no score.
  "_tiny_plain.yaml": "group: tiny_plain\ntask:\n  - tiny_a\n  - tiny_b\n",
};

let project: TinyProject;
let tasks: string;
before(async () => {
  project = await makeTinyProject(await fs.mkdtemp(path.join(os.tmpdir(), "bprof-groups-")));
  tasks = path.join(project.root, "lm-tasks");
  await fs.mkdir(tasks);
  for (const [name, docs] of Object.entries(DOCS)) {
    await fs.writeFile(path.join(tasks, `${name}.yaml`), taskYaml(name));
    await fs.writeFile(
      path.join(tasks, `${name}.jsonl`),
      docs.map((d, i) => JSON.stringify({ question: `${name} ${i}`, ...d })).join("\n") + "\n",
    );
  }
  for (const [file, text] of Object.entries(GROUP_FILES)) await fs.writeFile(path.join(tasks, file), text);
});
after(async () => fs.rm(project.root, { recursive: true, force: true }));

async function profileNaming(task: string) {
  await fs.writeFile(
    project.configPath,
    ["models:", "  - path: ./model", "task_paths: [./lm-tasks]", "benchmarks:", `  - task: ${task}`, ""].join("\n"),
  );
  return loadProfile(project.configPath);
}

test("a group named by name carries its aggregate_metric_list, and so do the groups in it, outer first", async () => {
  const { profile, problems } = await profileNaming("tiny_all");
  assert.deepEqual(withoutLowPower(problems).map(formatProblem), []);
  assert.deepEqual(
    profile!.benchmarks.map((b) => [b.name, b.task.items.length]),
    [
      ["tiny_a", 4],
      ["tiny_b", 2],
    ],
  );
  assert.deepEqual(profile!.groups, [
    {
      name: "tiny_all",
      file: path.join(tasks, "_tiny_all.yaml"),
      tasks: ["tiny_a", "tiny_b"],
      aggregates: [{ metric: "acc", filter: "none", weightBySize: false, tasks: ["tiny_a", "tiny_b"] }],
    },
    {
      name: "tiny_sized",
      file: path.join(tasks, "_tiny_sized.yaml"),
      tasks: ["tiny_a", "tiny_b"],
      aggregates: [{ metric: "acc", filter: "none", weightBySize: true, tasks: ["tiny_a", "tiny_b"] }],
    },
  ]);
  // lm-eval scores no group without aggregate_metric_list; a task named alone is no group.
  assert.equal((await profileNaming("tiny_plain")).profile!.groups, undefined);
  assert.equal((await profileNaming("tiny_a")).profile!.groups, undefined);
});

test("an aggregate_metric_list the profiler cannot compute is an error at its line and key; one no task reports, a warning", async () => {
  const bad = await profileNaming("tiny_bad");
  const file = path.join(tasks, "_tiny_bad.yaml");
  assert.deepEqual(
    errorsOf(bad.problems).map((p) => `${path.basename(p.file)}:${p.line} ${p.code} ${p.field ?? ""}`),
    [
      "_tiny_bad.yaml:6 task.invalid-value aggregate_metric_list[0].aggregation",
      "_tiny_bad.yaml:7 task.invalid-value aggregate_metric_list[0].weight_by_size",
      `${path.basename(project.configPath)}:5 config.task-has-errors benchmarks[0].task`,
    ],
  );
  assert.match(bad.problems.find((p) => p.file === file)!.message, /only `aggregation: mean` is supported/);

  const generated = await profileNaming("tiny_generated");
  assert.deepEqual(errorsOf(generated.problems), []);
  assert.deepEqual(
    withoutLowPower(generated.problems).map((p) => `${path.basename(p.file)}:${p.line} ${p.severity} ${p.code} ${p.message}`),
    [
      "_tiny_generated.yaml:5 warning task.group-aggregate no task of group `tiny_generated` here reports `exact_match,none`, so the group has no `exact_match,none` score",
    ],
  );
  assert.equal(generated.profile!.groups, undefined);
});

// The runner's outputs, by hand. Correctness per document, tiny_a then tiny_b.
const BASELINE = { tiny_a: [1, 1, 1, 0], tiny_b: [1, 0] };
const TOP = { tiny_a: [0, 1, 1, 0], tiny_b: [0, 0] };
const RANDOM = { tiny_a: [1, 1, 1, 0], tiny_b: [1, 0] };
const BOOTSTRAP = { resamples: 300, confidence: 0.9 };
const SEED = 7;

/** A scores line whose argmax is the target when `correct`, else the next choice. */
function scoresFile(correct: Record<string, number[]>): string {
  return (
    Object.entries(correct)
      .flatMap(([name, values]) =>
        values.map((c, i) => {
          const doc = DOCS[name]![i]!;
          const pick = c ? doc.answer : (doc.answer + 1) % doc.choices.length;
          return JSON.stringify({
            id: itemId(name, i),
            choices: doc.choices.map((_, j) => ({ logprob: j === pick ? -1 : -5, tokens: 1, greedy: false })),
          });
        }),
      )
      .join("\n") + "\n"
  );
}

async function assembled(profile: Profile): Promise<AssembledProfile> {
  const dir = path.join(project.root, "runner-out");
  await fs.mkdir(path.join(dir, "variants"), { recursive: true });
  const manifest: RunnerManifest = {
    parameters: 1000,
    candidates: { total: 600 },
    variants: [
      { ability: "quant", selection: "top", k: 0.01, n: 10, file: "variants/quant.top.k0.jsonl" },
      { ability: null, selection: "random", k: 0.01, n: 10, file: "variants/random.k0.jsonl" },
    ],
  };
  await fs.writeFile(path.join(dir, "profile.json"), JSON.stringify(manifest));
  await fs.writeFile(path.join(dir, "baseline.jsonl"), scoresFile(BASELINE));
  await fs.writeFile(path.join(dir, manifest.variants[0]!.file), scoresFile(TOP));
  await fs.writeFile(path.join(dir, manifest.variants[1]!.file), scoresFile(RANDOM));
  const refs: ItemRef[] = profile.benchmarks.flatMap((b) =>
    b.task.items.map((i) => ({ id: itemId(b.name, i.index), benchmark: b.name, index: i.index })),
  );
  const inputs: ProfileInputs = {
    benchmarks: profile.benchmarks,
    refs,
    abilities: [{ id: "quant", name: "Quantitative Reasoning", sequences: 3 }],
    k: [0.01],
    selections: ["top", "random"],
    methods: ["paper"],
    seed: SEED,
    bootstrap: BOOTSTRAP,
    groups: profile.groups!,
  };
  return readProfileOutput(dir, inputs);
}

/**
 * The percentile interval of the group's AIS over resamples of the union of its documents (tiny_a's
 * four, then tiny_b's two), each document weighted by `weights`, computed the slow way.
 */
function unionInterval(weights: number[]): { low: number; high: number } {
  const b = [...BASELINE.tiny_a, ...BASELINE.tiny_b];
  const a = [...TOP.tiny_a, ...TOP.tiny_b];
  const c = [0.5, 0.5, 0.5, 0.5, 0.25, 0.25];
  const drawn = drawResamples(6, { resamples: BOOTSTRAP.resamples, seed: SEED });
  const values: number[] = [];
  for (let r = 0; r < BOOTSTRAP.resamples; r++) {
    let lost = 0;
    let margin = 0;
    for (let i = 0; i < 6; i++) {
      const m = multiplicity(drawn, i, r) * weights[i]!;
      lost += m * (b[i]! - a[i]!);
      margin += m * (b[i]! - c[i]!);
    }
    if (margin > CHANCE_TOLERANCE * 6) values.push(lost / margin);
  }
  values.sort((x, y) => x - y);
  return { low: percentile(values, 0.05), high: percentile(values, 0.95) };
}

test("a group's baseline, ablated and chance are its tasks' means, weighted by size or not; its AIS and interval follow from them", async () => {
  const { profile } = await profileNaming("tiny_all");
  const { baseline, profiles } = await assembled(profile!);
  const results = profiles[0]!;
  const [top, random] = results.variants;

  // The tasks alone: tiny_a 0.75 -> 0.5 over chance 0.5 (AIS 1), tiny_b 0.5 -> 0 over chance 0.25 (AIS 2).
  assert.deepEqual(
    top!.benchmarks.map((b) => b.acc!.ais),
    [1, 2],
  );

  // Weighted by size: baseline (4 x 0.75 + 2 x 0.5) / 6 = 4/6, ablated (4 x 0.5 + 2 x 0) / 6 = 2/6,
  // chance (4 x 0.5 + 2 x 0.25) / 6 = 2.5/6: AIS (4 - 2) / (4 - 2.5) = 4/3.
  // Unweighted: baseline (0.75 + 0.5) / 2 = 0.625, ablated (0.5 + 0) / 2 = 0.25, chance (0.5 + 0.25) / 2 = 0.375: AIS 0.375 / 0.25 = 1.5.
  const expected = {
    tiny_sized: { baseline: 4 / 6, ablated: 2 / 6, chance: 2.5 / 6, ais: 4 / 3, weights: [1, 1, 1, 1, 1, 1] },
    tiny_all: { baseline: 0.625, ablated: 0.25, chance: 0.375, ais: 1.5, weights: [1 / 4, 1 / 4, 1 / 4, 1 / 4, 1 / 2, 1 / 2] },
  };
  assert.deepEqual(
    top!.groups!.map((g) => g.name),
    ["tiny_all", "tiny_sized"],
  );
  for (const group of top!.groups!) {
    const want = expected[group.name as keyof typeof expected];
    const cell = group.acc!;
    for (const key of ["baseline", "ablated", "chance", "ais"] as const)
      assert.ok(Math.abs(cell[key]! - want[key]) < 1e-12, `${group.name} ${key}: ${cell[key]} vs ${want[key]}`);
    assert.deepEqual(cell.flips, { right_to_wrong: 2, wrong_to_right: 0 });
    // The random control changed nothing: AIS 0, and the top set's specificity is its whole AIS.
    assert.equal(random!.groups!.find((g) => g.name === group.name)!.acc!.ais, 0);
    assert.ok(Math.abs(cell.specificity!.value! - want.ais) < 1e-12);
    // The paired bootstrap over the union of the tasks' documents, each weighted as the mean weighs it.
    const reference = unionInterval(want.weights);
    assert.ok(
      cell.ci !== null && Math.abs(cell.ci.low - reference.low) < 1e-9 && Math.abs(cell.ci.high - reference.high) < 1e-9,
      `${group.name}: ${JSON.stringify(cell.ci)} vs ${JSON.stringify(reference)}`,
    );
    assert.equal(cell.ci.confidence, 0.9);
    assert.equal(cell.interval_excludes_0, cell.ci.low > 0 || cell.ci.high < 0);
    // a group's cell is tested by the bootstrap (its scores are means), and starred by its q over the table
    assert.equal(cell.test, "bootstrap");
    assert.equal(cell.significant, cell.q! < 0.05);
  }
  assert.notDeepEqual(top!.groups![0]!.acc!.ci, top!.groups![1]!.acc!.ci, "the weights change the interval");

  // results.json's groups: the baseline's aggregates.
  assert.deepEqual(
    baselineGroups(profile!.groups!, baseline).map((g) => [
      g.name,
      g.aggregates.map((a) => [a.metric, a.filter, a.weight_by_size, a.tasks, a.items, +a.score.toFixed(12), +a.chance.toFixed(12)]),
    ]),
    [
      ["tiny_all", [["acc", "none", false, ["tiny_a", "tiny_b"], 6, 0.625, 0.375]]],
      ["tiny_sized", [["acc", "none", true, ["tiny_a", "tiny_b"], 6, +(4 / 6).toFixed(12), +(2.5 / 6).toFixed(12)]]],
    ],
  );
});

async function groupResults(): Promise<Results> {
  const { profile } = await profileNaming("tiny_all");
  const { baseline, profiles } = await assembled(profile!);
  const modelProfile = profiles[0]!;
  return {
    schema: "bprof.results",
    schema_version: RESULTS_SCHEMA_VERSION,
    run_id: "r1",
    created: "2025-01-01T00:00:00Z",
    config_file: project.configPath,
    models: [
      {
        name: "tiny",
        path: project.modelDir,
        dtype: "float32",
        benchmarks: baselineAccuracies(baseline, profile!.benchmarks),
        groups: baselineGroups(profile!.groups!, baseline),
        profile: modelProfile,
      },
    ],
  };
}

test("every report shows a column per group, named with its task count, after the benchmarks; the baseline table a row", async () => {
  const results = checkResults(JSON.parse(JSON.stringify(await groupResults())), "results.json");
  const run = { dir: project.root, resultsFile: path.join(project.root, "results.json"), results };
  const report = await buildReport(run);
  const section = report.models[0]!.profile!.sections[0]!;
  assert.deepEqual(section.columns, ["tiny_a", "tiny_b", "tiny_all (group: 2 tasks)", "tiny_sized (group: 2 tasks)"]);
  const groupCell = section.rows[0]!.cells[3]!;
  assert.ok(Math.abs(groupCell.ais! - 4 / 3) < 1e-12);
  assert.deepEqual(groupCell.group, { tasks: 2, weightBySize: true });
  // A group is no "other benchmark" of a label, and lists no documents of its own.
  assert.ok(section.negativeCells.every((c) => !c.benchmark.startsWith("tiny_all") && !c.benchmark.startsWith("tiny_sized")));
  assert.deepEqual(report.models[0]!.baseline.slice(2).map(formatBaseline), [
    "tiny_all (group: 2 tasks, unweighted mean)  acc 0.6250  chance 0.3750  (6 items)",
    "tiny_sized (group: 2 tasks, weighted by documents)  acc 0.6667  chance 0.4167  (6 items)",
  ]);

  const terminal = formatAisTables(report.models[0]!);
  assert.match(terminal, /^ability\s+tiny_a\s+tiny_b\s+tiny_all \(group: 2 tasks\)\s+tiny_sized \(group: 2 tasks\)$/m);
  assert.match(terminal, /^Quantitative Reasoning\s+ 1\.000 .*\s+ 2\.000 .*\s+ 1\.500 \[.*\s+ 1\.333 \[/m);

  const markdown = renderMarkdown(report);
  assert.match(markdown, /\| ability \| tiny\\_a \| tiny\\_b \| tiny\\_all \(group: 2 tasks\) \| tiny\\_sized \(group: 2 tasks\) \|/);
  assert.match(markdown, /\| tiny\\_sized \(group: 2 tasks, weighted by documents\) \| 6 \| 0\.667 \| – \| 0\.417 \|/);
  assert.match(renderLatex(report), /Ability & tiny\\_a & tiny\\_b & tiny\\_all \(group: 2 tasks\) & tiny\\_sized \(group: 2 tasks\) \\\\/);
  const html = renderHtml(report, { script: "" });
  assert.match(html, /<th>tiny_sized \(group: 2 tasks\)<\/th>/);
  assert.match(html, /<td>tiny_all \(group: 2 tasks, unweighted mean\)<\/td><td>6<\/td><td>0\.625<\/td>/);
  assert.ok(
    section.heatmap.cells
      .find((c) => c.row === 0 && c.column === 3)!
      .tooltip.includes("group: the mean of 2 tasks' scores, weighted by their documents"),
  );

  // The results view lists no documents of a group's cell, and says where they are.
  const cases = await cellCases(
    new RunDocuments(run, "run"),
    { model: "tiny", k: 0.01, ability: "Quantitative Reasoning", selection: "top", benchmark: "tiny_sized" },
    "acc",
  );
  assert.deepEqual(cases.documents, []);
  assert.equal(cases.problem, "`tiny_sized` is a group of 2 tasks: its flipped documents are listed in its tasks' cells");

  // CSV and JSON: a row per group and metric it is scored by, with group_tasks.
  const groupRows = flatCells(results).filter((c) => c.group_tasks !== undefined);
  assert.deepEqual(
    groupRows.map((c) => `${c.selection} ${c.benchmark} ${c.metric} ${c.items} ${c.group_tasks}`),
    ["top tiny_all acc 6 2", "top tiny_sized acc 6 2", "random tiny_all acc 6 2", "random tiny_sized acc 6 2"],
  );
  const csv = renderCsv(flatCells(results)).split("\r\n");
  // group_tasks after note; the columns of the tests after it
  assert.ok(csv[0]!.includes(",note,group_tasks,p,q,test,"));
  const records = parseCsv(renderCsv(flatCells(results)), { columns: true }) as Record<string, string>[];
  const row = (benchmark: string) =>
    records.find((r) => r.ability === "Quantitative Reasoning" && r.selection === "top" && r.k === "0.01" && r.benchmark === benchmark)!;
  assert.deepEqual([row("tiny_sized").items, row("tiny_sized").group_tasks], ["6", "2"]);
  assert.deepEqual([row("tiny_a").items, row("tiny_a").group_tasks], ["4", ""]);
});

test("under a metric a group is not scored by, its column says why; results with a damaged group are refused with where", async () => {
  const results = await groupResults();
  const report = await buildReport({ dir: project.root, resultsFile: "results.json", results }, { metric: "acc_norm" });
  const section = report.models[0]!.profile!.sections[0]!;
  const cell = section.rows[0]!.cells[2]!;
  assert.equal(cell.ais, null);
  assert.equal(section.reasons[cell.reason! - 1], "group `tiny_all` is scored by acc only (its aggregate_metric_list), not by acc_norm");

  // A group scored by two metrics averaged differently says so per metric.
  const twoMetrics = JSON.parse(JSON.stringify(results)) as Results;
  twoMetrics.models[0]!.groups![1]!.aggregates.push({
    metric: "acc_norm",
    filter: "none",
    weight_by_size: false,
    tasks: ["tiny_a", "tiny_b"],
    items: 6,
    score: 0.5,
    chance: 0.375,
  });
  const mixed = await buildReport({ dir: project.root, resultsFile: "results.json", results: twoMetrics });
  assert.equal(
    formatBaseline(mixed.models[0]!.baseline[3]!),
    "tiny_sized (group: 2 tasks, acc weighted by documents, acc_norm unweighted mean)  acc 0.6667  acc_norm 0.5000  chance 0.4167  (6 items)",
  );

  const damaged = JSON.parse(JSON.stringify(results)) as Results;
  damaged.models[0]!.groups![1]!.aggregates[0]!.weight_by_size = "yes" as unknown as boolean;
  assert.throws(
    () => checkResults(damaged, "results.json"),
    (e: Error) =>
      e instanceof ReportInputError &&
      e.message === "results.json: models[0].groups[1].aggregates[0].weight_by_size: expected true or false",
  );
  const unknown = JSON.parse(JSON.stringify(results)) as Results;
  unknown.models[0]!.profile!.variants[0]!.groups![0]!.name = "tiny_other";
  assert.throws(
    () => checkResults(unknown, "results.json"),
    /models\[0\]\.profile\.variants\[0\]\.groups\[0\]\.name: expected the name of one of models\[0\]\.groups/,
  );
});

test("a group scored under another filter than its tasks' first (BIG-Bench Hard's flexible-extract) aggregates that filter's exact_match", () => {
  // The first filter takes the whole response, the second its first word: "yes it is" is right only under the second.
  const gen = {
    name: "gen",
    file: "/tasks/gen.yaml",
    outputType: "generate_until",
    generation: { until: ["\n"], maxGenToks: 8 },
    exactMatch: {},
    filters: [
      { name: "strict-match", steps: [{ function: "take_first" }] },
      { name: "flexible-extract", steps: [{ function: "regex", regex_pattern: "(\\w+)" }, { function: "take_first" }] },
    ],
    items: ["yes", "no"].map((target, index): GenerationItem => ({
      kind: "generate_until",
      index,
      context: `Say ${target}:`,
      prompt: { description: "", fewshot: [], text: `Say ${target}:` },
      target,
    })),
  } as unknown as Task;
  const benchmarks: ResolvedBenchmark[] = [{ name: "gen", task: gen }];
  const scores = (responses: string[]): RunnerScores =>
    new Map(responses.map((text, i) => [`gen/${i}`, { generated: [...Buffer.from(text)], stopped: false }]));
  const manifest: RunnerManifest = {
    parameters: 100,
    candidates: { total: 50 },
    variants: [{ ability: "quant", selection: "top", k: 0.1, n: 10, file: "variants/quant.jsonl" }],
  };
  const profile = assembleProfile(manifest, scores(["yes it is", "no"]), new Map([["variants/quant.jsonl", scores(["maybe", "no"])]]), {
    benchmarks,
    refs: [0, 1].map((index) => ({ id: `gen/${index}`, benchmark: "gen", index })),
    abilities: [{ id: "quant", name: "Q", sequences: 1 }],
    k: [0.1],
    selections: ["top"],
    methods: ["paper"],
    seed: 1,
    bootstrap: { resamples: 50, confidence: 0.9 },
    decode: (ids) => Buffer.from(ids).toString("utf8"),
    groups: [
      {
        name: "g",
        file: "/tasks/_g.yaml",
        tasks: ["gen"],
        aggregates: [{ metric: "exact_match", filter: "flexible-extract", weightBySize: true, tasks: ["gen"] }],
      },
    ],
  }).profiles[0]!;
  const [variant] = profile.variants;
  // The task's own cell, strict-match: 0.5 -> 0.5, AIS 0. The group's, flexible-extract: 1 -> 0.5 over chance 0, AIS 0.5.
  assert.deepEqual([variant!.benchmarks[0]!.exact_match!.baseline, variant!.benchmarks[0]!.exact_match!.ais], [0.5, 0]);
  const cell = variant!.groups![0]!.exact_match!;
  assert.deepEqual(
    [cell.baseline, cell.ablated, cell.chance, cell.ais, cell.flips],
    [1, 0.5, 0, 0.5, { right_to_wrong: 1, wrong_to_right: 0 }],
  );
});
