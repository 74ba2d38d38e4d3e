// The baselines the power figures start from once a config has run (src/core/run/baselines.ts):
// the newest finished run of the config whose results read, each benchmark's acc or exact_match
// and chance per model.
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { test } from "node:test";
import { newestBaselines } from "../../../src/core/run/baselines";
import { writeScoredRun } from "../../support/tinyProject";

test("the newest finished run of the config that reads gives the baselines; none before a run", async (t) => {
  const root = await fs.mkdtemp(path.join(os.tmpdir(), "bprof-baselines-"));
  t.after(() => fs.rm(root, { recursive: true, force: true }));
  const config = path.join(root, "x.bprof.yaml");
  const other = path.join(root, "other.bprof.yaml");
  await fs.writeFile(config, "models: []\nbenchmarks: []\n");
  await fs.writeFile(other, "models: []\nbenchmarks: []\n");
  assert.equal(await newestBaselines(config), undefined, "no run yet");

  await writeScoredRun(config, "20261201-000000-aaaa", [
    {
      name: "m",
      benchmarks: [
        { name: "arc", items: 100, acc: 0.7, chance: 0.25 },
        { name: "gsm8k", items: 1319, exact_match: 0.412 },
      ],
    },
    { name: "m2", benchmarks: [{ name: "arc", items: 100, acc: 0.5, chance: 0.25 }] },
  ]);
  // newer, but not a finished run of this config: damaged, unfinished, another config's
  const damaged = await writeScoredRun(config, "20261202-000000-bbbb", [{ name: "m", benchmarks: [] }]);
  await fs.writeFile(path.join(damaged, "results.json"), "{ not json");
  const unfinished = await writeScoredRun(config, "20261203-000000-cccc", [{ name: "m", benchmarks: [] }]);
  await fs.rm(path.join(unfinished, "results.json"));
  await writeScoredRun(other, "20261204-000000-dddd", [{ name: "m", benchmarks: [{ name: "arc", items: 100, acc: 0.9, chance: 0.25 }] }]);

  assert.deepEqual(await newestBaselines(config), {
    runId: "20261201-000000-aaaa",
    baselines: [
      { benchmark: "arc", model: "m", metric: "acc", baseline: 0.7, chance: 0.25 },
      { benchmark: "gsm8k", model: "m", metric: "exact_match", baseline: 0.412, chance: 0 },
      { benchmark: "arc", model: "m2", metric: "acc", baseline: 0.5, chance: 0.25 },
    ],
  });
  assert.equal((await newestBaselines(other))?.runId, "20261204-000000-dddd");
});
