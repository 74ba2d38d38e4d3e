// A real OpenSSH server on 127.0.0.1 for the remote-target tests: its own host key, one client
// key that may log in as the current user, a port the kernel picked, everything in a temp folder.
// The client side gets a known_hosts file with the server's key, so host keys are checked
// strictly, as on a real host.
import { execa, type ResultPromise } from "execa";
import { promises as fs } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { freePort } from "./ports";

export interface SshServer {
  port: number;
  /** The client's private key. */
  identityFile: string;
  /** The config's `target.ssh.options` for this server: strict host keys from our known_hosts. */
  options: Record<string, string>;
  /** sshd's log (-E), for assertion messages. */
  log(): Promise<string>;
  stop(): Promise<void>;
}

/** The `ssh:` block of a config's `target.slurm` that reaches `server` as a login node, indented under `slurm:`. */
export function loginNodeYaml(server: Pick<SshServer, "port" | "identityFile" | "options">): string[] {
  return [
    "    ssh:",
    "      host: 127.0.0.1",
    `      port: ${server.port}`,
    `      identity_file: ${JSON.stringify(server.identityFile)}`,
    "      options:",
    ...Object.entries(server.options).map(([k, v]) => `        ${k}: ${JSON.stringify(v)}`),
  ];
}

const SSHD = "/usr/sbin/sshd";

/**
 * The test run's compiler cache (scripts/test.sh), for the builds of the runner on the host: a
 * real host keeps its own, and this one is the same machine.
 */
function sharedCompilerCache(): Record<string, string> {
  return process.env.CCACHE_DIR ? { CCACHE_DIR: process.env.CCACHE_DIR } : {};
}

/** `env`: set in every session (sshd's SetEnv), as a cluster's login node sets SLURM_CONF. */
export async function startSshServer(options: { env?: Record<string, string> } = {}): Promise<SshServer> {
  await fs.access(SSHD).catch(() => {
    throw new Error(`${SSHD} is missing: install Debian's openssh-server (scripts/setup.sh --test does)`);
  });
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), "bprof-sshd-"));
  const hostKey = path.join(dir, "host_ed25519");
  const identityFile = path.join(dir, "client_ed25519");
  await execa("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", hostKey]);
  await execa("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", identityFile]);
  await fs.copyFile(`${identityFile}.pub`, path.join(dir, "authorized_keys"));
  // sshd's privilege separation needs its empty chroot folder (root only; Debian's service makes it).
  if (process.getuid?.() === 0) await fs.mkdir("/run/sshd", { recursive: true, mode: 0o755 });

  const port = await freePort();
  const sessionEnv = Object.entries({ ...sharedCompilerCache(), ...options.env }).map(([key, value]) => `${key}=${value}`);
  const config = [
    `Port ${port}`,
    "ListenAddress 127.0.0.1",
    `HostKey ${hostKey}`,
    `AuthorizedKeysFile ${path.join(dir, "authorized_keys")}`,
    `PidFile ${path.join(dir, "sshd.pid")}`,
    "PubkeyAuthentication yes",
    "PasswordAuthentication no",
    "KbdInteractiveAuthentication no",
    "PermitRootLogin prohibit-password",
    // The temp folder is world-readable /tmp; the keys in it are ours.
    "StrictModes no",
    "UsePAM no",
    "LogLevel VERBOSE",
    // one line: sshd takes the first SetEnv and ignores the rest
    ...(sessionEnv.length > 0 ? [`SetEnv ${sessionEnv.join(" ")}`] : []),
  ].join("\n");
  const configFile = path.join(dir, "sshd_config");
  await fs.writeFile(configFile, config + "\n");
  const logFile = path.join(dir, "sshd.log");
  await execa(SSHD, ["-t", "-f", configFile]);
  const daemon: ResultPromise = execa(SSHD, ["-D", "-f", configFile, "-E", logFile], { reject: false, stdin: "ignore" });

  const publicHostKey = (await fs.readFile(`${hostKey}.pub`, "utf8")).trim().split(" ").slice(0, 2).join(" ");
  const knownHosts = path.join(dir, "known_hosts");
  await fs.writeFile(knownHosts, `[127.0.0.1]:${port} ${publicHostKey}\n`);
  const clientOptions = { UserKnownHostsFile: knownHosts, StrictHostKeyChecking: "yes", LogLevel: "ERROR" };

  const server: SshServer = {
    port,
    identityFile,
    options: clientOptions,
    log: () => fs.readFile(logFile, "utf8").catch(() => ""),
    stop: async () => {
      daemon.kill("SIGTERM");
      await daemon;
      await fs.rm(dir, { recursive: true, force: true });
    },
  };
  await waitForLogin(server, daemon);
  return server;
}

/** Polls until a real login succeeds, so tests start against a server that answers. */
async function waitForLogin(server: SshServer, daemon: ResultPromise): Promise<void> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const args = [
      "-o",
      "BatchMode=yes",
      "-p",
      String(server.port),
      "-i",
      server.identityFile,
      ...Object.entries(server.options).flatMap(([k, v]) => ["-o", `${k}=${v}`]),
      "127.0.0.1",
      "true",
    ];
    const result = await execa("ssh", args, { reject: false, stdin: "ignore" });
    if (result.exitCode === 0) return;
    if (daemon.exitCode !== null || Date.now() > deadline) {
      const log = await server.log();
      await server.stop();
      throw new Error(`sshd on 127.0.0.1:${server.port} did not accept a login: ${String(result.stderr)}\n${log}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}
