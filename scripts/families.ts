// `npm run families`: writes src/core/model/families.json, the runner's family table (its
// `--families`), from which the editor and `bprof validate` count parameters. Run it after changing
// the table in native-runner/src/config.cpp; test/integration/familyTable.test.ts fails while the
// committed copy differs from the built runner's. The runner: BPROF_RUNNER, else the checkout's build.
import { execa } from "execa";
import { promises as fs } from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
export const familiesFile = path.join(repoRoot, "src", "core", "model", "families.json");

/** The family table the runner at `runner` prints. */
export async function runnerFamilies(runner: string): Promise<string> {
  const run = await execa(runner, ["--families"], { reject: false, timeout: 60_000 });
  if (run.exitCode !== 0) throw new Error(`${runner} --families failed (exit ${run.exitCode}): ${run.stderr.trim()}`);
  return run.stdout.endsWith("\n") ? run.stdout : `${run.stdout}\n`;
}

async function main(): Promise<void> {
  const runner = process.env.BPROF_RUNNER ?? path.join(repoRoot, "native-runner", "build", "bprof-runner");
  await fs.writeFile(familiesFile, await runnerFamilies(runner));
  console.log(`families: ${path.relative(repoRoot, familiesFile)} written from ${runner}`);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await main();
