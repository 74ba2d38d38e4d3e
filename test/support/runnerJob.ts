// A job for bprof-runner run straight, without a profile's planning: the tests that train a small
// model (the demo's second model, a Mixtral) and profile it write the job and launch it as `bprof
// run` launches the runner on this machine (core's runLocal).
import { promises as fs } from "node:fs";
import { runLocal } from "../../src/core/launch/local";
import { runnerPath } from "./cli";

/** Runs `bprof-runner <subcommand>` on the CPU on this job into `out`, its job file beside it; a failure throws the runner's error. */
export async function runRunnerJob(subcommand: "train" | "profile", job: object, out: string): Promise<void> {
  const jobFile = `${out}.job.json`;
  await fs.writeFile(jobFile, JSON.stringify({ protocol: 1, subcommand, device: "cpu", ...job }));
  // One thread: the demo model was trained on one (the same job gives the same bytes), and a model
  // this small trains in seconds on one, far slower with threads that wait for busy cores.
  await runLocal({ runnerPath, subcommand, jobFile, outDir: out, threads: 1 });
}
