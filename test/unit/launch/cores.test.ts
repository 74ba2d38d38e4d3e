// The cores a local runner may use: the process's affinity under its cgroup's CPU quota, read from
// fake /proc and /sys trees (v2's cpu.max, v1's cfs quota under a container's mount root).
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { test } from "node:test";
import { cgroupCpuLimit, usableCores } from "../../../src/core/launch/cores";

async function fakeRoot(cgroup: string, mountinfo: string, files: Record<string, string>): Promise<string> {
  const root = await fs.mkdtemp(path.join(os.tmpdir(), "bprof-cgroup-"));
  await fs.mkdir(path.join(root, "proc/self"), { recursive: true });
  await fs.writeFile(path.join(root, "proc/self/cgroup"), cgroup);
  await fs.writeFile(path.join(root, "proc/self/mountinfo"), mountinfo);
  for (const [name, content] of Object.entries(files)) {
    await fs.mkdir(path.dirname(path.join(root, name)), { recursive: true });
    await fs.writeFile(path.join(root, name), content);
  }
  return root;
}

test("cgroup v2: the lowest cpu.max along the cgroup's path", async () => {
  const root = await fakeRoot("0::/user.slice/job\n", "30 1 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n", {
    "sys/fs/cgroup/user.slice/job/cpu.max": "max 100000\n",
    "sys/fs/cgroup/user.slice/cpu.max": "150000 100000\n",
    "sys/fs/cgroup/cpu.max": "400000 100000\n",
  });
  assert.equal(await cgroupCpuLimit(root), 1.5);
  await fs.writeFile(path.join(root, "sys/fs/cgroup/user.slice/cpu.max"), "max 100000\n");
  assert.equal(await cgroupCpuLimit(root), 4);
  await fs.writeFile(path.join(root, "sys/fs/cgroup/cpu.max"), "max 100000\n");
  assert.equal(await cgroupCpuLimit(root), 0);
  await fs.rm(root, { recursive: true, force: true });
});

test("cgroup v1: the cfs quota under a container's mount of the cpu controller; none without files", async () => {
  const root = await fakeRoot(
    "5:memory:/docker/abc\n4:cpu,cpuacct:/docker/abc\n0::/\n",
    "40 31 0:29 /docker/abc /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n" +
      "41 31 0:30 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n",
    {
      "sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us": "300000\n",
      "sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us": "100000\n",
      "sys/fs/cgroup/unified/cpu.max": "100000 100000\n",
    },
  );
  assert.equal(await cgroupCpuLimit(root), 3);
  await fs.writeFile(path.join(root, "sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us"), "-1\n");
  assert.equal(await cgroupCpuLimit(root), 0);
  await fs.rm(root, { recursive: true, force: true });
  assert.equal(await cgroupCpuLimit(path.join(os.tmpdir(), "bprof-no-such-root")), 0);
});

test("this process may use at least one core and no more than its affinity allows", async () => {
  const cores = await usableCores();
  assert.ok(cores >= 1 && cores <= os.availableParallelism(), String(cores));
});
