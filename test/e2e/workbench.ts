// The e2e tests' workbench: the packaged .vsix in code-server, opened in Chromium and driven by
// playwright-core (commands, notifications, webviews, screenshots), and withWorkbench, which the
// tests run in.
import * as fs from "node:fs";
import * as fsp from "node:fs/promises";
import * as path from "node:path";
import { chromium, type Browser, type Frame, type Page } from "playwright-core";
import { CHROMIUM_PATH, INSTALL_HINT, loadInstall, RESULTS_DIR, RUNNER, VSIX } from "./install";
import { startCodeServer, waitFor, sleep, withCleanup, type CodeServer } from "./processes";

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
    await Promise.race([browser.close().catch(() => undefined), new Promise<void>((resolve) => (timer = setTimeout(resolve, 10_000)))]);
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
        throw new Error(
          `the workbench did not appear at ${target}: ${e.message.split("\n")[0]}\npage errors:\n${pageErrors.slice(-10).join("\n")}`,
        );
      });
    // The workbench is restored once its status bar shows and the explorer lists the folder.
    await page.locator(".monaco-workbench .part.statusbar").waitFor({ state: "visible", timeout: Math.max(1000, deadline - Date.now()) });
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
  await page
    .locator(".monaco-dialog-box")
    .waitFor({ state: "hidden", timeout: 10_000 })
    .catch(() => undefined);
}

/** Clicks "trust" on the workspace trust dialog if one is shown (the harness disables trust, so normally none). */
export async function dismissTrustDialog(page: Page): Promise<void> {
  const button = page.locator(".monaco-dialog-box .monaco-button", { hasText: /trust/i }).first();
  if (await button.isVisible().catch(() => false)) {
    await button.click();
    await page
      .locator(".monaco-dialog-box")
      .waitFor({ state: "hidden", timeout: 10_000 })
      .catch(() => undefined);
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
    if (
      !(await input.waitFor({ state: "visible", timeout: 5_000 }).then(
        () => true,
        () => false,
      ))
    )
      continue;
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
  return page.locator(".notifications-toasts .notification-list-item, .notifications-center .notification-list-item").evaluateAll((items) =>
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
  const test = typeof predicate === "string" ? async (f: Frame) => (await f.$(predicate)) !== null : predicate;
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
    () =>
      `no webview frame matching ${typeof predicate === "string" ? predicate : "the predicate"}; frames: ${JSON.stringify(page.frames().map((f) => f.url().slice(0, 120)))}`,
  );
}

/** Saves a screenshot to test-results/<name>.png and returns its path. */
export async function screenshot(page: Page, name: string): Promise<string> {
  await fsp.mkdir(RESULTS_DIR, { recursive: true });
  const file = path.join(RESULTS_DIR, `${name}.png`);
  await page.screenshot({ path: file, timeout: 15_000 });
  return file;
}

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
    const { page, close } = await openWorkbench(server.url, options.workspace, {
      timeoutMs: 60_000,
      ...(options.trusted === false ? { trusted: false } : {}),
    });
    defer(close);
    mark("workbench ready");
    try {
      await body({ page, server, mark, defer });
    } catch (e) {
      const shot = await screenshot(page, `${options.name}-failure`).catch(() => "(no screenshot)");
      throw new Error(
        `${e instanceof Error ? e.message : String(e)}\nscreenshot: ${shot}\nlog: ${server.logPath}\ncode-server's last log lines:\n${server.logTail(30)}`,
      );
    }
    await screenshot(page, options.name);
  });
}
