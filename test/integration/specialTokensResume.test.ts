// A run tokenized without the tokenizer's special tokens (as every run was before bprof followed
// lm-eval 0.4.10's rule) is not resumed under the new rule with its figures silently mixed: the
// resume is refused with the reason, and add_bos_token: false resumes it as it was.
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, test } from "node:test";
import { bprof, repoRoot } from "../support/cli";
import { runDirOf } from "../support/runFolder";

const demo = path.join(repoRoot, "media", "demo");
let work: string | undefined;
after(() => (work ? fs.rm(work, { recursive: true, force: true }) : undefined));

test("resuming a run made without BOS says why it cannot mix the two; add_bos_token: false resumes it", { timeout: 240_000 }, async () => {
  work = await fs.mkdtemp(path.join(os.tmpdir(), "bprof-bos-resume-"));
  const config = path.join(work, "old.bprof.yaml");
  await fs.writeFile(
    config,
    [
      "models:",
      `  - path: ${JSON.stringify(path.join(demo, "model"))}`,
      "    name: demo",
      "    add_bos_token: false",
      "benchmarks:",
      `  - task: ${JSON.stringify(path.join(demo, "benchmarks", "demo_deductive.yaml"))}`,
      "    limit: 2",
      "",
    ].join("\n"),
  );
  const run = await bprof(["run", config], { cwd: work });
  assert.equal(run.exitCode, 0, run.stderr);
  const runDir = runDirOf(run.stdout);
  const results = JSON.parse(await fs.readFile(path.join(runDir, "results.json"), "utf8")) as { models: { special_tokens: unknown }[] };
  assert.deepEqual(results.models[0]!.special_tokens, { before: [], after: [], source: "add_bos_token" });

  // The run's own config, as a run from before the rule has it: no add_bos_token.
  const snapshot = path.join(runDir, "config.bprof.yaml");
  const withKey = await fs.readFile(snapshot, "utf8");
  await fs.writeFile(snapshot, withKey.replace(/^\s*add_bos_token: false\n/m, ""));
  const refused = await bprof(["run", "--resume", runDir], { cwd: work });
  assert.notEqual(refused.exitCode, 0);
  assert.match(
    refused.stderr,
    /tokenized without the tokenizer's special tokens \(BOS\).*set `add_bos_token: false` on the model to resume it as it was/s,
  );

  await fs.writeFile(snapshot, withKey);
  const resumed = await bprof(["run", "--resume", runDir], { cwd: work });
  assert.equal(resumed.exitCode, 0, resumed.stderr);
});
