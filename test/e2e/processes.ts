// The e2e tests' processes: bounded waits, code-server started in its own process group and
// stopped with it, and cleanups that run whatever happens. Every wait fails with a message that
// says what was awaited, with the server's last log lines where they help; every process group
// started here is killed, as a last resort, when the test process exits.
import { spawn, type ChildProcess } from "node:child_process";
import * as fs from "node:fs";
import * as fsp from "node:fs/promises";
import * as http from "node:http";
import * as os from "node:os";
import * as path from "node:path";
import { freePort } from "../support/ports";
import { loadInstall, RESULTS_DIR } from "./install";

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Polls `probe` until it returns a value other than undefined/false, or throws `describe()` after timeoutMs. */
export async function waitFor<T>(
  probe: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs: number,
  describe: () => string,
  intervalMs = 250,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value as T;
    if (Date.now() >= deadline) throw new Error(`timed out after ${timeoutMs} ms: ${describe()}`);
    await sleep(Math.min(intervalMs, Math.max(0, deadline - Date.now())));
  }
}

function httpStatus(url: string, timeoutMs = 2000): Promise<number | undefined> {
  return new Promise((resolve) => {
    const req = http.get(url, { timeout: timeoutMs }, (res) => {
      res.resume();
      resolve(res.statusCode);
    });
    req.on("timeout", () => req.destroy());
    req.on("error", () => resolve(undefined));
  });
}

/** Keeps the last `max` lines of a stream of text. */
class LogTail {
  private lines: string[] = [];
  private partial = "";
  constructor(private readonly max = 200) {}
  push(chunk: string): void {
    const parts = (this.partial + chunk).split(/\r?\n/);
    this.partial = parts.pop() ?? "";
    this.lines.push(...parts);
    if (this.lines.length > this.max) this.lines.splice(0, this.lines.length - this.max);
  }
  tail(n = 40): string {
    const all = this.partial ? [...this.lines, this.partial] : this.lines;
    return all.slice(-n).join("\n");
  }
}

// Last-resort cleanup: process groups still alive when the test process exits are killed.
const liveGroups = new Set<number>();
let exitHookInstalled = false;
function trackGroup(pid: number): void {
  liveGroups.add(pid);
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.on("exit", () => {
      for (const g of liveGroups) {
        try {
          process.kill(-g, "SIGKILL");
        } catch {
          /* already gone */
        }
      }
    });
  }
}

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    /* group already gone */
  }
}

function groupAlive(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
}

// ------------------------------------------------------------------------------------------------
// code-server

export interface StartOptions {
  /** The .vsix to install. */
  vsix: string;
  /** The folder the workbench opens (only recorded here: openWorkbench opens it). */
  workspace?: string;
  /** User settings, merged over the harness's defaults (which quiet welcome pages, trust, telemetry). */
  settings?: Record<string, unknown>;
  /** Extra environment for the server and so for the extension host and what it launches. */
  env?: Record<string, string>;
  /** Base name of the server log under test-results/ (default "code-server"). */
  logName?: string;
  /** Bound on installing the vsix and on the server answering HTTP (default 90 s each). */
  timeoutMs?: number;
  /** False: Workspace Trust is on, so a folder opens in Restricted Mode once its trust dialog is declined. */
  trusted?: boolean;
}

export interface CodeServer {
  url: string;
  port: number;
  workspace: string | undefined;
  extensionsDir: string;
  userDataDir: string;
  /** The server's full log, kept under test-results/. */
  logPath: string;
  /** The server's last log lines. */
  logTail(lines?: number): string;
  /** Kills the server's whole process group and removes its temp dirs; safe to call twice. */
  stop(): Promise<void>;
}

export const DEFAULT_SETTINGS: Record<string, unknown> = {
  "workbench.startupEditor": "none",
  "workbench.welcomePage.walkthroughs.openOnInstall": false,
  "workbench.tips.enabled": false,
  "workbench.enableExperiments": false,
  "workbench.secondarySideBar.defaultVisibility": "hidden",
  "security.workspace.trust.enabled": false,
  "telemetry.telemetryLevel": "off",
  "update.mode": "none",
  "extensions.autoCheckUpdates": false,
  "extensions.autoUpdate": false,
  "extensions.ignoreRecommendations": true,
  "chat.disableAIFeatures": true,
  "git.enabled": false,
  "git.openRepositoryInParentFolders": "never",
};

function run(cmd: string, args: string[], env: NodeJS.ProcessEnv, timeoutMs: number): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { env, stdio: ["ignore", "pipe", "pipe"], detached: true });
    let output = "";
    child.stdout.on("data", (d: Buffer) => (output += d.toString()));
    child.stderr.on("data", (d: Buffer) => (output += d.toString()));
    const timer = setTimeout(() => {
      if (child.pid) killGroup(child.pid, "SIGKILL");
      reject(new Error(`timed out after ${timeoutMs} ms: ${[cmd, ...args].join(" ")}\n${output.split("\n").slice(-40).join("\n")}`));
    }, timeoutMs);
    child.on("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

/**
 * Installs `vsix` into a fresh extensions dir, writes the user settings into a fresh user-data dir,
 * starts code-server on a free loopback port and waits until it answers HTTP.
 */
export async function startCodeServer(opts: StartOptions): Promise<CodeServer> {
  const install = loadInstall();
  const vsix = path.resolve(opts.vsix);
  if (!fs.existsSync(vsix)) throw new Error(`the extension package ${vsix} does not exist (package it first)`);
  const timeoutMs = opts.timeoutMs ?? 90_000;

  const tmp = await fsp.mkdtemp(path.join(os.tmpdir(), "bprof-e2e-server-"));
  const extensionsDir = path.join(tmp, "extensions");
  const userDataDir = path.join(tmp, "user-data");
  await fsp.mkdir(path.join(userDataDir, "User"), { recursive: true });
  await fsp.mkdir(extensionsDir, { recursive: true });
  await fsp.writeFile(
    path.join(userDataDir, "User", "settings.json"),
    JSON.stringify(
      {
        ...DEFAULT_SETTINGS,
        ...(opts.trusted === false ? { "security.workspace.trust.enabled": true, "security.workspace.trust.startupPrompt": "always" } : {}),
        ...opts.settings,
      },
      null,
      2,
    ),
  );
  await fsp.mkdir(RESULTS_DIR, { recursive: true });
  const logPath = path.join(RESULTS_DIR, `${opts.logName ?? "code-server"}.log`);
  const logFile = fs.createWriteStream(logPath);
  const tail = new LogTail();
  const log = (s: string) => {
    tail.push(s);
    logFile.write(s);
  };

  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PATH: `${install.nodeBin}${path.delimiter}${process.env.PATH ?? ""}`,
    // Keep code-server's own config/state out of the user's home.
    XDG_CONFIG_HOME: path.join(tmp, "xdg-config"),
    XDG_DATA_HOME: path.join(tmp, "xdg-data"),
    XDG_CACHE_HOME: path.join(tmp, "xdg-cache"),
    ...opts.env,
  };
  // The process running the tests may itself be started by npm/tsx: these must not leak in.
  delete env.NODE_OPTIONS;
  delete env.ELECTRON_RUN_AS_NODE;
  delete env.VSCODE_IPC_HOOK_CLI;
  const common = ["--extensions-dir", extensionsDir, "--user-data-dir", userDataDir];

  let child: ChildProcess | undefined;
  let exited: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    const pid = child?.pid;
    if (pid !== undefined) {
      killGroup(pid, "SIGTERM");
      const deadline = Date.now() + 5000;
      while (groupAlive(pid) && Date.now() < deadline) await sleep(100);
      if (groupAlive(pid)) killGroup(pid, "SIGKILL");
      const deadline2 = Date.now() + 5000;
      while (groupAlive(pid) && Date.now() < deadline2) await sleep(100);
      liveGroups.delete(pid);
    }
    await new Promise<void>((resolve) => logFile.end(resolve));
    await fsp.rm(tmp, { recursive: true, force: true, maxRetries: 3 });
  };

  try {
    log(`$ code-server --install-extension ${vsix}\n`);
    const inst = await run(install.node, [install.codeServer, ...common, "--install-extension", vsix], env, timeoutMs);
    log(inst.output);
    if (inst.code !== 0 || !/successfully installed/i.test(inst.output)) {
      throw new Error(`code-server --install-extension ${vsix} failed (exit ${inst.code}):\n${inst.output.trim()}`);
    }

    const port = await freePort();
    const args = [
      install.codeServer,
      ...common,
      "--auth",
      "none",
      "--bind-addr",
      `127.0.0.1:${port}`,
      "--disable-telemetry",
      "--disable-update-check",
      ...(opts.trusted === false ? [] : ["--disable-workspace-trust"]),
      "--disable-getting-started-override",
      "--ignore-last-opened",
    ];
    log(`$ code-server ${args.slice(1).join(" ")}\n`);
    child = spawn(install.node, args, { env, cwd: opts.workspace ?? tmp, stdio: ["ignore", "pipe", "pipe"], detached: true });
    if (child.pid !== undefined) trackGroup(child.pid);
    child.stdout?.on("data", (d: Buffer) => log(d.toString()));
    child.stderr?.on("data", (d: Buffer) => log(d.toString()));
    child.on("exit", (code, signal) => (exited = { code, signal }));
    child.on("error", (e) => log(`spawn error: ${e.message}\n`));

    const url = `http://127.0.0.1:${port}`;
    await waitFor(
      async () => {
        if (exited) {
          throw new Error(
            `code-server exited (code ${exited.code}, signal ${exited.signal}) before answering HTTP; last log lines:\n${tail.tail()}`,
          );
        }
        const status = await httpStatus(`${url}/healthz`);
        return status === 200 ? true : undefined;
      },
      timeoutMs,
      () => `code-server did not answer ${url}/healthz; last log lines:\n${tail.tail()}`,
      300,
    );
    return {
      url,
      port,
      workspace: opts.workspace,
      extensionsDir,
      userDataDir,
      logPath,
      logTail: (n?: number) => tail.tail(n),
      stop,
    };
  } catch (e) {
    await stop();
    throw e;
  }
}

/**
 * Runs `fn` with a registry of cleanups that run in reverse order afterwards, whatever happens.
 * Cleanup errors are reported only when `fn` itself succeeded.
 */
export async function withCleanup<T>(fn: (defer: (cleanup: () => Promise<unknown> | unknown) => void) => Promise<T>): Promise<T> {
  const cleanups: Array<() => Promise<unknown> | unknown> = [];
  const runCleanups = async () => {
    const errors: unknown[] = [];
    for (const c of cleanups.reverse()) {
      try {
        await c();
      } catch (e) {
        errors.push(e);
      }
    }
    return errors;
  };
  let result: T;
  try {
    result = await fn((c) => cleanups.push(c));
  } catch (e) {
    await runCleanups();
    throw e;
  }
  const errors = await runCleanups();
  if (errors.length) throw errors[0];
  return result;
}
