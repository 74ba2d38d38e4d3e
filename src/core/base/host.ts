// The machine a target's commands run on: this one, or a host reached with the OpenSSH client.
// Every command is a POSIX sh script, so both kinds run the same text and a test of one speaks
// for the other.
import { execa } from "execa";
import { RunnerError } from "./runnerError";

export interface SshConnection {
  host: string;
  port?: number;
  user?: string;
  /** Absolute path on this machine. */
  identityFile?: string;
  /** More `-o Key=Value` options. */
  options: Record<string, string>;
}

export type Host = { kind: "local" } | { kind: "ssh"; connection: SshConnection };

export const LOCAL_HOST: Host = { kind: "local" };

/** "this machine", or the destination as the user wrote it, for messages. */
export function hostName(host: Host): string {
  if (host.kind === "local") return "this machine";
  const { connection } = host;
  return `${connection.user ? `${connection.user}@` : ""}${connection.host}${connection.port ? `:${connection.port}` : ""}`;
}

/**
 * ssh's arguments up to the command. BatchMode: a run never sits at a password or host-key
 * prompt nobody sees; keepalives: a dead connection ends the client instead of hanging it.
 */
export function sshArguments(connection: SshConnection): string[] {
  const args = ["-o", "BatchMode=yes", "-o", "ConnectTimeout=20", "-o", "ServerAliveInterval=15", "-o", "ServerAliveCountMax=4"];
  if (connection.port !== undefined) args.push("-p", String(connection.port));
  if (connection.user !== undefined) args.push("-l", connection.user);
  if (connection.identityFile !== undefined) args.push("-i", connection.identityFile, "-o", "IdentitiesOnly=yes");
  for (const [key, value] of Object.entries(connection.options)) args.push("-o", `${key}=${value}`);
  return [...args, "--", connection.host];
}

/** The program and arguments that run `script` with sh on the host. */
export function hostCommand(host: Host, script: string): { file: string; args: string[] } {
  if (host.kind === "local") return { file: "sh", args: ["-c", script] };
  // The remote side hands the string to the user's login shell; `exec sh -c` makes it sh's.
  return { file: "ssh", args: [...sshArguments(host.connection), `exec sh -c ${shellWord(script)}`] };
}

/** One word for sh: as is when it is plain, else single-quoted. */
export function shellWord(text: string): string {
  if (/^[A-Za-z0-9_/.,:=@%+-]+$/.test(text)) return text;
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/** A path for sh on the host, where a leading ~/ means the remote user's home. */
export function hostPathWord(hostPath: string): string {
  if (hostPath === "~") return `"$HOME"`;
  if (hostPath.startsWith("~/")) return `"$HOME"/${shellWord(hostPath.slice(2))}`;
  return shellWord(hostPath);
}

export interface HostResult {
  exitCode: number | undefined;
  stdout: string;
  stderr: string;
}

/** Runs a script on the host to its end; a connection failure is a RunnerError that says so. */
export async function runOnHost(host: Host, script: string, options: { input?: string | Uint8Array; what: string }): Promise<HostResult> {
  const { file, args } = hostCommand(host, script);
  const result = await execa(file, args, {
    reject: false,
    ...(options.input !== undefined ? { input: options.input } : { stdin: "ignore" }),
  });
  if ((result as { code?: string }).code === "ENOENT") {
    throw new RunnerError("target_unreachable", `${file} is not installed on this machine (needed to ${options.what})`);
  }
  const outcome = { exitCode: result.exitCode, stdout: String(result.stdout ?? ""), stderr: String(result.stderr ?? "") };
  if (host.kind === "ssh" && outcome.exitCode === 255) throw unreachable(host, outcome.stderr);
  return outcome;
}

/** Like runOnHost, but any failing exit is a RunnerError naming the step and the host. */
export async function runOnHostOrFail(host: Host, script: string, options: { input?: string | Uint8Array; what: string }): Promise<string> {
  const result = await runOnHost(host, script, options);
  if (result.exitCode !== 0) {
    throw new RunnerError(
      "target_failed",
      `could not ${options.what} on ${hostName(host)} (exit ${result.exitCode}): ${result.stderr.trim().split("\n").slice(-3).join(" ") || "no message"}`,
    );
  }
  return result.stdout;
}

/** ssh exits 255 when the connection (not the command) failed: say which host and why. */
export function unreachable(host: Host, stderr: string): RunnerError {
  const reason =
    stderr
      .trim()
      .split("\n")
      .filter((l) => !l.startsWith("Warning: Permanently added"))
      .slice(-2)
      .join(" ") || "ssh exited with 255";
  return new RunnerError(
    "target_unreachable",
    `cannot reach ${hostName(host)} over SSH: ${reason}. Check target.ssh (host, port, user, identity_file) and that \`ssh ${host.kind === "ssh" ? host.connection.host : ""}\` works without a prompt`,
  );
}
