// `bprof validate` says each benchmark's power, through the bundled CLI: the smallest AIS it
// detects at the config's confidence and 80% power (stdout), and a `config.low-power` warning at
// the entry of a benchmark that cannot detect `stats.min_effect` (stderr; exit 0 all the same).
// Before a run the baseline is assumed and said to be; once a run has finished, it is the run's.
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, before, test } from "node:test";
import { documentsToDetect } from "../../src/core/analysis/power";
import { bprof } from "../support/cli";
import { makeTinyProject, TINY_BENCHMARK_DOCS, writeScoredRun, type TinyProject } from "../support/tinyProject";

const CHANCE = TINY_BENCHMARK_DOCS.reduce((s, d) => s + 1 / d.choices.length, 0) / TINY_BENCHMARK_DOCS.length;

let project: TinyProject;
before(async () => {
  project = await makeTinyProject(await fs.mkdtemp(path.join(os.tmpdir(), "bprof-validate-power-")));
  await fs.appendFile(project.configPath, "stats: { min_effect: 0.1 }\n");
});
after(async () => fs.rm(project.root, { recursive: true, force: true }));

test("bprof validate prints each benchmark's power and warns at a 3-document benchmark's entry, exit 0", async () => {
  const assumed = await bprof(["validate", project.configPath]);
  assert.equal(assumed.exitCode, 0, assumed.stderr);
  assert.match(assumed.stdout, /: ok$/m);
  assert.match(
    assumed.stdout,
    /^power: tiny_mc \(3 documents, baseline unknown, assumed 0\.653 halfway between chance and 1; chance 0\.306\): detects no AIS up to 1 at 95% confidence and 80% power$/m,
  );
  const needed = documentsToDetect({ baseline: (CHANCE + 1) / 2, chance: CHANCE }, 0.1);
  const warning = `${project.configPath}:6:5: warning: benchmark \`tiny_mc\` cannot detect an AIS of 0.1 (\`stats.min_effect\`) at 95% confidence and 80% power: its 3 documents detect no AIS up to 1 at a baseline assumed halfway between chance 0.306 and 1 (0.653: no finished run has scored it); it would need ${needed} documents (field benchmarks[0]) [config.low-power]`;
  assert.deepEqual(
    assumed.stderr.split("\n").filter((l) => l !== ""),
    [warning],
  );

  // once a run has scored it, the figure and the warning are at the run's baseline
  const runId = "20261201-000000-abcd";
  await writeScoredRun(project.configPath, runId, [
    { name: "tiny-llama", benchmarks: [{ name: "tiny_mc", items: 3, acc: 2 / 3, chance: CHANCE }] },
  ]);
  const scored = await bprof(["validate", project.configPath]);
  assert.equal(scored.exitCode, 0, scored.stderr);
  assert.match(
    scored.stdout,
    new RegExp(
      `^power: tiny_mc \\(3 documents, baseline acc 0\\.667 from run ${runId}; chance 0\\.306\\): detects no AIS up to 1 at 95% confidence and 80% power$`,
      "m",
    ),
  );
  assert.match(
    scored.stderr,
    new RegExp(
      `its 3 documents detect no AIS up to 1 at the baseline acc 0\\.667 of run ${runId} \\(chance 0\\.306\\); it would need ${documentsToDetect({ baseline: 2 / 3, chance: CHANCE }, 0.1)} documents \\(field benchmarks\\[0\\]\\) \\[config\\.low-power\\]$`,
      "m",
    ),
  );
});
