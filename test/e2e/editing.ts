// Driving the editor in the workbench the way a user does: Quick Open, the Find widget to select
// text, typing, the Problems panel, quick fixes, suggestions and hovers. Every wait is bounded
// and says what it waited for.
import type { Locator, Page } from "playwright-core";
import { sleep, waitFor } from "./processes";

/** Opens a workspace file by name (or what `query` finds: its path) through Quick Open and waits for its editor tab. */
export async function openFile(page: Page, name: string, query = name): Promise<void> {
  await page.keyboard.press("Escape");
  await page.keyboard.press("Control+P");
  const input = page.locator(".quick-input-widget .quick-input-box input").first();
  await input.waitFor({ state: "visible", timeout: 10_000 });
  await input.fill(query);
  await waitFor(
    async () => (await page.locator(".quick-input-widget .quick-input-list .monaco-list-row", { hasText: name }).count()) > 0 || undefined,
    15_000,
    () => `Quick Open never listed ${name}`,
  );
  await input.press("Enter");
  await waitFor(
    async () => (await page.locator(".tabs-container .tab.active", { hasText: name }).count()) > 0 || undefined,
    15_000,
    () => `no active tab for ${name}`,
  );
  // to the top first: an editor restored scrolled down has its first line's box above the view,
  // where a click lands on the page instead (seen once in CI, the Runs e2e's copy.bprof.yaml)
  await page.keyboard.press("Control+Home");
  await editor(page).click({ position: { x: 200, y: 10 } });
}

export function editor(page: Page): Locator {
  return page.locator(".editor-group-container.active .monaco-editor .view-lines").first();
}

/** Gives the keyboard back to the editor (from a panel or a widget), keeping its selection. */
export async function focusEditor(page: Page): Promise<void> {
  await page.keyboard.press("Escape");
  await page.keyboard.press("Control+1");
}

/** Selects the first occurrence of `text` in the editor, with the Find widget, and closes the widget. */
export async function selectText(page: Page, text: string): Promise<void> {
  await focusEditor(page);
  await page.keyboard.press("Control+Home");
  await page.keyboard.press("Control+F");
  const find = page
    .locator(".editor-group-container.active .find-widget textarea, .editor-group-container.active .find-widget input")
    .first();
  await find.waitFor({ state: "visible", timeout: 10_000 });
  await find.fill(text);
  await waitFor(
    async () =>
      /^1 of|^\d+ of/.test((await page.locator(".editor-group-container.active .find-widget .matchesCount").textContent()) ?? "") ||
      undefined,
    10_000,
    () => `the Find widget found no "${text}"`,
  );
  // The widget has selected the first match as it was typed; Enter would go on to the next.
  await page.keyboard.press("Escape");
}

/** The text of the editor's line `line` (1-based), as the view renders it. */
export async function lineText(page: Page, line: number): Promise<string> {
  await focusEditor(page);
  await page.keyboard.press("Control+G");
  const input = page.locator(".quick-input-widget .quick-input-box input").first();
  await input.fill(`:${line}`);
  await input.press("Enter");
  await sleep(200);
  const current = page.locator(".editor-group-container.active .monaco-editor .view-overlays .current-line").first();
  const top = await current.evaluate((e) => (e.parentElement as HTMLElement).style.top);
  return page
    .locator(".editor-group-container.active .monaco-editor .view-lines .view-line")
    .evaluateAll((lines, t) => (lines.find((l) => (l as HTMLElement).style.top === t)?.textContent ?? "").replace(/\u00a0/g, " "), top);
}

export interface ProblemRow {
  text: string;
}

/** The rows of the Problems panel (opened if needed): each problem's message, source, code and place. */
export async function problemRows(page: Page): Promise<string[]> {
  const panel = page.locator(".markers-panel");
  if (!(await panel.isVisible().catch(() => false))) {
    await page.keyboard.press("Control+Shift+M");
    await panel.waitFor({ state: "visible", timeout: 10_000 });
  }
  return panel.locator(".monaco-list-row").evaluateAll((rows) => rows.map((r) => (r.textContent ?? "").replace(/\s+/g, " ").trim()));
}

/** Opens the quick fixes at the cursor (Ctrl+.) and picks the one whose title contains `title`. */
export async function applyQuickFix(page: Page, title: string): Promise<string[]> {
  const rows = page.locator(".action-widget .monaco-list-row");
  let seen: string[] = [];
  let askedAt = 0;
  // On a loaded machine the problem can reach the Problems panel before the provider sees it, and
  // the widget, asked too early, says "no code actions" and stays that way: ask again until
  // the fix is offered, as a user would.
  const offered = await waitFor(
    async () => {
      seen = await rows.evaluateAll((r) => r.map((e) => (e.textContent ?? "").trim())).catch(() => [] as string[]);
      if (seen.some((t) => t.includes(title))) return seen;
      if (Date.now() - askedAt > 3_000) {
        await focusEditor(page);
        await page.keyboard.press("Control+.");
        askedAt = Date.now();
      }
      return undefined;
    },
    20_000,
    () => `no quick fix "${title}" at the cursor; offered: ${JSON.stringify(seen)}`,
  );
  await rows.filter({ hasText: title }).first().click();
  await page
    .locator(".action-widget")
    .waitFor({ state: "hidden", timeout: 5_000 })
    .catch(() => undefined);
  return offered;
}

/** Triggers suggestions (Ctrl+Space) and accepts the one labelled `label`. */
export async function acceptSuggestion(page: Page, label: string): Promise<string[]> {
  await page.keyboard.press("Control+Space");
  const rows = page.locator(".editor-group-container.active .suggest-widget .monaco-list-row");
  const offered = await waitFor(
    async () => {
      const labels = await rows
        .evaluateAll((r) => r.map((e) => (e.querySelector(".label-name")?.textContent ?? "").trim()))
        .catch(() => [] as string[]);
      return labels.includes(label) ? labels : undefined;
    },
    10_000,
    () => `no suggestion "${label}"`,
  );
  await rows
    .filter({ has: page.locator(".label-name", { hasText: label }) })
    .first()
    .click();
  return offered;
}

/** Hovers the mouse over the middle of the editor's line `line` (1-based) and returns the hover's text. */
export async function hoverLine(page: Page, line: number, contains: RegExp): Promise<string> {
  await lineText(page, line);
  const current = page.locator(".editor-group-container.active .monaco-editor .view-overlays .current-line").first();
  const top = await current.evaluate((e) => (e.parentElement as HTMLElement).style.top);
  const view = page.locator(".editor-group-container.active .monaco-editor .view-lines .view-line").filter({ has: page.locator("span") });
  const target = (await view.all()).length > 0 ? await findLine(view, top) : undefined;
  if (!target) throw new Error(`line ${line} is not rendered`);
  const box = (await target.boundingBox())!;
  return waitFor(
    async () => {
      await page.mouse.move(box.x + 40, box.y + box.height / 2);
      await sleep(150);
      await page.mouse.move(box.x + 60, box.y + box.height / 2);
      const hover = page.locator(".monaco-hover:not(.hidden) .monaco-hover-content, .monaco-hover:not(.hidden) .hover-contents").first();
      const text = (await hover.textContent({ timeout: 1_500 }).catch(() => "")) ?? "";
      return contains.test(text) ? text : undefined;
    },
    15_000,
    () => `no hover matching ${contains} over line ${line}`,
    500,
  );
}

async function findLine(lines: Locator, top: string): Promise<Locator | undefined> {
  for (const l of await lines.all()) if ((await l.evaluate((e) => (e as HTMLElement).style.top)) === top) return l;
  return undefined;
}
