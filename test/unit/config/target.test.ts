// The config's `target`: schema errors with positions, resolution of local paths, the checks that
// change with the target (weights, identity file, remote_path), and the pieces the launchers
// build commands from (shell words, ssh arguments, Slurm job states).
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, before, test } from "node:test";
import { loadProfile } from "../../../src/core/config/load";
import { parseConfig } from "../../../src/core/config/parse";
import { formatProblem } from "../../../src/core/base/problems";
import { hostCommand, hostPathWord, shellWord, sshArguments } from "../../../src/core/base/host";
import { parseJobState } from "../../../src/core/launch/slurm";
import { describeTarget, resolveTarget } from "../../../src/core/config/target";
import { makeTinyProject, withoutLowPower, type TinyProject } from "../../support/tinyProject";

const FILE = "/p/x.bprof.yaml";
const BASE = "models:\n  - path: ./m\nbenchmarks:\n  - task: t.yaml\n";

function schemaErrors(target: string): string[] {
  return parseConfig(BASE + target, FILE).problems.map(formatProblem);
}

test("target: local, ssh or slurm; anything else is an error at the field with what is expected", () => {
  assert.deepEqual(schemaErrors("target: local\n"), []);
  assert.deepEqual(
    schemaErrors(
      "target:\n  ssh:\n    host: gpu1\n    port: 2222\n    options: { StrictHostKeyChecking: accept-new, ServerAliveInterval: 30 }\n",
    ),
    [],
  );
  assert.deepEqual(
    schemaErrors(
      'target:\n  slurm:\n    partition: gpu\n    time: "1-02:00:00"\n    gpus: 1\n    mem: 64G\n    sbatch_args: [--qos=high]\n    ssh: { host: login1 }\n',
    ),
    [],
  );

  assert.deepEqual(schemaErrors("target: cluster\n"), [
    "/p/x.bprof.yaml:5:9: error: `target` must be one of: local (field target) [config.not-allowed]",
  ]);
  assert.deepEqual(schemaErrors("target:\n  shh:\n    host: a\n"), [
    "/p/x.bprof.yaml:6:3: error: unknown key `shh`; did you mean `ssh`? (field target.shh) [config.unknown-key]",
  ]);
  assert.deepEqual(schemaErrors("target:\n  ssh:\n    port: 22\n"), [
    "/p/x.bprof.yaml:7:5: error: `target.ssh` needs the field `host` (field target.ssh.host) [config.missing-field]",
  ]);
  assert.deepEqual(schemaErrors("target:\n  ssh:\n    host: -oProxyCommand=x\n"), [
    "/p/x.bprof.yaml:7:11: error: `target.ssh.host` is invalid: The SSH destination: a host name, user@host, or a Host alias of ~/.ssh/config. (field target.ssh.host) [config.invalid-value]",
  ]);
  assert.deepEqual(schemaErrors("target:\n  slurm:\n    time: two hours\n"), [
    "/p/x.bprof.yaml:7:11: error: `target.slurm.time` is invalid: sbatch --time: minutes, MM:SS, HH:MM:SS or D-HH:MM:SS. (field target.slurm.time) [config.invalid-value]",
  ]);
  assert.equal(schemaErrors("target:\n  ssh: { host: a }\n  slurm: {}\n").length, 1, "one target at a time");
  const relative = parseConfig("models:\n  - path: ./m\n    remote_path: models/x\nbenchmarks:\n  - task: t.yaml\n", FILE).problems.map(
    formatProblem,
  );
  assert.deepEqual(relative, [
    "/p/x.bprof.yaml:3:18: error: `models[0].remote_path` is invalid: With an ssh or slurm target: where this model folder is on the target, absolute or ~/... Default: `path` as resolved on this machine (a shared file system). The folder on this machine then needs only config.json and the tokenizer files, which the prompts are made from. (field models[0].remote_path) [config.invalid-value]",
  ]);
});

test("resolveTarget: local paths against the config's folder, ssh options as ssh spells them, sbatch options in order", () => {
  assert.deepEqual(resolveTarget(undefined, "/p"), { kind: "local" });
  const ssh = resolveTarget(
    { ssh: { host: "gpu1", user: "me", identity_file: "keys/id", options: { ForwardAgent: false, ServerAliveInterval: 30 } } },
    "/p",
  );
  assert.deepEqual(ssh, {
    kind: "ssh",
    host: {
      kind: "ssh",
      connection: { host: "gpu1", user: "me", identityFile: "/p/keys/id", options: { ForwardAgent: "no", ServerAliveInterval: "30" } },
    },
    workdir: ".bprof/runs",
  });
  const named = resolveTarget({ ssh: { host: "gpu1", runner: "~/bprof/bprof-runner" } }, "/p");
  assert.equal(named.kind === "ssh" && named.runner, "~/bprof/bprof-runner", "a runner named is kept as written, for the host to expand");
  const home = resolveTarget({ ssh: { host: "gpu1", identity_file: "~/.ssh/id_ed25519" } }, "/p");
  assert.equal(home.kind === "ssh" && home.host.connection.identityFile, path.join(os.homedir(), ".ssh/id_ed25519"));

  const here = resolveTarget(
    {
      slurm: {
        partition: "gpu",
        time: "02:00:00",
        gpus: 1,
        cpus_per_task: 8,
        mem: "64G",
        account: "lab",
        sbatch_args: ["--qos=high"],
        workdir: "scratch",
      },
    },
    "/p",
  );
  assert.deepEqual(here, {
    kind: "slurm",
    host: { kind: "local" },
    workdir: "/p/scratch",
    sbatchOptions: ["--partition=gpu", "--time=02:00:00", "--gpus=1", "--cpus-per-task=8", "--mem=64G", "--account=lab", "--qos=high"],
    pollSeconds: 5,
    cpusPerTask: 8,
  });
  const viaLogin = resolveTarget({ slurm: { ssh: { host: "login1" } } }, "/p");
  assert.equal(viaLogin.kind === "slurm" && viaLogin.runner, undefined, "no runner named: bprof builds one on the submit host");
  assert.equal(viaLogin.kind === "slurm" && viaLogin.workdir, ".bprof/runs", "over SSH the workdir is in the remote home");
  assert.equal(describeTarget(ssh), "gpu1 over SSH".replace("gpu1", "me@gpu1"));
  assert.equal(describeTarget(viaLogin), "Slurm on login1");
  assert.equal(describeTarget(here), "Slurm on this machine");
});

test("shell words and ssh arguments: plain words stay plain, everything else is quoted; BatchMode always", () => {
  assert.equal(shellWord("/opt/bprof/bprof-runner"), "/opt/bprof/bprof-runner");
  assert.equal(shellWord("my runs"), "'my runs'");
  assert.equal(shellWord("it's; rm -rf /"), `'it'\\''s; rm -rf /'`);
  assert.equal(hostPathWord("~/bprof/runner"), `"$HOME"/bprof/runner`);
  assert.equal(hostPathWord("~/my runs"), `"$HOME"/'my runs'`);
  assert.equal(hostPathWord("/abs/~x"), "'/abs/~x'", "only a leading ~/ means home");
  const args = sshArguments({ host: "gpu1", port: 2222, user: "me", identityFile: "/k/id", options: { ProxyJump: "bastion" } });
  assert.deepEqual(args.slice(0, 2), ["-o", "BatchMode=yes"]);
  assert.deepEqual(args.slice(-8), ["-i", "/k/id", "-o", "IdentitiesOnly=yes", "-o", "ProxyJump=bastion", "--", "gpu1"]);
  assert.ok(args.includes("-p") && args[args.indexOf("-p") + 1] === "2222");
  const command = hostCommand({ kind: "ssh", connection: { host: "gpu1", options: {} } }, "cd 'a b' && echo $HOME");
  assert.equal(command.file, "ssh");
  assert.equal(command.args.at(-1), `exec sh -c 'cd '\\''a b'\\'' && echo $HOME'`);
  assert.deepEqual(hostCommand({ kind: "local" }, "true"), { file: "sh", args: ["-c", "true"] });
});

test("parseJobState reads scontrol's one-line form", () => {
  const line =
    "JobId=42 JobName=bprof:tiny UserId=root(0) GroupId=root(0) Priority=1 Nice=0 Account=(null) QOS=(null) JobState=RUNNING Reason=None Dependency=(null) Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=0:0 RunTime=00:00:03 NodeList=node1 BatchHost=node1";
  assert.deepEqual(parseJobState(line), { state: "RUNNING", reason: "None", exitCode: 0, node: "node1" });
  assert.deepEqual(parseJobState("JobId=7 JobState=PENDING Reason=Resources ExitCode=0:0 NodeList=(null)"), {
    state: "PENDING",
    reason: "Resources",
    exitCode: 0,
  });
  assert.deepEqual(parseJobState("JobId=7 JobState=FAILED Reason=NonZeroExitCode ExitCode=2:0 NodeList=n3"), {
    state: "FAILED",
    reason: "NonZeroExitCode",
    exitCode: 2,
    node: "n3",
  });
});

let project: TinyProject;
before(async () => {
  project = await makeTinyProject(await fs.mkdtemp(path.join(os.tmpdir(), "bprof-target-")));
  // A model folder as a laptop has it when the weights live on the GPU host.
  const slim = path.join(project.root, "slim");
  await fs.mkdir(slim);
  for (const file of ["config.json", "tokenizer.json"]) await fs.copyFile(path.join(project.modelDir, file), path.join(slim, file));
});
after(async () => fs.rm(project.root, { recursive: true, force: true }));

async function load(text: string) {
  const { profile, problems } = await loadProfile(project.configPath, { text });
  return {
    profile,
    lines: withoutLowPower(problems)
      .map(formatProblem)
      .map((l) => l.replaceAll(project.root, "<root>")),
  };
}

test("weights are needed on this machine only when the runner reads them here", async () => {
  const slim = "models:\n  - path: ./slim\nbenchmarks:\n  - task: ./tasks/tiny_mc.yaml\n";
  const local = await load(slim);
  assert.deepEqual(
    local.lines,
    [
      `<root>/tiny.bprof.yaml:2:11: error: the model folder has no *.safetensors weights: <root>/slim (field models[0].path) [config.model-folder]`,
    ].map((l) => l.replace("tiny.bprof.yaml", path.basename(project.configPath))),
  );
  const remote = await load(`${slim}target:\n  ssh:\n    host: gpu1\n`);
  assert.deepEqual(remote.lines, []);
  assert.equal(remote.profile!.target.kind, "ssh");
  const slurmHere = await load(`${slim}target:\n  slurm:\n    partition: cpu\n`);
  assert.equal(slurmHere.lines.length, 1, "Slurm from this machine reads the config's path: the weights must be there");
  const slurmRemotePath = await load(
    slim.replace("./slim\n", "./slim\n    remote_path: /data/tiny\n") + "target:\n  slurm:\n    partition: cpu\n",
  );
  assert.deepEqual(slurmRemotePath.lines, []);
  assert.equal(slurmRemotePath.profile!.models[0]!.remotePath, "/data/tiny");
});

test("remote_path with the local target is a warning; a missing identity file an error at its field", async () => {
  const text = "models:\n  - path: ./model\n    remote_path: /data/tiny\nbenchmarks:\n  - task: ./tasks/tiny_mc.yaml\n";
  const { profile, lines } = await load(text);
  assert.equal(profile!.models[0]!.remotePath, undefined);
  assert.equal(lines.length, 1);
  assert.match(lines[0]!, /:3:18: warning: `remote_path` has no effect with the local target/);
  const missingKey = await load(`${text}target:\n  slurm:\n    ssh:\n      host: login1\n      identity_file: keys/nope\n`);
  assert.equal(missingKey.profile, undefined);
  assert.ok(
    missingKey.lines.some((l) =>
      /:10:22: error: identity file not found: <root>\/keys\/nope \(field target\.slurm\.ssh\.identity_file\) \[config\.identity-file-not-found\]$/.test(
        l,
      ),
    ),
    missingKey.lines.join("\n"),
  );
});
