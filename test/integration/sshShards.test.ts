// Shards on a host over SSH (a real sshd on 127.0.0.1): 3 runners side by side there, each in its
// own folder of the remote workdir, their output copied back; the merge gathers their files on the
// host and runs the whole job there. The results equal the unsharded run's over the same host, cell
// for cell and file for file.
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, before, test } from "node:test";
import { bprof, runnerPath } from "../support/cli";
import { CONFIG_YAML, makeProfileProject } from "../support/profileProject";
import { startSshServer, type SshServer } from "../support/sshServer";
import { filesUnder } from "../support/files";
import { resultsOf, runDirOf } from "../support/runFolder";

let server: SshServer;
let root: string;
let remote: string;

before(async () => {
  remote = await fs.mkdtemp(path.join(os.tmpdir(), "bprof-remote-"));
  server = await startSshServer();
  ({ root } = await makeProfileProject());
});
after(async () => {
  await server?.stop();
  await fs.rm(root, { recursive: true, force: true });
  await fs.rm(remote, { recursive: true, force: true });
});

/** The shared config on the SSH host, with `extra` lines. */
async function writeConfig(name: string, extra: string): Promise<string> {
  const options = Object.entries(server.options).map(([k, v]) => `      ${k}: ${JSON.stringify(v)}`);
  const target = [
    "target:",
    "  ssh:",
    "    host: 127.0.0.1",
    `    port: ${server.port}`,
    `    identity_file: ${JSON.stringify(server.identityFile)}`,
    `    runner: ${JSON.stringify(runnerPath)}`,
    `    workdir: ${JSON.stringify(path.join(remote, "runs"))}`,
    "    options:",
    ...options,
    "",
  ].join("\n");
  const file = path.join(root, name);
  await fs.writeFile(file, `${CONFIG_YAML}output: .bprof-${name}\n${extra}${target}`);
  return file;
}

test("3 shards side by side on a host over SSH give the unsharded run's results there", { timeout: 240_000 }, async () => {
  const one = await bprof(["run", await writeConfig("one.bprof.yaml", "threads: 1\n")]);
  assert.equal(one.exitCode, 0, `bprof run failed:\n${one.stderr}`);
  const sharded = await bprof(["run", await writeConfig("sharded.bprof.yaml", "threads: 3\nshards: 3\n")]);
  assert.equal(sharded.exitCode, 0, `bprof run failed:\n${sharded.stderr}`);
  assert.match(sharded.stderr, /^tiny-llama: 3 shards, 1 thread each$/m);
  assert.match(sharded.stderr, /^tiny-llama variants 6\/6$/m);

  const [a, b] = [runDirOf(one.stdout), runDirOf(sharded.stdout)];
  assert.deepEqual(await resultsOf(b), await resultsOf(a));
  const runner = (dir: string) => path.join(dir, "models", "tiny-llama", "runner");
  assert.deepEqual(await filesUnder(runner(b)), await filesUnder(runner(a)));
  // on the host: a folder per shard, and the merged runner folder the results came from
  const onHost = path.join(remote, "runs", path.basename(b), "models", "tiny-llama");
  for (const i of [0, 1, 2]) assert.ok((await fs.readdir(path.join(onHost, "shards", String(i), "runner"))).includes("shard.json"));
  assert.ok((await fs.readdir(path.join(onHost, "runner"))).includes("profile.json"));
});
