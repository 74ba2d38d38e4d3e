// The ability pipeline end to end: a config with two abilities -> diagnostic items rendered and
// tokenized -> a `profile` job -> the real bprof-runner (baseline, importance, ranking, ablation)
// -> AIS with intervals, flips and overlap in results.json; one cell recomputed by hand from
// the per-item files. Then `bprof run --resume` on the finished folder reads everything back.
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import * as path from "node:path";
import { after, before, test } from "node:test";
import { mcnemarExactP } from "../../src/core/analysis/mcnemar";
import { usableCores } from "../../src/core/launch/cores";
import { WorkspaceModel } from "../../src/core/workspace/model";
import { WorkspaceService } from "../../src/core/workspace/service";
import { bprof } from "../support/cli";
import { BENCH_DOCS, CONFIG_YAML, K, makeProfileProject, QUANT, SPATIAL } from "../support/profileProject";

let root: string;
let parameters: number;
let mlpParameters: number;

before(async () => {
  ({ root, parameters, mlpParameters } = await makeProfileProject());
});
after(async () => fs.rm(root, { recursive: true, force: true }));

interface Item {
  benchmark: string;
  index: number;
  target: number;
  prediction: number;
  predictionNorm: number;
  choices: { logprob: number }[];
}

async function readItems(file: string): Promise<Item[]> {
  return (await fs.readFile(file, "utf8"))
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as Item);
}

async function onlyRunDir(): Promise<string> {
  const runs = await fs.readdir(path.join(root, ".bprof", "runs"));
  assert.equal(runs.length, 1, `expected one run, found ${runs.join(", ")}`);
  return path.join(root, ".bprof", "runs", runs[0]!);
}

test("bprof run profiles two abilities with the real runner; one AIS cell recomputed by hand", { timeout: 300_000 }, async () => {
  // Both k fit the tiny model's MLP share.
  for (const k of K) assert.ok(Math.floor(k * parameters) <= mlpParameters && Math.floor(k * parameters) > 0, `k = ${k}`);

  const result = await bprof(["run", path.join(root, "profile.bprof.yaml")]);
  assert.equal(result.exitCode, 0, `bprof run failed:\n${result.stderr}\n${result.stdout}`);
  assert.match(result.stdout, /tiny-llama\s+tiny_yes\s+acc/);
  assert.match(
    result.stdout,
    new RegExp(
      `tiny-llama: AIS \\(acc\\) at k = 0\\.001 \\(n = ${Math.floor(0.001 * parameters)} of ${parameters} parameters, paper importance\\)`,
    ),
  );
  assert.match(result.stdout, /^Quantitative Reasoning\s/m);
  assert.match(result.stdout, /^random \(control\)\s/m);
  assert.match(result.stdout, /^top sets: \d+(-\d+)?% of the zeroed weights lower their own ability's loss when zeroed/m);
  for (const phase of ["baseline", `importance · ${QUANT}`, `importance · ${SPATIAL}`, "ranking( · .*)?", "variants"]) {
    assert.match(result.stderr, new RegExp(`^tiny-llama ${phase} \\d+/\\d+$`, "m"), `progress of ${phase}:\n${result.stderr}`);
  }
  // the runner names the variant it scores: its progress says which ablation the count is of
  for (const variant of [`${QUANT} · top · k 0\\.001 · paper`, `${SPATIAL} · top · k 0\\.01 · paper`, "random control · k 0\\.001"]) {
    assert.match(result.stderr, new RegExp(`^tiny-llama ${variant} \\d+/\\d+$`, "m"), `scoring ${variant}:\n${result.stderr}`);
  }
  assert.match(result.stderr, /tiny-llama variant Quantitative Reasoning · top · k 0\.001, n \d+/);

  const runDir = await onlyRunDir();
  const modelDir = path.join(runDir, "models", "tiny-llama");
  const job = JSON.parse(await fs.readFile(path.join(modelDir, "job.json"), "utf8"));
  assert.equal(job.subcommand, "profile");
  // the config has no `threads`: the runner runs on every core this process may use (issue 35)
  const start = (await fs.readFile(path.join(modelDir, "events.jsonl"), "utf8"))
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as { type: string; threads?: number })
    .find((e) => e.type === "start");
  const cores = await usableCores();
  assert.equal(start?.threads, cores);
  if (cores > 1) assert.ok(start!.threads! > 1, `${start!.threads} threads on ${cores} cores`);
  assert.deepEqual(
    job.abilities.map((a: { id: string; sequences: number[][] }) => [a.id, a.sequences.length]),
    [
      ["quantitative-reasoning", 4],
      ["spatial-reasoning", 3],
    ],
  );
  assert.deepEqual(job.ablation, {
    k: K,
    selections: ["top", "random"],
    method: "paper",
    front_removal: 0,
    back_removal: 0,
    batch_size: 2,
    seed: 3,
  });
  assert.equal(JSON.parse(await fs.readFile(path.join(runDir, "results.json"), "utf8")).models[0].profile.method, "paper");

  const results = JSON.parse(await fs.readFile(path.join(runDir, "results.json"), "utf8"));
  assert.equal(results.schema_version, 1);
  const model = results.models[0];
  const profile = model.profile;
  assert.equal(profile.parameters, parameters, "the runner counts the parameters config.json implies");
  assert.equal(profile.candidates, mlpParameters);
  assert.deepEqual(profile.k, K);
  assert.deepEqual(profile.abilities, [
    { name: QUANT, id: "quantitative-reasoning", sequences: 4 },
    { name: SPATIAL, id: "spatial-reasoning", sequences: 3 },
  ]);
  assert.deepEqual(
    profile.variants.map(
      (v: { ability: string | null; selection: string; k: number; n: number }) => `${v.ability} ${v.selection} ${v.k} ${v.n}`,
    ),
    [
      `${QUANT} top 0.001 ${Math.floor(0.001 * parameters)}`,
      `${QUANT} top 0.01 ${Math.floor(0.01 * parameters)}`,
      `${SPATIAL} top 0.001 ${Math.floor(0.001 * parameters)}`,
      `${SPATIAL} top 0.01 ${Math.floor(0.01 * parameters)}`,
      `null random 0.001 ${Math.floor(0.001 * parameters)}`,
      `null random 0.01 ${Math.floor(0.01 * parameters)}`,
    ],
  );
  for (const o of profile.overlap) {
    assert.deepEqual(o.abilities, [QUANT, SPATIAL]);
    assert.equal(o.intersections[0][0], o.n);
    assert.equal(o.jaccard[0][1], o.intersections[0][1] / (2 * o.n - o.intersections[0][1]));
  }

  // One cell by hand: Quantitative Reasoning, top, k = 0.01, on tiny_yes, metric acc.
  const baseline = await readItems(path.join(modelDir, "items.jsonl"));
  const cellVariant = profile.variants.find((v: { ability: string; k: number }) => v.ability === QUANT && v.k === 0.01);
  const ablated = await readItems(path.join(modelDir, cellVariant.items_file));
  assert.equal(baseline.length, BENCH_DOCS.length);
  assert.deepEqual(
    ablated.map((i) => i.index),
    baseline.map((i) => i.index),
  );
  const right = (items: Item[]) => items.filter((i) => i.prediction === i.target).length;
  const p0 = right(baseline) / baseline.length;
  const pa = right(ablated) / ablated.length;
  let chanceSum = 0;
  for (const item of baseline) chanceSum += 1 / item.choices.length;
  const chance = chanceSum / baseline.length;
  assert.equal(chance, 0.5);
  const cell = cellVariant.benchmarks[0].acc;
  assert.equal(cell.baseline, p0);
  assert.equal(cell.ablated, pa);
  assert.equal(cell.chance, chance);
  // The seed-0 model answers 5 of the 8 documents right: above chance, so the cell has a number.
  assert.ok(p0 > chance, `baseline ${p0} is not above chance: the cell to check has no AIS`);
  assert.equal(cell.ais, (p0 - pa) / (p0 - chance));
  assert.ok(cell.ci.low <= cell.ais && cell.ais <= cell.ci.high, JSON.stringify(cell));
  assert.equal(cell.interval_excludes_0, cell.ci.low > 0 || cell.ci.high < 0);
  // Specificity against the random control at the same k, from its item file; not defined where
  // either side is at or below chance (saturated).
  const randomVariant = profile.variants.find((v: { selection: string; k: number }) => v.selection === "random" && v.k === 0.01);
  const pr = right(await readItems(path.join(modelDir, randomVariant.items_file))) / baseline.length;
  if (pa <= chance || pr <= chance) {
    assert.equal(cell.specificity.value, null);
    assert.match(cell.specificity.reason, /^saturated: not defined/);
  } else assert.equal(cell.specificity.value, (p0 - pa) / (p0 - chance) - (p0 - pr) / (p0 - chance));
  assert.equal(cell.saturated === true, pa <= chance);
  const rightToWrong = baseline.filter((b, i) => b.prediction === b.target && ablated[i]!.prediction !== ablated[i]!.target).length;
  const wrongToRight = baseline.filter((b, i) => b.prediction !== b.target && ablated[i]!.prediction === ablated[i]!.target).length;
  assert.deepEqual(cell.flips, { right_to_wrong: rightToWrong, wrong_to_right: wrongToRight });
  // The cell's p: McNemar's exact test on those flips; starred by its q over the table (BH, 0.05).
  assert.equal(cell.test, "mcnemar");
  assert.equal(cell.p, mcnemarExactP(rightToWrong, wrongToRight));
  assert.equal(cell.significant, cell.q < 0.05);
  assert.deepEqual(profile.stats, { correction: "bh", threshold: 0.05, min_effect: 0.1 });
  assert.equal(pa, p0 - (rightToWrong - wrongToRight) / baseline.length);

  // The runner wrote what PROTOCOL.md lists; the baseline is the unmodified model's.
  for (const file of ["baseline.jsonl", "profile.json", "variants/quantitative-reasoning.top.k1.jsonl", "variants/random.k0.jsonl"]) {
    await fs.access(path.join(modelDir, "runner", file));
  }

  // Resume a finished run: the same job goes back to the runner, which reads every variant back.
  const resumed = await bprof(["run", "--resume", path.basename(runDir), path.join(root, "profile.bprof.yaml")]);
  assert.equal(resumed.exitCode, 0, `bprof run --resume failed:\n${resumed.stderr}\n${resumed.stdout}`);
  assert.match(resumed.stderr, /variant Quantitative Reasoning · top · k 0\.01, n \d+ \(resumed\)/);
  const again = JSON.parse(await fs.readFile(path.join(runDir, "results.json"), "utf8"));
  assert.deepEqual(again.models, results.models);
  assert.equal(again.created, results.created);
});

test(
  "bprof run --resume recomputes only what is missing or cut short, and refuses a run whose inputs changed",
  { timeout: 300_000 },
  async () => {
    const runDir = await onlyRunDir();
    const runner = path.join(runDir, "models", "tiny-llama", "runner");
    const before = JSON.parse(await fs.readFile(path.join(runDir, "results.json"), "utf8"));
    // As if the run had stopped after its third variant: later variants and the manifest are not on disk.
    for (const file of [
      "profile.json",
      "variants/spatial-reasoning.top.k1.jsonl",
      "variants/random.k0.jsonl",
      "variants/random.k1.jsonl",
    ]) {
      await fs.rm(path.join(runner, file));
    }
    const resumed = await bprof(["run", "--resume", runDir]);
    assert.equal(resumed.exitCode, 0, `bprof run --resume failed:\n${resumed.stderr}\n${resumed.stdout}`);
    assert.match(resumed.stderr, /variant Spatial Reasoning · top · k 0\.001, n \d+ \(resumed\)/);
    assert.match(resumed.stderr, /variant Spatial Reasoning · top · k 0\.01, n \d+\n/);
    assert.match(resumed.stderr, /variant random control · k 0\.01, n \d+\n/);
    const after = JSON.parse(await fs.readFile(path.join(runDir, "results.json"), "utf8"));
    assert.deepEqual(after.models, before.models, "a resumed run gives the results of an uninterrupted one");

    // A variant file cut short after it was written (a partial copy, a full disk under another tool):
    // the resume scores that variant again instead of stopping at a line that is not JSON.
    const cut = path.join(runner, "variants/quantitative-reasoning.top.k1.jsonl");
    const whole = await fs.readFile(cut, "utf8");
    await fs.writeFile(cut, whole.slice(0, Math.floor(whole.length / 2)));
    await fs.rm(path.join(runner, "profile.json"));
    const repaired = await bprof(["run", "--resume", runDir]);
    assert.equal(repaired.exitCode, 0, `bprof run --resume failed:\n${repaired.stderr}`);
    assert.match(repaired.stderr, /variants\/quantitative-reasoning\.top\.k1\.jsonl is incomplete \(\d+ of \d+ lines\): scoring it again/);
    assert.match(repaired.stderr, /variant Quantitative Reasoning · top · k 0\.01, n \d+\n/);
    assert.equal(await fs.readFile(cut, "utf8"), whole, "the variant scored again is the one that was cut");
    assert.deepEqual(JSON.parse(await fs.readFile(path.join(runDir, "results.json"), "utf8")).models, before.models);

    // A diagnostic dataset edited since the run started: its job would differ, so no resume.
    const file = path.join(root, "diag", "spatial.diag.jsonl");
    await fs.appendFile(
      file,
      JSON.stringify({ id: "spatial-9", ability: SPATIAL, context: "", question: "Is up above down?", choices: ["yes", "no"], answer: 0 }) +
        "\n",
    );
    const refused = await bprof(["run", "--resume", runDir]);
    assert.equal(refused.exitCode, 2);
    assert.match(refused.stderr, /bprof: cannot resume model `tiny-llama`: the job compiled from the config now differs from .*job\.json/);

    const missing = await bprof(["run", "--resume", "20000101-000000-abcd", path.join(root, "profile.bprof.yaml")]);
    assert.equal(missing.exitCode, 2);
    assert.match(missing.stderr, /no run folder `20000101-000000-abcd` in the output folder of/);
  },
);

test(
  "top_chunked with the real runner: the released code's chunked sets beside the exact top sets, compared in results.json and the report",
  { timeout: 300_000 },
  async () => {
    // the tiny model has far fewer than a million candidates: one chunk, so each chunked set is the
    // exact top of ceil(n / candidates x candidates) weights and holds all n of the exact top set
    const project = await makeProfileProject({
      config: CONFIG_YAML.replace("selections: [top, random]", "selections: [top, top_chunked, random]"),
    });
    try {
      const result = await bprof(["run", project.configPath]);
      assert.equal(result.exitCode, 0, `bprof run failed:\n${result.stderr}\n${result.stdout}`);
      assert.match(result.stdout, /^Quantitative Reasoning \(top, chunked\)\s/m);
      assert.match(result.stdout, /^top_chunked \(the released code's chunked rule\) against the exact top n = \d+ at k = 0\.01:$/m);
      const runs = await fs.readdir(path.join(project.root, ".bprof", "runs"));
      const runDir = path.join(project.root, ".bprof", "runs", runs[0]!);
      const results = JSON.parse(await fs.readFile(path.join(runDir, "results.json"), "utf8"));
      const profile = results.models[0].profile;
      assert.deepEqual(profile.selections, ["top", "top_chunked", "random"]);
      const chunked = profile.variants.filter((v: { selection: string }) => v.selection === "top_chunked");
      assert.equal(chunked.length, 4);
      for (const v of chunked) {
        const n = Math.floor(v.k * project.parameters);
        assert.equal(v.exact_top.n, n);
        assert.ok(v.n === n || v.n === n + 1, JSON.stringify(v));
        assert.equal(v.exact_top.shared, n);
        assert.equal(v.exact_top.jaccard, n / v.n);
        assert.ok(v.lowering >= 0 && v.lowering <= v.n);
        // a set of the same weights (or one more) damages the benchmark like the exact top set, or nearly
        assert.equal(typeof v.benchmarks[0].acc.ablated, "number");
      }
      const report = await bprof(["report", runDir, "--format", "md", "--out", "-"]);
      assert.equal(report.exitCode, 0, report.stderr);
      assert.match(report.stdout, /\*\*Chunked selection against the exact top n\*\*/);
      assert.match(report.stdout, /\| Spatial Reasoning \| \d+ \| \d+ \| \d+ \| (1\.000|0\.9\d\d) \|/);
    } finally {
      await fs.rm(project.root, { recursive: true, force: true });
    }
  },
);

test(
  "ablation.stability with the real runner: each ability's halves in results.json and the report, the same profile otherwise, and the ability's health hover reads it",
  { timeout: 300_000 },
  async () => {
    const plain = await makeProfileProject();
    const halves = await makeProfileProject({ config: CONFIG_YAML.replace("  batch_size: 2\n", "  batch_size: 2\n  stability: true\n") });
    try {
      const resultsOf = async (project: { root: string; configPath: string }) => {
        const result = await bprof(["run", project.configPath]);
        assert.equal(result.exitCode, 0, `bprof run failed:\n${result.stderr}\n${result.stdout}`);
        const runs = await fs.readdir(path.join(project.root, ".bprof", "runs"));
        const runDir = path.join(project.root, ".bprof", "runs", runs[0]!);
        return { runDir, stdout: result.stdout, results: JSON.parse(await fs.readFile(path.join(runDir, "results.json"), "utf8")) };
      };
      const without = await resultsOf(plain);
      const withHalves = await resultsOf(halves);
      assert.equal(without.results.models[0].profile.stability, undefined);
      const stability = withHalves.results.models[0].profile.stability;
      // 4 and 3 diagnostic items: halves of 2 + 2 and 1 + 2, drawn with the seed
      assert.deepEqual(
        stability.map((s: { ability: string; halves: number[] }) => [s.ability, s.halves]),
        [
          [QUANT, [2, 2]],
          [SPATIAL, [1, 2]],
        ],
      );
      for (const s of stability) {
        assert.deepEqual(
          s.by_k.map((x: { k: number }) => x.k),
          K,
        );
        for (const x of s.by_k) {
          assert.equal(x.n, Math.floor(x.k * halves.parameters));
          assert.ok(x.shared >= 0 && x.shared <= x.n);
          assert.equal(x.jaccard, x.shared / (2 * x.n - x.shared));
        }
      }
      // measuring it changes nothing else: the same scores for every variant
      const cells = (r: { models: { profile: { variants: { benchmarks: { acc: unknown }[] }[] } }[] }) =>
        r.models[0]!.profile.variants.map((v) => v.benchmarks[0]!.acc);
      assert.deepEqual(cells(withHalves.results), cells(without.results));
      assert.match(withHalves.stdout, /^ranking stability at k = 0\.01: the top n = \d+ of two halves of each ability's items:$/m);
      const report = await bprof(["report", withHalves.runDir, "--format", "md", "--out", "-"]);
      assert.equal(report.exitCode, 0, report.stderr);
      assert.match(report.stdout, /\| Quantitative Reasoning \| 2 \+ 2 \| \d+ \| [01]\.\d{3} \|/);

      // the ability's hover in the editor: the run's measurement in place of the rule of thumb on the count
      const model = new WorkspaceModel();
      model.filesFound([halves.configPath]);
      await model.update();
      const service = new WorkspaceService(model);
      service.setRoots([halves.root]);
      const config = await fs.readFile(halves.configPath, "utf8");
      const before = config.slice(0, config.indexOf(SPATIAL) + 2).split("\n");
      const hover = await service.hover(halves.configPath, { line: before.length - 1, character: before.at(-1)!.length });
      const jaccard = stability[1].by_k[1].jaccard as number;
      assert.ok(
        hover!.markdown.includes(
          `3 items: an ${jaccard >= 0.5 ? "" : "un"}stable ranking, as measured: the top sets of two halves (1 + 2 items) ` +
            `have Jaccard index ${jaccard.toFixed(3)} at k = 0.01 (run ${withHalves.results.run_id}, model tiny-llama)`,
        ),
        hover!.markdown,
      );

      // the dataset check too: the measured verdict in place of the count's warning (3 and 4 items, below 200)
      const abilities = model.configState(halves.configPath)!.loaded.resolved.abilities;
      for (const [i, ability] of abilities.entries()) {
        const codes = ability.files.flatMap((f) => model.problemsOf(f)).filter((p) => p.message.includes(ability.name));
        const stable = (stability[i].by_k.at(-1).jaccard as number) >= 0.5;
        assert.deepEqual(
          codes.map((p) => p.code),
          stable ? [] : ["diag.unstable-ranking"],
          `${ability.name}: ${codes.map((p) => p.message).join("; ")}`,
        );
      }
      // a run that measured nothing leaves the count's warning
      const unmeasured = new WorkspaceModel();
      unmeasured.filesFound([plain.configPath]);
      await unmeasured.update();
      const plainAbilities = unmeasured.configState(plain.configPath)!.loaded.resolved.abilities;
      assert.ok(plainAbilities.every((a) => a.files.flatMap((f) => unmeasured.problemsOf(f)).some((p) => p.code === "diag.too-few-items")));
    } finally {
      await fs.rm(plain.root, { recursive: true, force: true });
      await fs.rm(halves.root, { recursive: true, force: true });
    }
  },
);

test(
  "ablation.method [paper, signed] with the real runner: one run gives each rule's profile, cell for cell as a run of that rule alone, side by side in the reports",
  { timeout: 300_000 },
  async () => {
    const withRule = (rule: string) => CONFIG_YAML.replace("  batch_size: 2\n", `  batch_size: 2\n  method: ${rule}\n`);
    const projects = {
      paper: await makeProfileProject({ config: withRule("paper") }),
      signed: await makeProfileProject({ config: withRule("signed") }),
      both: await makeProfileProject({ config: withRule("[paper, signed]") }),
    };
    try {
      const runOf = async (project: { root: string; configPath: string }) => {
        const result = await bprof(["run", project.configPath]);
        assert.equal(result.exitCode, 0, `bprof run failed:\n${result.stderr}\n${result.stdout}`);
        const runs = await fs.readdir(path.join(project.root, ".bprof", "runs"));
        const runDir = path.join(project.root, ".bprof", "runs", runs[0]!);
        return { runDir, stdout: result.stdout, results: JSON.parse(await fs.readFile(path.join(runDir, "results.json"), "utf8")) };
      };
      const paper = await runOf(projects.paper);
      const signed = await runOf(projects.signed);
      const both = await runOf(projects.both);
      const job = JSON.parse(await fs.readFile(path.join(both.runDir, "models", "tiny-llama", "job.json"), "utf8"));
      assert.deepEqual(job.ablation.method, ["paper", "signed"]);

      // each rule's profile is the profile of a run of that rule alone, but for the files' names
      type Profile = { method: string; variants: { ability: string | null; items_file: string; scores_file: string }[] };
      const withoutFiles = (p: Profile) => ({
        ...p,
        variants: p.variants.map(({ items_file: _items, scores_file: _scores, ...rest }) => rest),
      });
      const model = both.results.models[0];
      assert.equal(model.profile.method, "paper");
      assert.equal(model.other_methods.length, 1);
      assert.equal(model.other_methods[0].method, "signed");
      assert.deepEqual(withoutFiles(model.profile), withoutFiles(paper.results.models[0].profile));
      assert.deepEqual(withoutFiles(model.other_methods[0]), withoutFiles(signed.results.models[0].profile));
      assert.equal(paper.results.models[0].other_methods, undefined);
      // the signed rule's files carry its name; the random control is one file shared by both
      assert.ok(model.other_methods[0].variants.some((v: { items_file: string }) => v.items_file.includes(".signed.top.")));
      const randomFiles = (p: Profile) => p.variants.filter((v) => v.ability === null).map((v) => v.items_file);
      assert.deepEqual(randomFiles(model.other_methods[0]), randomFiles(model.profile));

      // the terminal and the Markdown report put the rules side by side
      assert.match(both.stdout, /AIS \(acc\) at k = 0\.01 \(n = \d+ of \d+ parameters, signed importance\)/);
      const report = await bprof(["report", both.runDir, "--format", "md", "--out", "-"]);
      assert.equal(report.exitCode, 0, report.stderr);
      assert.match(report.stdout, /### The importance rules side by side/);
      assert.match(report.stdout, /^\| paper \| – \| \d+\.\d% \|$/m);
      assert.match(report.stdout, /^\| signed \| – \| 0\.0% \|$/m, "no weight of a signed top set lowers its own ability's loss");
      assert.match(report.stdout, /### k = 0\.01, signed rule/);
    } finally {
      for (const p of Object.values(projects)) await fs.rm(p.root, { recursive: true, force: true });
    }
  },
);
