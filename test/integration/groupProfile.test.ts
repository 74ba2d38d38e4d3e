// An lm-eval group named by name in a profiling config, end to end with the real runner: two tasks
// of different sizes under a group with aggregate_metric_list (acc weighted by size) -> one
// benchmark per task and the group in results.json, its AIS recomputed by hand from the per-item
// files -> its column in `bprof report` read from the run folder.
import assert from "node:assert/strict";
import { parse as parseCsv } from "csv-parse/sync";
import { promises as fs } from "node:fs";
import * as path from "node:path";
import { after, before, test } from "node:test";
import type { Results } from "../../src/core/results/schema";
import { bprof } from "../support/cli";
import { BENCH_DOCS, CONFIG_YAML, makeProfileProject, TASK_YAML } from "../support/profileProject";

let root: string;

before(async () => {
  const config = CONFIG_YAML.replace(
    "benchmarks:\n  - task: ./tasks/tiny_yes.yaml",
    "task_paths: [./lm-tasks]\nbenchmarks:\n  - task: tiny_pair",
  );
  ({ root } = await makeProfileProject({
    config,
    extraFiles: {
      "lm-tasks/tiny_yes.yaml": TASK_YAML,
      "lm-tasks/tiny_yes.jsonl": BENCH_DOCS.map((d) => JSON.stringify(d)).join("\n") + "\n",
      "lm-tasks/tiny_few.yaml": TASK_YAML.replace(/tiny_yes/g, "tiny_few"),
      "lm-tasks/tiny_few.jsonl":
        BENCH_DOCS.slice(0, 5)
          .map((d) => JSON.stringify(d))
          .join("\n") + "\n",
      "lm-tasks/_tiny_pair.yaml":
        "group: tiny_pair\ntask: [tiny_yes, tiny_few]\naggregate_metric_list:\n  - metric: acc\n    weight_by_size: true\n",
    },
  }));
});
after(async () => fs.rm(root, { recursive: true, force: true }));

interface Item {
  benchmark: string;
  target: number;
  prediction: number;
}

async function correctness(file: string): Promise<number[]> {
  return (await fs.readFile(file, "utf8"))
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as Item)
    .map((i) => (i.prediction === i.target ? 1 : 0));
}

test(
  "a group with aggregate_metric_list is profiled as its tasks and scored as a whole, in results.json and the reports",
  { timeout: 300_000 },
  async () => {
    const result = await bprof(["run", path.join(root, "profile.bprof.yaml")]);
    assert.equal(result.exitCode, 0, `bprof run failed:\n${result.stderr}\n${result.stdout}`);
    assert.match(result.stdout, /tiny_pair \(group: 2 tasks, weighted by documents\)\s+acc /);
    const [runId] = await fs.readdir(path.join(root, ".bprof", "runs"));
    const runDir = path.join(root, ".bprof", "runs", runId!);
    const results = JSON.parse(await fs.readFile(path.join(runDir, "results.json"), "utf8")) as Results;
    const model = results.models[0]!;
    assert.deepEqual(
      model.benchmarks.map((b) => [b.name, b.items]),
      [
        ["tiny_yes", 8],
        ["tiny_few", 5],
      ],
    );
    assert.deepEqual(
      model.groups!.map((g) => [g.name, g.tasks, g.aggregates.map((a) => [a.metric, a.filter, a.weight_by_size, a.items])]),
      [["tiny_pair", ["tiny_yes", "tiny_few"], [["acc", "none", true, 13]]]],
    );

    // Weighted by size, the group's acc is the mean over all 13 documents, before and after.
    const modelDir = path.join(runDir, "models", "tiny-llama");
    const before = await correctness(path.join(modelDir, "items.jsonl"));
    const mean = (v: number[]) => v.reduce((s, x) => s + x, 0) / v.length;
    assert.ok(Math.abs(model.groups![0]!.aggregates[0]!.score - mean(before)) < 1e-12);
    for (const v of model.profile!.variants) {
      const cell = v.groups!.find((g) => g.name === "tiny_pair")!.acc!;
      const after = mean(await correctness(path.join(modelDir, v.items_file)));
      assert.ok(Math.abs(cell.ablated - after) < 1e-12, `${v.ability} ${v.k}`);
      const ais = cell.baseline - cell.chance > 1e-12 ? (mean(before) - after) / (mean(before) - 0.5) : null;
      assert.ok(ais === null ? cell.ais === null : Math.abs(cell.ais! - ais) < 1e-9, `${v.ability} ${v.k}: ${cell.ais} vs ${ais}`);
    }

    const md = await bprof(["report", runDir, "--format", "md", "--out", "-"]);
    assert.equal(md.exitCode, 0, md.stderr);
    assert.match(md.stdout, /\| ability \| tiny\\_yes \| tiny\\_few \| tiny\\_pair \(group: 2 tasks\) \|/);
    const csv = await bprof(["report", runDir, "--format", "csv", "--out", "-"]);
    const rows = parseCsv(csv.stdout, { columns: true }) as Record<string, string>[];
    assert.ok(rows.some((r) => r.benchmark === "tiny_pair" && r.metric === "acc" && r.items === "13" && r.group_tasks === "2"));
  },
);
