// End to end: the editor on a copy of the demo workspace, in one code-server session. An answer
// index typed out of range shows its problem on that line within a second and its quick fix clears
// it; an ability name completes in the config; the hover on a diagnostic item shows the text the
// importance loss reads and its token count; the Profiles tree lists the demo's models, benchmarks
// and abilities; Profile asks before a task that runs the model's code, and Cancel starts nothing.
// Then, in a second server with Workspace Trust on, a restricted window checks files but refuses
// to run the profiler, saying why, and shows a run folder the repository ships (its results, a
// cell's documents, the Negative AIS tree, the marked data file) without running the Python its
// config snapshot names.
// Run: bash scripts/e2e-install.sh && npm run build && npm run package && node --import tsx --test test/e2e/editor.test.ts
// Leaves test-results/e2e-editor-*.png and e2e-restricted.png.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import * as fsp from "node:fs/promises";
import * as os from "node:os";
import * as path from "node:path";
import { test } from "node:test";
import { REPO_ROOT } from "./install";
import { sleep, waitFor } from "./processes";
import { notificationTexts, runCommand, screenshot, waitForNotification, webviewFrame, withWorkbench } from "./workbench";
import { acceptSuggestion, applyQuickFix, hoverLine, lineText, openFile, problemRows, selectText } from "./editing";
import { CONFIG_SNAPSHOT, RUN_MANIFEST } from "../../src/core/results/runFolder";
import { fixtureResults, writeFixtureRun } from "../support/reportFixture";

async function demoCopy(): Promise<string> {
  const workspace = await fsp.mkdtemp(path.join(os.tmpdir(), "bprof-e2e-editor-"));
  await fsp.cp(path.join(REPO_ROOT, "media", "demo"), workspace, { recursive: true });
  return workspace;
}

test(
  "e2e editor: problems as you type, a quick fix, completion, a hover and the Profiles tree on the demo",
  { timeout: 300_000 },
  async (t) => {
    const workspace = await demoCopy();
    t.after(() => fsp.rm(workspace, { recursive: true, force: true, maxRetries: 3 }));

    // The unsafe-code step's task imports a metric: allowed here, so Profile reaches its own question.
    const settings = { "benchmarkProfiler.taskPython": "allow" };
    await withWorkbench(t, { name: "e2e-editor", workspace, settings }, async ({ page, mark }) => {
      await t.test("the Profiles tree lists the demo's models, benchmarks and abilities", async () => {
        await page.locator('.activitybar .action-item a[aria-label^="Benchmark Profiler"]').first().click();
        // The Profiles view shares the side bar with Runs and Negative AIS, and a list renders only
        // the rows in sight: the rows are gathered while the list scrolls down.
        const list = page.locator('.pane:has(.pane-header[aria-label^="Profiles"]) .monaco-list').first();
        const seen: string[] = [];
        const rows = await waitFor(
          async () => {
            const texts = await list
              .locator(".monaco-list-row")
              .evaluateAll((r) => r.map((e) => (e.textContent ?? "").replace(/\s+/g, " ").trim()));
            for (const text of texts) if (!seen.includes(text)) seen.push(text);
            // An ability's row shows its file until its items are counted, the last ones last.
            const counted = (ability: string) => seen.some((x) => new RegExp(`^${ability}\\s*[\\d,]+ items`).test(x));
            if (counted("Spatial Reasoning") && counted("Temporal Reasoning")) return seen;
            if (texts.length > 0) {
              await list.hover();
              await page.mouse.wheel(0, 100);
            }
            return undefined;
          },
          60_000,
          () => `the Profiles tree never listed the demo's abilities: ${seen.join(" | ")}`,
        );
        for (const expected of [
          "demo.bprof.yaml",
          "Models (1)",
          "demo-llama",
          "Benchmarks (11)",
          "demo_analogical",
          "demo_mixed",
          "Abilities (10)",
          "Analogical Reasoning",
          "Spatial Reasoning",
        ]) {
          assert.ok(
            rows.some((r) => r.startsWith(expected)),
            `the tree lists ${expected}: ${rows.join(" | ")}`,
          );
        }
        assert.ok(
          rows.some((r) => /^Spatial Reasoning\s*1,000 items/.test(r)),
          rows.join(" | "),
        );
        assert.ok(
          rows.some((r) => /^demo_spatial\s*100 documents/.test(r)),
          rows.join(" | "),
        );
        await screenshot(page, "e2e-editor-profiles");
        mark("tree");
      });

      await t.test("an answer out of range shows on its line within a second; its quick fix clears it", async () => {
        await openFile(page, "spatial.diag.jsonl");
        assert.match(await lineText(page, 1), /"answer":2,"meta"/);
        // Select the digit alone: a quote typed over a selection would surround it.
        await selectText(page, '"answer":2,');
        await page.keyboard.press("ArrowRight");
        await page.keyboard.press("ArrowLeft");
        await page.keyboard.press("Shift+ArrowLeft");
        await page.keyboard.type("9");
        const typed = Date.now();
        const row = await waitFor(
          async () => (await problemRows(page)).find((r) => r.includes("`answer` 9 is out of range")),
          5_000,
          () => "no problem for the answer typed out of range",
        );
        const elapsed = Date.now() - typed;
        mark(`problem shown ${elapsed} ms after typing`);
        assert.ok(elapsed < 1000, `the problem appeared ${elapsed} ms after typing`);
        assert.match(row, /with 4 choices it must be 0 to 3 \(0-based\).*diag\.answer-out-of-range.*\[Ln 1, Col \d+\]/);
        await screenshot(page, "e2e-editor-problem");
        await selectText(page, '"answer":9,');
        const offered = await applyQuickFix(page, 'Set answer to 2 ("east")');
        assert.deepEqual(
          offered.filter((o) => o.startsWith("Set answer")),
          ['Set answer to 0 ("northeast")', 'Set answer to 1 ("southwest")', 'Set answer to 2 ("east")', 'Set answer to 3 ("west")'],
        );
        await waitFor(
          async () => !(await problemRows(page)).some((r) => r.includes("out of range")) || undefined,
          5_000,
          () => "the problem stayed after its quick fix",
        );
        assert.match(await lineText(page, 1), /"answer":2,"meta"/);
        await screenshot(page, "e2e-editor-fixed");
        mark("quick fix");
      });

      await t.test("the hover on a diagnostic item shows the text the importance loss reads and its token count", async () => {
        const hover = await hoverLine(page, 2, /Diagnostic item/);
        assert.match(hover, /Diagnostic item spatial-1-2 · Spatial Reasoning/);
        assert.match(hover, /For demo-llama \(\d+ tokens\), as plain text, in demo\.bprof\.yaml/);
        assert.match(hover, /The lamp is in front of the bell\.\s*From the lamp, where is the bell\?\s*Answer: /);
        await screenshot(page, "e2e-editor-hover");
        mark("hover");
      });

      await t.test("an ability name completes in the config", async () => {
        await openFile(page, "demo.bprof.yaml");
        await selectText(page, "name: Spatial Reasoning");
        await page.keyboard.type("name: Spat");
        const offered = await acceptSuggestion(page, "Spatial Reasoning");
        assert.deepEqual(offered, ["Spatial Reasoning"], "the suggestions that match what is typed");
        // The ability's line in the demo's config, wherever edits to the config have moved it.
        const config = await fsp.readFile(path.join(REPO_ROOT, "media", "demo", "demo.bprof.yaml"), "utf8");
        const abilityLine = config.split("\n").findIndex((l) => /^\s+- name: Spatial Reasoning$/.test(l)) + 1;
        assert.ok(abilityLine > 0, "the demo's config names Spatial Reasoning");
        let line = "";
        await waitFor(
          async () => /^\s+- name: Spatial Reasoning$/.test((line = await lineText(page, abilityLine))) || undefined,
          5_000,
          () => `line ${abilityLine} reads ${JSON.stringify(line)}`,
        );
        await screenshot(page, "e2e-editor-completion");
        mark("completion");
      });

      await t.test(
        "a dataset the config names but that does not exist is created by its quick fix, and the config is fine again",
        async () => {
          await selectText(page, "temporal.diag.jsonl");
          await page.keyboard.type("temporal-more.diag.jsonl");
          // The name typed in full: each prefix typed on the way was a missing file too.
          await waitFor(
            async () =>
              (await problemRows(page)).some((r) => r.includes("diagnostic dataset not found") && r.includes("temporal-more.diag.jsonl")) ||
              undefined,
            5_000,
            () => "no problem for the missing dataset",
          );
          await selectText(page, "temporal-more.diag.jsonl");
          await applyQuickFix(page, "Create temporal-more.diag.jsonl with items of the built-in Temporal Reasoning generator");
          const created = path.join(workspace, "diagnostic", "temporal-more.diag.jsonl");
          const lines = await waitFor(
            async () => {
              const text = await fsp.readFile(created, "utf8").catch(() => "");
              return text.split("\n").filter(Boolean).length === 2000 ? text.split("\n").filter(Boolean) : undefined;
            },
            20_000,
            () => `${created} was not written with 2,000 items`,
          );
          assert.equal((JSON.parse(lines[0]!) as { ability: string }).ability, "Temporal Reasoning");
          await waitFor(
            async () => !(await problemRows(page)).some((r) => r.includes("not found")) || undefined,
            10_000,
            () => "the config still misses its dataset",
          );
          await screenshot(page, "e2e-editor-created");
          mark("dataset created");
        },
      );

      await t.test(
        "Validate Config tokenizes every item: one past the model's window is an error at its line until the file changes",
        async () => {
          const dataset = path.join(workspace, "diagnostic", "analogical.diag.jsonl");
          const original = await fsp.readFile(dataset, "utf8");
          const lines = original.split("\n");
          lines[2] = JSON.stringify({ ...JSON.parse(lines[2]!), context: "The far away hills. ".repeat(80) });
          await fsp.writeFile(dataset, lines.join("\n"));
          // demo.bprof.yaml, the workspace's one config, is the editor in front since the last test.
          await runCommand(page, "Benchmark Profiler: Validate Config");
          const said = await waitForNotification(page, "error(s)", 60_000, { failOn: /config OK/ });
          assert.equal(said, "demo.bprof.yaml: 1 error(s); see the Problems panel");
          const row = await waitFor(
            async () => (await problemRows(page)).find((r) => r.includes("more than the model's max length")),
            10_000,
            () => "no problem for the item past the model's window",
          );
          assert.match(row, /item analogical-1-3: \d+ tokens, more than the model's max length \(256\).*diag\.too-long.*\[Ln 3, Col 1\]/);
          await screenshot(page, "e2e-editor-validate-too-long");
          await fsp.writeFile(dataset, original);
          await waitFor(
            async () => !(await problemRows(page)).some((r) => r.includes("max length")) || undefined,
            10_000,
            () => "the problem stayed after the file was restored",
          );
          mark("validate config");
        },
      );

      await t.test("Profile asks before a task that runs the code the model generates; Cancel starts nothing", async () => {
        // A second config whose one benchmark scores by running the model's code (humaneval's kind).
        await fsp.writeFile(
          path.join(workspace, "code_task.yaml"),
          "task: demo_code\ndataset_path: json\ndataset_kwargs:\n  data_files:\n    test: benchmarks/data/demo_spatial.jsonl\n" +
            'output_type: generate_until\nunsafe_code: true\ndoc_to_text: "{{question}}"\ndoc_to_target: "{{answer}}"\ngeneration_kwargs:\n  max_gen_toks: 8\nmetric_list:\n  - metric: !function code_metric.passes\n',
        );
        await fsp.writeFile(path.join(workspace, "code_metric.py"), "def passes(references, predictions):\n    return 0.0\n");
        await fsp.writeFile(
          path.join(workspace, "code.bprof.yaml"),
          "models:\n  - path: ./model\n    dtype: float32\nbenchmarks:\n  - task: ./code_task.yaml\n",
        );
        // A file this new may not be in Quick Open's index yet; its full path always opens.
        await openFile(page, "code.bprof.yaml", path.join(workspace, "code.bprof.yaml"));
        await runCommand(page, "Benchmark Profiler: Profile");
        const dialog = page.locator(".monaco-dialog-box");
        await dialog.waitFor({ state: "visible", timeout: 30_000 });
        assert.match(
          await dialog.innerText(),
          /demo_code scores each document by running the code the model generates, on this machine[\s\S]*outside any sandbox/,
        );
        await screenshot(page, "e2e-editor-unsafe-code");
        await dialog.getByRole("button", { name: "Cancel" }).click();
        await dialog.waitFor({ state: "hidden", timeout: 10_000 });
        await sleep(1_000);
        assert.equal(
          await fsp.stat(path.join(workspace, ".bprof", "runs")).then(
            () => true,
            () => false,
          ),
          false,
          "no run was started",
        );
        assert.ok(!(await notificationTexts(page)).some((n) => n.startsWith("Profiling")), "no run is in progress");
        mark("unsafe code asked");
      });
    });
  },
);

/**
 * A run folder as a cloned repository may ship it (.bprof/runs/<id>/): its config names the tasks
 * by name, and logiqa's doc_to_text is `!function utils.text`, whose import would leave `marker`.
 */
async function plantRepositoryRun(workspace: string): Promise<{ marker: string }> {
  const results = fixtureResults();
  const fixture = await writeFixtureRun(results);
  const runDir = path.join(workspace, ".bprof", "runs", results.run_id);
  await fsp.cp(fixture, runDir, { recursive: true });
  await fsp.rm(path.dirname(path.dirname(fixture)), { recursive: true, force: true });
  const tasks = path.join(workspace, "repo_tasks");
  await fsp.mkdir(tasks);
  const marker = path.join(workspace, "python-ran");
  await fsp.writeFile(
    path.join(tasks, "utils.py"),
    `open(${JSON.stringify(marker)}, "w").close()\ndef text(doc):\n    return doc["question"]\n`,
  );
  const task = (name: string, docToText: string) =>
    `task: ${name}\ndataset_path: json\ndataset_kwargs:\n  data_files:\n    test: ${name}.jsonl\noutput_type: multiple_choice\ndoc_to_text: ${docToText}\ndoc_to_choice: choices\ndoc_to_target: answer\n`;
  const data: Record<string, string> = {};
  for (const [name, count, docToText] of [
    ["arc_easy", 4, '"Q: {{question}}"'],
    ["logiqa", 14, "!function utils.text"],
  ] as const) {
    await fsp.writeFile(path.join(tasks, `${name}.yaml`), task(name, docToText));
    data[name] = path.join(tasks, `${name}.jsonl`);
    const docs = Array.from({ length: count }, (_, i) =>
      JSON.stringify({ question: `Question ${i}?`, choices: ["yes", "no"], answer: i % 2 }),
    );
    await fsp.writeFile(data[name], docs.join("\n") + "\n");
  }
  const config = path.join(workspace, "repo.bprof.yaml");
  const text = 'task_paths: ["./repo_tasks"]\nmodels:\n  - path: ./model\nbenchmarks:\n  - task: arc_easy\n  - task: logiqa\n';
  await fsp.writeFile(config, text);
  await fsp.writeFile(path.join(runDir, CONFIG_SNAPSHOT), text);
  results.config_file = config;
  for (const b of results.models[0]!.benchmarks) {
    b.data_file = data[b.name]!;
    b.data_sha256 = createHash("sha256")
      .update(await fsp.readFile(b.data_file))
      .digest("hex");
  }
  await fsp.writeFile(path.join(runDir, "results.json"), JSON.stringify(results));
  await fsp.writeFile(path.join(runDir, RUN_MANIFEST), JSON.stringify({ run_id: results.run_id, created: "", config_file: config }));
  return { marker };
}

test(
  "e2e restricted: in a window whose folder is not trusted, files are checked, a task's Python helper does not run (nor one a shipped run folder names), Profile refuses and says why",
  { timeout: 180_000 },
  async (t) => {
    const workspace = await demoCopy();
    t.after(() => fsp.rm(workspace, { recursive: true, force: true, maxRetries: 3 }));
    await fsp.appendFile(path.join(workspace, "demo.bprof.yaml"), "treads: 2\n");
    // A task with a helper that would leave a file behind if it ran.
    await fsp.writeFile(
      path.join(workspace, "helper_task.yaml"),
      "task: helper_task\ndataset_path: json\ndataset_kwargs:\n  data_files:\n    test: benchmarks/data/demo_spatial.jsonl\noutput_type: multiple_choice\ndoc_to_text: !function helpers.text\ndoc_to_choice: choices\ndoc_to_target: answer\n",
    );
    await fsp.writeFile(
      path.join(workspace, "helpers.py"),
      "import os\nopen(os.path.join(os.path.dirname(__file__), 'helper-ran'), 'w').close()\ndef text(doc):\n    return doc['question']\n",
    );
    const { marker } = await plantRepositoryRun(workspace);
    await withWorkbench(t, { name: "e2e-restricted", workspace, trusted: false }, async ({ page, mark }) => {
      const row = await waitFor(
        async () => (await problemRows(page)).find((r) => r.includes("unknown key `treads`")),
        60_000,
        () => "no problem in Restricted Mode",
      );
      assert.match(row, /did you mean `threads`\?/);
      mark("checked in restricted mode");
      await openFile(page, "helper_task.yaml");
      const helper = await waitFor(
        async () => (await problemRows(page)).find((r) => r.includes("helpers run only in a trusted workspace")),
        30_000,
        () => "no problem for the helper in Restricted Mode",
      );
      assert.match(helper, /`doc_to_text` runs the Python helper `helpers\.text`.*task\.python-function.*\[Ln 7, Col 24\]/);
      assert.equal(
        await fsp.stat(path.join(workspace, "helper-ran")).then(
          () => true,
          () => false,
        ),
        false,
        "the helper never ran",
      );
      mark("helper not run");

      // The demo's config (the folder has a second one, the shipped run's): Profile profiles it.
      await openFile(page, "demo.bprof.yaml");
      await runCommand(page, "Benchmark Profiler: Profile");
      const refused = await waitForNotification(page, "needs a trusted workspace", 30_000, { failOn: /^Profile finished/ });
      assert.match(
        refused,
        /^Profiling needs a trusted workspace: it starts the runner \(and ssh or sbatch\) that this folder's config names\..*Restricted Mode/,
      );
      await screenshot(page, "e2e-restricted");

      // The shipped run: Show Latest Results, a click on its negative cell.
      await runCommand(page, "Benchmark Profiler: Show Latest Results");
      const frame = await webviewFrame(page, "canvas", 30_000);
      const negative = frame.locator("button.cell", { hasText: /^-1\.000/ }).first();
      await waitFor(
        async () => {
          if (await negative.isVisible()) return true;
          await frame.locator("details summary").first().click();
          return undefined;
        },
        15_000,
        () => "the table never showed the negative cell",
        500,
      );
      await negative.click();
      const listed = await waitFor(
        async () => {
          const text = await frame
            .locator("#cases")
            .innerText()
            .catch(() => "");
          return /line 14 · wrong → right · logiqa\.jsonl/.test(text) ? text : undefined;
        },
        30_000,
        () => "the cell's documents were not listed",
      );
      assert.match(listed, /runs the Python helper `utils\.text`, and helpers run only in a trusted workspace/);
      mark("results view and cell");
      // The Negative AIS tree: the cell opens onto its document, which opens the marked data file.
      await page.locator('.activitybar .action-item a[aria-label^="Benchmark Profiler"]').first().click();
      const tree = '.pane:has(.pane-header[aria-label^="Negative AIS"]) .monaco-list-row';
      await page.locator(tree, { hasText: "× logiqa" }).first().click({ timeout: 30_000 });
      const document = page.locator(tree, { hasText: /^line 14/ }).first();
      await document.waitFor({ timeout: 30_000 });
      assert.match((await document.textContent()) ?? "", /logiqa\.jsonl/);
      await document.click();
      await waitFor(
        async () => (await page.locator(".editor-group-container.active .monaco-editor .cgmr").count()) || undefined,
        30_000,
        () => "no case is marked in logiqa.jsonl",
      );
      await screenshot(page, "e2e-restricted-run-folder");
      assert.equal(existsSync(marker), false, "the run folder's task Python never ran");
      mark("negative tree and inline cases");
    });
  },
);
