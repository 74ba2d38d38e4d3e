// End-to-end harness: the packaged .vsix installed into code-server (VS Code for the browser,
// installed offline by scripts/e2e-install.sh into .vscode-test/), driven by playwright-core in
// Debian's Chromium. Every wait is bounded and fails with a message that says what was awaited,
// with the server's last log lines where they help. Everything started here is cleaned up by its
// stop()/close(), and, as a last resort, when the test process exits.
import { spawn, type ChildProcess } from "node:child_process";
import * as fs from "node:fs";
import * as fsp from "node:fs/promises";
import * as http from "node:http";
import * as os from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { chromium, type Browser, type Frame, type Page } from "playwright-core";
import { freePort } from "../support/ports";

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
export const CACHE_DIR = path.join(REPO_ROOT, ".vscode-test");
export const RESULTS_DIR = path.join(REPO_ROOT, "test-results");
export const CHROMIUM_PATH = process.env.BPROF_E2E_CHROMIUM ?? "/usr/bin/chromium";
const INSTALL_HINT = "run `bash scripts/e2e-install.sh` first (it installs Node 24 and code-server into .vscode-test/)";

// ------------------------------------------------------------------------------------------------
// Install (written by scripts/e2e-install.sh)

export interface E2EInstall {
  codeServerVersion: string;
  nodeVersion: string;
  /** code-server's entry script (absolute). */
  codeServer: string;
  /** Folder of Node 24's `node` (absolute); put first on PATH when launching code-server. */
  nodeBin: string;
  node: string;
}

/** Reads .vscode-test/e2e.json; throws an error that says how to install when it is missing. */
export function loadInstall(): E2EInstall {
  const manifest = path.join(CACHE_DIR, "e2e.json");
  if (!fs.existsSync(manifest)) {
    throw new Error(`code-server for the e2e tests is not installed (${manifest} is missing): ${INSTALL_HINT}`);
  }
  const raw = JSON.parse(fs.readFileSync(manifest, "utf8")) as Record<string, string>;
  const abs = (p: string | undefined) => path.resolve(CACHE_DIR, p ?? "");
  const install: E2EInstall = {
    codeServerVersion: raw.codeServerVersion ?? "?",
    nodeVersion: raw.nodeVersion ?? "?",
    codeServer: abs(raw.codeServer),
    nodeBin: abs(raw.nodeBin),
    node: path.join(abs(raw.nodeBin), "node"),
  };
  for (const p of [install.codeServer, install.node]) {
    if (!fs.existsSync(p)) throw new Error(`the e2e install in ${CACHE_DIR} is incomplete (${p} is missing): ${INSTALL_HINT}`);
  }
  return install;
}

// ------------------------------------------------------------------------------------------------
// Small utilities

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
    JSON.stringify({ ...DEFAULT_SETTINGS, ...(opts.trusted === false ? { "security.workspace.trust.enabled": true, "security.workspace.trust.startupPrompt": "always" } : {}), ...opts.settings }, null, 2),
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
      "--auth", "none",
      "--bind-addr", `127.0.0.1:${port}`,
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
          throw new Error(`code-server exited (code ${exited.code}, signal ${exited.signal}) before answering HTTP; last log lines:\n${tail.tail()}`);
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

// ------------------------------------------------------------------------------------------------
// Browser and workbench

export const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
];

export interface Workbench {
  browser: Browser;
  page: Page;
  /** Console errors and page errors seen so far (for failure messages). */
  pageErrors: string[];
  /** Closes the browser; safe to call twice. */
  close(): Promise<void>;
}

/** Opens `folder` in the workbench served at `url` and waits until the workbench is ready. */
export async function openWorkbench(url: string, folder: string, opts: { timeoutMs?: number; trusted?: boolean } = {}): Promise<Workbench> {
  const timeoutMs = opts.timeoutMs ?? 90_000;
  if (!fs.existsSync(CHROMIUM_PATH)) throw new Error(`Chromium is not at ${CHROMIUM_PATH}: ${INSTALL_HINT}`);
  const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS, timeout: 60_000 });
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      browser.close().catch(() => undefined),
      new Promise<void>((resolve) => (timer = setTimeout(resolve, 10_000))),
    ]);
    clearTimeout(timer);
  };
  try {
    const context = await browser.newContext({ viewport: { width: 1600, height: 1000 } });
    const page = await context.newPage();
    page.setDefaultTimeout(30_000);
    const pageErrors: string[] = [];
    page.on("pageerror", (e) => pageErrors.push(`pageerror: ${e.message}`));
    page.on("console", (m) => {
      if (m.type() === "error") pageErrors.push(`console: ${m.text()}`);
    });

    const target = new URL(url);
    target.searchParams.set("folder", folder);
    await page.goto(target.toString(), { timeout: timeoutMs, waitUntil: "domcontentloaded" });
    const deadline = Date.now() + timeoutMs;
    await page
      .locator(".monaco-workbench .part.activitybar, .monaco-workbench .part.sidebar .composite-bar")
      .first()
      .waitFor({ state: "visible", timeout: timeoutMs })
      .catch((e: Error) => {
        throw new Error(`the workbench did not appear at ${target}: ${e.message.split("\n")[0]}\npage errors:\n${pageErrors.slice(-10).join("\n")}`);
      });
    // The workbench is restored once its status bar shows and the explorer lists the folder.
    await page
      .locator(".monaco-workbench .part.statusbar")
      .waitFor({ state: "visible", timeout: Math.max(1000, deadline - Date.now()) });
    if (opts.trusted === false) await declineTrust(page);
    else await dismissTrustDialog(page);
    return { browser, page, pageErrors, close };
  } catch (e) {
    await close();
    throw e;
  }
}

/** Answers the workspace trust dialog with "No": the folder opens in Restricted Mode. */
async function declineTrust(page: Page): Promise<void> {
  const no = page.locator(".monaco-dialog-box .monaco-button", { hasText: /don't trust|do not trust|no/i }).first();
  await no.waitFor({ state: "visible", timeout: 30_000 }).catch((e: Error) => {
    throw new Error(`no workspace trust dialog appeared: ${e.message.split("\n")[0]}`);
  });
  await no.click();
  await page.locator(".monaco-dialog-box").waitFor({ state: "hidden", timeout: 10_000 }).catch(() => undefined);
}

/** Clicks "trust" on the workspace trust dialog if one is shown (the harness disables trust, so normally none). */
export async function dismissTrustDialog(page: Page): Promise<void> {
  const button = page.locator(".monaco-dialog-box .monaco-button", { hasText: /trust/i }).first();
  if (await button.isVisible().catch(() => false)) {
    await button.click();
    await page.locator(".monaco-dialog-box").waitFor({ state: "hidden", timeout: 10_000 }).catch(() => undefined);
  }
}

async function paletteRows(page: Page): Promise<string[]> {
  return page
    .locator(".quick-input-widget .quick-input-list .monaco-list-row")
    .evaluateAll((rows) => rows.map((r) => (r.querySelector(".label-name")?.textContent ?? r.textContent ?? "").trim()));
}

/**
 * Runs the command titled `title` (as the palette shows it, e.g. "Benchmark Profiler: Profile")
 * through the command palette: F1, type `>` + title, pick the row whose label is exactly `title`.
 * The palette lists commands as known when it opens, and an extension's contributions register a
 * moment after the workbench shows, so a palette that lacks the command is closed and reopened
 * until `timeoutMs`.
 */
export async function runCommand(page: Page, title: string, opts: { timeoutMs?: number } = {}): Promise<void> {
  const timeoutMs = opts.timeoutMs ?? 30_000;
  const deadline = Date.now() + timeoutMs;
  const widget = page.locator(".quick-input-widget");
  const input = widget.locator(".quick-input-box input").first();
  const rows = widget.locator(".quick-input-list .monaco-list-row");
  let seen: string[] = [];
  for (let attempt = 0; Date.now() < deadline; attempt++) {
    // Leave whatever has focus (an editor, a webview, an open quick pick), then open the palette:
    // F1, or Ctrl+Shift+P when F1 did nothing.
    await page.keyboard.press("Escape");
    await page.keyboard.press(attempt % 2 === 0 ? "F1" : "Control+Shift+P");
    if (!(await input.waitFor({ state: "visible", timeout: 5_000 }).then(() => true, () => false))) continue;
    await input.fill(`>${title}`);
    const until = Math.min(deadline, Date.now() + 3_000);
    while (Date.now() < until) {
      seen = await paletteRows(page).catch(() => []);
      const index = seen.indexOf(title);
      if (index >= 0) {
        if (index === 0) await input.press("Enter");
        else await rows.nth(index).click();
        await widget.waitFor({ state: "hidden", timeout: 10_000 }).catch(() => undefined);
        return;
      }
      await sleep(200);
    }
    await sleep(500);
  }
  await page.keyboard.press("Escape");
  throw new Error(
    `timed out after ${timeoutMs} ms: no command titled "${title}" in the command palette (is the extension installed ` +
      `and its command contributed?); the palette listed: ${JSON.stringify(seen.slice(0, 10))}`,
  );
}

export interface NotificationWaitOptions {
  /** A notification matching this fails the wait at once with its text (e.g. /^Profile failed/). */
  failOn?: string | RegExp;
}

function matches(text: string, pattern: string | RegExp): boolean {
  return typeof pattern === "string" ? text.includes(pattern) : pattern.test(text);
}

/** Texts of the notifications shown now (toasts, and the notification center when it is open). */
export async function notificationTexts(page: Page): Promise<string[]> {
  return page
    .locator(".notifications-toasts .notification-list-item, .notifications-center .notification-list-item")
    .evaluateAll((items) =>
      items.map((item) => {
        const message = item.querySelector(".notification-list-item-message");
        return (message?.textContent ?? item.textContent ?? "").replace(/\s+/g, " ").trim();
      }),
    );
}

/**
 * Waits until a notification whose text contains `pattern` (or matches the RegExp) is shown and
 * returns its text. Progress notifications shown before it are ignored; one matching
 * `opts.failOn` ends the wait with an error carrying its text.
 */
export async function waitForNotification(
  page: Page,
  pattern: string | RegExp,
  timeoutMs = 30_000,
  opts: NotificationWaitOptions = {},
): Promise<string> {
  const seen = new Set<string>();
  return waitFor(
    async () => {
      const texts = await notificationTexts(page).catch(() => [] as string[]);
      for (const t of texts) seen.add(t);
      if (opts.failOn) {
        const bad = texts.find((t) => matches(t, opts.failOn!));
        if (bad !== undefined) throw new Error(`notification "${bad}" appeared while waiting for ${String(pattern)}`);
      }
      return texts.find((t) => matches(t, pattern));
    },
    timeoutMs,
    () => `no notification matching ${String(pattern)}; notifications seen: ${JSON.stringify([...seen])}`,
  );
}

/**
 * The frame of a webview whose content satisfies `predicate` (a CSS selector that must exist in
 * it, or a function of the frame). Webviews are nested iframes; this searches all frames.
 */
export async function webviewFrame(
  page: Page,
  predicate: string | ((frame: Frame) => boolean | Promise<boolean>),
  timeoutMs = 30_000,
): Promise<Frame> {
  const test =
    typeof predicate === "string"
      ? async (f: Frame) => (await f.$(predicate)) !== null
      : predicate;
  return waitFor(
    async () => {
      for (const frame of page.frames()) {
        if (frame === page.mainFrame() || frame.isDetached()) continue;
        try {
          if (await test(frame)) return frame;
        } catch {
          /* frame navigating or detached: try again */
        }
      }
      return undefined;
    },
    timeoutMs,
    () => `no webview frame matching ${typeof predicate === "string" ? predicate : "the predicate"}; frames: ${JSON.stringify(page.frames().map((f) => f.url().slice(0, 120)))}`,
  );
}

/** Saves a screenshot to test-results/<name>.png and returns its path. */
export async function screenshot(page: Page, name: string): Promise<string> {
  await fsp.mkdir(RESULTS_DIR, { recursive: true });
  const file = path.join(RESULTS_DIR, `${name}.png`);
  await page.screenshot({ path: file, timeout: 15_000 });
  return file;
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

export const VSIX = path.join(REPO_ROOT, "dist", "benchmark-profiler.vsix");
export const RUNNER = path.join(REPO_ROOT, "native-runner", "build", "bprof-runner");

export interface WorkbenchSession {
  page: Page;
  server: CodeServer;
  /** Logs "<what> after N s" to the test's problems. */
  mark(what: string): void;
  /** Adds a cleanup that runs after the test, last added first. */
  defer(cleanup: () => Promise<unknown> | unknown): void;
}

/**
 * The packaged extension in code-server on `workspace`, opened in Chromium, with the runner set:
 * runs `body` and keeps test-results/<name>.png. When `body` fails, the error gains a screenshot
 * (<name>-failure.png) and the end of code-server's log.
 */
export async function withWorkbench(
  t: { diagnostic(message: string): void },
  options: { name: string; workspace: string; settings?: Record<string, unknown>; trusted?: boolean; env?: Record<string, string> },
  body: (session: WorkbenchSession) => Promise<void>,
): Promise<void> {
  const started = Date.now();
  const mark = (what: string) => t.diagnostic(`${what} after ${((Date.now() - started) / 1000).toFixed(1)} s`);
  loadInstall(); // fails with "run `bash scripts/e2e-install.sh` first" when .vscode-test lacks code-server
  if (!fs.existsSync(VSIX)) throw new Error(`${VSIX} is missing: run \`npm run build && npm run package\` first`);
  if (!fs.existsSync(RUNNER)) throw new Error(`${RUNNER} is missing: build the native runner first (npm run setup)`);
  const extensionLog = path.join(RESULTS_DIR, `${options.name}-extension.log`);
  fs.rmSync(extensionLog, { force: true }); // the extension appends: this session's lines only
  await withCleanup(async (defer) => {
    const server = await startCodeServer({
      vsix: VSIX,
      workspace: options.workspace,
      settings: { "benchmarkProfiler.runnerPath": RUNNER, ...options.settings },
      logName: `${options.name}-code-server`,
      timeoutMs: 60_000,
      ...(options.trusted === false ? { trusted: false } : {}),
      env: { BPROF_EXTENSION_LOG: extensionLog, ...options.env },
    });
    defer(() => server.stop());
    mark(`code-server up at ${server.url}`);
    const { page, close } = await openWorkbench(server.url, options.workspace, { timeoutMs: 60_000, ...(options.trusted === false ? { trusted: false } : {}) });
    defer(close);
    mark("workbench ready");
    try {
      await body({ page, server, mark, defer });
    } catch (e) {
      const shot = await screenshot(page, `${options.name}-failure`).catch(() => "(no screenshot)");
      throw new Error(`${e instanceof Error ? e.message : String(e)}\nscreenshot: ${shot}\nlog: ${server.logPath}\ncode-server's last log lines:\n${server.logTail(30)}`);
    }
    await screenshot(page, options.name);
  });
}
