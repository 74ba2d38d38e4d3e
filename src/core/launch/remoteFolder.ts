// A model's folder of a run on a target host: created, given the job, and copied back from.
import { execa } from "execa";
import { promises as fs } from "node:fs";
import * as path from "node:path";
import { hostCommand, hostName, hostPathWord, runOnHostOrFail, shellWord, type Host } from "../base/host";
import { RunnerError } from "../base/runnerError";
import type { ConfinedFolder } from "../base/confinedFolder";

export interface RemoteFolder {
  host: Host;
  /** Absolute path on the host. */
  dir: string;
  /** The remote user's home, for model paths written ~/... */
  home: string;
  /** A folder on this machine that the target reads in place (Slurm with a shared file system): written through this. */
  local?: ConfinedFolder;
}

/** Creates <workdir>/<runPath>/runner on the host and says where it is. */
export async function prepareRemoteFolder(host: Host, workdir: string, runPath: string): Promise<RemoteFolder> {
  const dir = `${hostPathWord(workdir)}/${shellWord(runPath)}`;
  const out = await runOnHostOrFail(host, `mkdir -p ${dir}/runner && cd ${dir} && printf '%s\\n' "$HOME" "$(pwd -P)"`, {
    what: `create the run folder ${workdir}/${runPath}`,
  });
  const [home, absolute] = out.split("\n");
  if (!home || !absolute)
    throw new RunnerError(
      "target_failed",
      `unexpected answer from ${hostName(host)} when creating ${workdir}/${runPath}: ${JSON.stringify(out)}`,
    );
  return { host, dir: absolute, home };
}

/**
 * Copies job.json to the host through a temporary name. A model path written ~/... becomes the
 * remote home's, since the runner takes paths literally; the job.json of the run folder keeps
 * what the config says, so a resumed run compiles to the same bytes.
 */
export async function uploadJob(folder: RemoteFolder, jobFile: string, name = "job.json"): Promise<void> {
  const job = JSON.parse(await fs.readFile(jobFile, "utf8")) as { model?: { path?: string } };
  const modelPath = job.model?.path;
  if (typeof modelPath === "string" && (modelPath === "~" || modelPath.startsWith("~/")))
    job.model!.path = folder.home + modelPath.slice(1);
  await uploadText(folder, name, JSON.stringify(job));
}

export async function uploadText(folder: RemoteFolder, name: string, text: string): Promise<void> {
  const file = `${shellWord(folder.dir)}/${shellWord(name)}`;
  // set -C: the temporary is created, never opened through a link or a file already there.
  await runOnHostOrFail(folder.host, `set -C && tmp=${file}.$$.tmp && cat > "$tmp" && mv -f "$tmp" ${file}`, {
    input: text,
    what: `write ${name} to ${folder.dir}`,
  });
}

/** Copies the runner's output folder from the host into `outDir` (a folder of the run `files`), as one tar stream. */
export async function downloadRunnerOutput(folder: RemoteFolder, files: ConfinedFolder, outDir: string): Promise<void> {
  await files.folder(outDir);
  const { file, args } = hostCommand(folder.host, `cd ${shellWord(path.posix.join(folder.dir, "runner"))} && tar -cf - .`);
  const remote = execa(file, args, { reject: false, stdin: "ignore", encoding: "buffer" });
  const local = await remote.pipe("tar", ["-xf", "-", "-C", outDir], { reject: false });
  const sent = await remote;
  if (sent.exitCode !== 0 || local.exitCode !== 0) {
    const why =
      String(Buffer.from(sent.stderr ?? "")).trim() || String(local.stderr ?? "").trim() || `exit ${sent.exitCode}/${local.exitCode}`;
    throw new RunnerError(
      "target_failed",
      `could not copy the runner's output from ${hostName(folder.host)}:${folder.dir}/runner to ${outDir}: ${why}`,
    );
  }
}
