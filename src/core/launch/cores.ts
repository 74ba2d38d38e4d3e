// How many cores a runner on this machine may use: the process's CPU affinity (what Node's
// availableParallelism counts) capped by its cgroup's CPU quota, as the runner counts them itself
// (native-runner/src/cpus.cpp). The threads of a local run without `threads`, and what local shards
// share.
import { readFile } from "node:fs/promises";
import * as os from "node:os";
import * as path from "node:path";

/** The cores of this process's affinity under its cgroup's CPU quota (rounded up); at least 1. */
export async function usableCores(): Promise<number> {
  const limit = process.platform === "linux" ? await cgroupCpuLimit() : 0;
  const affinity = os.availableParallelism();
  return Math.max(1, limit > 0 ? Math.min(affinity, Math.ceil(limit - 1e-9)) : affinity);
}

/**
 * The CPU quota of this process's cgroup in cores, the lowest along its path up to the mount:
 * cgroup v1's cpu.cfs_quota_us / cpu.cfs_period_us where the cpu controller is mounted as v1, else
 * v2's cpu.max; 0 when there is none. `root` stands for "/" (tests).
 */
export async function cgroupCpuLimit(root = "/"): Promise<number> {
  const cgroups = await readText(path.join(root, "proc/self/cgroup"));
  if (cgroups === undefined) return 0;
  let v1: string | undefined;
  let v2: string | undefined;
  for (const line of cgroups.split("\n")) {
    const match = /^([^:]*):([^:]*):(.*)$/.exec(line);
    if (!match) continue;
    if (match[2]!.split(",").includes("cpu")) v1 = match[3];
    else if (match[1] === "0" && match[2] === "") v2 = match[3];
  }
  const cgroupPath = v1 ?? v2;
  if (cgroupPath === undefined) return 0;
  const mount = findMount((await readText(path.join(root, "proc/self/mountinfo"))) ?? "", v1 !== undefined);
  if (!mount) return 0;
  let relative =
    mount.root === "/"
      ? cgroupPath
      : cgroupPath === mount.root || cgroupPath.startsWith(mount.root + "/")
        ? cgroupPath.slice(mount.root.length)
        : "";
  relative = relative.replace(/\/+$/, "");
  let limit = 0;
  for (;;) {
    const here = await folderLimit(path.join(root, mount.point, relative), v1 !== undefined);
    if (here > 0 && (limit === 0 || here < limit)) limit = here;
    if (relative === "") break;
    relative = relative.slice(0, Math.max(0, relative.lastIndexOf("/")));
  }
  return limit;
}

function findMount(mountinfo: string, v1: boolean): { root: string; point: string } | undefined {
  for (const line of mountinfo.split("\n")) {
    const fields = line.split(" ");
    const dash = fields.indexOf("-");
    if (dash < 5 || fields.length < dash + 4) continue;
    if (fields[dash + 1] !== (v1 ? "cgroup" : "cgroup2")) continue;
    if (v1 && !fields[dash + 3]!.split(",").includes("cpu")) continue;
    return { root: unescape(fields[3]!), point: unescape(fields[4]!) };
  }
  return undefined;
}

/** mountinfo writes a space, tab, newline or backslash in a path as \ and three octal digits. */
function unescape(s: string): string {
  return s.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)));
}

async function folderLimit(dir: string, v1: boolean): Promise<number> {
  let quota: number;
  let period: number;
  if (v1) {
    quota = Number((await readText(path.join(dir, "cpu.cfs_quota_us")))?.trim());
    period = Number((await readText(path.join(dir, "cpu.cfs_period_us")))?.trim());
  } else {
    const [q, p] = ((await readText(path.join(dir, "cpu.max"))) ?? "").trim().split(/\s+/);
    if (q === undefined || q === "" || q === "max") return 0;
    quota = Number(q);
    period = p === undefined ? 100000 : Number(p);
  }
  return quota > 0 && period > 0 ? quota / period : 0;
}

async function readText(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, "utf8");
  } catch {
    return undefined;
  }
}
