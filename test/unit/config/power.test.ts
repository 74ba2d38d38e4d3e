// Power before the run (src/core/config/power.ts) through loadProfile on the tiny project: the
// lines `bprof validate` prints and the `config.low-power` warning at a benchmark's entry, before
// any run (an assumed baseline) and once a finished run has scored the benchmarks (its baselines,
// per model), at the config's confidence and `stats.min_effect`.
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, before, test } from "node:test";
import { documentsToDetect, minimumDetectableAis } from "../../../src/core/analysis/power";
import { errorsOf } from "../../../src/core/base/problems";
import { loadProfile } from "../../../src/core/config/load";
import { benchmarkPowers, powerFigure, powerLines } from "../../../src/core/config/power";
import { newestBaselines } from "../../../src/core/run/baselines";
import { makeTinyProject, TINY_BENCHMARK_DOCS, writeScoredRun, type TinyProject } from "../../support/tinyProject";

/** The tiny benchmark's chance: 3, 4 and 3 choices. */
const TINY_CHANCE = TINY_BENCHMARK_DOCS.reduce((s, d) => s + 1 / d.choices.length, 0) / TINY_BENCHMARK_DOCS.length;
const GEN_DOCS = 1319;

const GEN_TASK = `task: gen
dataset_path: json
dataset_kwargs:
  data_files:
    test: gen.jsonl
output_type: generate_until
doc_to_text: "Question: {{question}}\\nAnswer:"
doc_to_target: target
generation_kwargs:
  until: ["\\n"]
  max_gen_toks: 4
metric_list:
  - metric: exact_match
`;

let project: TinyProject;
before(async () => {
  project = await makeTinyProject(await fs.mkdtemp(path.join(os.tmpdir(), "bprof-power-")));
  await fs.writeFile(path.join(project.root, "tasks", "gen.yaml"), GEN_TASK);
  const docs = Array.from({ length: GEN_DOCS }, (_, i) => JSON.stringify({ question: `What is ${i} plus 1?`, target: String(i + 1) }));
  await fs.writeFile(path.join(project.root, "tasks", "gen.jsonl"), docs.join("\n") + "\n");
});
after(async () => fs.rm(project.root, { recursive: true, force: true }));

const withGen = (tail = "") =>
  `models:\n  - path: ./model\n    name: tiny-llama\nbenchmarks:\n  - task: ./tasks/tiny_mc.yaml\n  - task: ./tasks/gen.yaml\n${tail}`;

test("before any run: a baseline assumed halfway between chance and 1, said so; a 3-document benchmark is a warning at its entry", async () => {
  const loaded = await loadProfile(project.configPath);
  assert.ok(loaded.profile, "a warning does not stop the run");
  assert.deepEqual(errorsOf(loaded.problems), []);
  const low = loaded.problems.filter((p) => p.code === "config.low-power");
  assert.equal(low.length, 1);
  const warning = low[0]!;
  const needed = documentsToDetect({ baseline: (TINY_CHANCE + 1) / 2, chance: TINY_CHANCE, alpha: 0.05 }, 0.1)!;
  assert.deepEqual(
    [warning.severity, warning.line, warning.column, warning.field, warning.data],
    ["warning", 6, 5, "benchmarks[0]", { documents: needed }],
    "at the entry `- task: ./tasks/tiny_mc.yaml`",
  );
  assert.equal(
    warning.message,
    "benchmark `tiny_mc` cannot detect an AIS of 0.1 (`stats.min_effect`) at 95% confidence and 80% power: its 3 documents detect no AIS up to 1 " +
      `at a baseline assumed halfway between chance 0.306 and 1 (0.653: no finished run has scored it); it would need ${needed} documents`,
  );
  assert.ok(needed > 2000 && needed < 4000, `${needed}`);
  assert.deepEqual(powerLines(loaded.power!), [
    "power: tiny_mc (3 documents, baseline unknown, assumed 0.653 halfway between chance and 1; chance 0.306): detects no AIS up to 1 at 95% confidence and 80% power",
  ]);
});

test("the config's confidence and min_effect set the figure and the warning; generate_until's chance is 0", async () => {
  const at90 = minimumDetectableAis({ documents: GEN_DOCS, baseline: 0.5, chance: 0, alpha: 0.1 })!;
  const strict = await loadProfile(project.configPath, { text: withGen("bootstrap: { confidence: 0.9 }\nstats: { min_effect: 0.2 }\n") });
  assert.ok(strict.profile);
  assert.deepEqual(powerLines(strict.power!), [
    "power: tiny_mc (3 documents, baseline unknown, assumed 0.653 halfway between chance and 1; chance 0.306): detects no AIS up to 1 at 90% confidence and 80% power",
    `power: gen (${GEN_DOCS} documents, baseline unknown, assumed 0.5 halfway between chance and 1; chance 0): detects AIS >= ${powerFigure(at90)} at 90% confidence and 80% power`,
  ]);
  assert.ok(at90 < 0.2, `${at90}`);
  // only the 3 documents fall short of 0.2; the count they would need is at the config's level
  assert.deepEqual(
    strict.problems.filter((p) => p.code === "config.low-power").map((p) => [p.field, p.data?.documents]),
    [["benchmarks[0]", documentsToDetect({ baseline: (TINY_CHANCE + 1) / 2, chance: TINY_CHANCE, alpha: 0.1 }, 0.2)]],
  );
  assert.match(strict.problems.find((p) => p.code === "config.low-power")!.message, /an AIS of 0\.2 .* at 90% confidence and 80% power/);

  // at the defaults (0.95, 0.1) the 1319 documents fall short too, with the count 0.1 needs
  const defaults = await loadProfile(project.configPath, { text: withGen() });
  const at95 = minimumDetectableAis({ documents: GEN_DOCS, baseline: 0.5, chance: 0 })!;
  assert.ok(at95 > 0.1, `${at95}`);
  const gen = defaults.problems.find((p) => p.code === "config.low-power" && p.field === "benchmarks[1]");
  assert.ok(gen);
  const needed = documentsToDetect({ baseline: 0.5, chance: 0 }, 0.1)!;
  assert.equal(
    gen.message,
    `benchmark \`gen\` cannot detect an AIS of 0.1 (\`stats.min_effect\`) at 95% confidence and 80% power: its ${GEN_DOCS} documents detect only AIS >= ${powerFigure(at95)} ` +
      `at a baseline assumed halfway between chance 0 and 1 (0.5: no finished run has scored it); it would need ${needed} documents`,
  );
  assert.equal(gen.line, 6);
});

test("once scored: the newest finished run's baselines and chance, per model when several; at or below chance no AIS is defined", async (t) => {
  const runs = path.join(project.root, ".bprof");
  t.after(() => fs.rm(runs, { recursive: true, force: true }));
  await fs.writeFile(project.configPath, withGen("stats: { min_effect: 0.2 }\n"));
  await writeScoredRun(project.configPath, "20261201-000000-aaaa", [
    { name: "tiny-llama", benchmarks: [{ name: "tiny_mc", items: 3, acc: 1, chance: TINY_CHANCE }] },
  ]);
  const newest = "20261202-000000-bbbb";
  await writeScoredRun(project.configPath, newest, [
    {
      name: "tiny-llama",
      benchmarks: [
        { name: "tiny_mc", items: 3, acc: 2 / 3, chance: TINY_CHANCE },
        { name: "gen", items: GEN_DOCS, exact_match: 0.412 },
      ],
    },
    {
      name: "tiny-llama-b",
      benchmarks: [
        { name: "tiny_mc", items: 3, acc: 0.25, chance: TINY_CHANCE },
        { name: "gen", items: GEN_DOCS, exact_match: 0.412 },
      ],
    },
  ]);
  const baselines = await newestBaselines(project.configPath);
  assert.equal(baselines?.runId, newest);
  const loaded = await loadProfile(project.configPath, { baselines: baselines! });
  const gen = minimumDetectableAis({ documents: GEN_DOCS, baseline: 0.412, chance: 0 })!;
  assert.equal(powerFigure(gen), "0.129", "the issue's gsm8k example: 1319 documents at 0.412");
  assert.deepEqual(powerLines(loaded.power!), [
    `power: tiny_mc, model tiny-llama (3 documents, baseline acc 0.667 from run ${newest}; chance 0.306): detects no AIS up to 1 at 95% confidence and 80% power`,
    `power: tiny_mc, model tiny-llama-b (3 documents, baseline acc 0.25 from run ${newest}; chance 0.306): no AIS is defined: the baseline is at or below chance`,
    `power: gen, model tiny-llama (${GEN_DOCS} documents, baseline exact_match 0.412 from run ${newest}; chance 0): detects AIS >= 0.129 at 95% confidence and 80% power`,
    `power: gen, model tiny-llama-b (${GEN_DOCS} documents, baseline exact_match 0.412 from run ${newest}; chance 0): detects AIS >= 0.129 at 95% confidence and 80% power`,
  ]);
  const low = loaded.problems.filter((p) => p.code === "config.low-power");
  assert.deepEqual(
    low.map((p) => p.field),
    ["benchmarks[0]"],
    "gen detects 0.129 < 0.2 for both models",
  );
  const needed = documentsToDetect({ baseline: 2 / 3, chance: TINY_CHANCE }, 0.2);
  assert.equal(
    low[0]!.message,
    "benchmark `tiny_mc` cannot detect an AIS of 0.2 (`stats.min_effect`) at 95% confidence and 80% power: " +
      `for model tiny-llama, its 3 documents detect no AIS up to 1 at the baseline acc 0.667 of run ${newest} (chance 0.306); it would need ${needed} documents; ` +
      `for model tiny-llama-b, the baseline acc 0.25 of run ${newest} is at or below chance 0.306: no AIS is defined there, so no ablation's effect can be measured on it`,
  );
  assert.deepEqual(low[0]!.data, { documents: needed });
});

test("a benchmark the run did not score gets the assumed baseline; one without documents detects nothing", () => {
  const task = (name: string, items: number) =>
    ({
      name,
      entry: 0,
      task: { items: Array.from({ length: items }, () => ({ kind: "multiple_choice", choices: ["a", "b"] })) },
    }) as unknown as Parameters<typeof benchmarkPowers>[0][number];
  const powers = benchmarkPowers([task("scored", 400), { ...task("added", 400), entry: 1 }, { ...task("empty", 0), entry: 2 }], {
    confidence: 0.95,
    minEffect: 0.1,
    baselines: { runId: "r", baselines: [{ benchmark: "scored", model: "m", metric: "acc", baseline: 0.9, chance: 0.5 }] },
  });
  assert.deepEqual(
    powers.map((p) => [p.benchmark, p.baseline, p.chance, p.from === "assumed" ? "assumed" : p.from.runId]),
    [
      ["scored", 0.9, 0.5, "r"],
      ["added", 0.75, 0.5, "assumed"],
      ["empty", 0.5, 0, "assumed"],
    ],
  );
  assert.equal(powers[2]!.detectable, null);
  assert.deepEqual(
    powers.map((p) => p.documents),
    [400, 400, 0],
  );
  assert.equal(
    powerLines(powers)[2],
    "power: empty (0 documents, baseline unknown, assumed 0.5 halfway between chance and 1; chance 0): detects nothing: it has no documents",
  );
});
