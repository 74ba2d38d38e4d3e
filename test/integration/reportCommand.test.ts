// `bprof report` on a real run: a tiny profile (three abilities, one with LaTeX and Markdown
// special characters in its name, three benchmarks) through the real runner, then a report in
// every format, checked against results.json; the HTML page is opened from file:// in Debian's
// headless Chromium, which must draw every heatmap without a console error or a network request.
// Leaves test-results/report.png (and report.html beside it) for a human to look at.
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import * as path from "node:path";
import { after, before, test } from "node:test";
import { pathToFileURL } from "node:url";
import { chromium, type Browser } from "playwright-core";
import { bprof, repoRoot } from "../support/cli";
import { makeProfileProject, QUANT, SPATIAL } from "../support/profileProject";

const CAUSAL = "Commonsense & Causal Reasoning";
const CHROMIUM = process.env.BPROF_E2E_CHROMIUM ?? "/usr/bin/chromium";
const RESULTS_DIR = path.join(repoRoot, "test-results");

const CAUSAL_ITEMS = [
  {
    context: "It rained all night.",
    question: "Why is the grass wet in the morning?",
    choices: ["because it rained", "because it is green"],
    answer: 0,
  },
  {
    context: "Sam dropped the glass on the stone floor.",
    question: "What happened to the glass?",
    choices: ["it floated", "it broke", "it grew"],
    answer: 1,
  },
  {
    context: "The plant got no water for a month.",
    question: "What happened to the plant?",
    choices: ["it wilted", "it bloomed"],
    answer: 0,
  },
];

/**
 * A three-choice benchmark of 11 documents and a four-choice one of 9. The random-weight model
 * guesses; these documents were picked from a larger pool so that it scores above chance on both
 * (8/11 and 6/9), which gives AIS values rather than n/a cells to draw.
 */
const FACTS = [
  ["What do bees make?", ["honey", "milk", "silk"], 0],
  ["What colour is grass?", ["red", "green", "blue"], 1],
  ["What do we breathe?", ["air", "sand", "oil"], 0],
  ["Which animal barks?", ["cat", "dog", "fish"], 1],
  ["What is frozen water?", ["steam", "mud", "ice"], 2],
  ["What falls from clouds?", ["stones", "leaves", "rain"], 2],
  ["What do cows give?", ["milk", "wool", "eggs"], 0],
  ["Which is a fruit?", ["carrot", "potato", "apple"], 2],
  ["Which is hot?", ["ice", "snow", "fire"], 2],
  ["What do we read?", ["spoons", "books", "shoes"], 1],
  ["Which is a colour?", ["seven", "table", "blue"], 2],
] as const;
const ARITH = [
  ["1 + 1 =", ["1", "2", "3", "4"], 1],
  ["1 + 2 =", ["3", "4", "5", "2"], 0],
  ["1 + 3 =", ["5", "6", "3", "4"], 3],
  ["1 + 4 =", ["7", "4", "5", "6"], 2],
  ["2 + 2 =", ["3", "4", "5", "6"], 1],
  ["3 + 1 =", ["5", "6", "3", "4"], 3],
  ["3 + 4 =", ["7", "8", "9", "6"], 0],
  ["4 + 3 =", ["9", "6", "7", "8"], 2],
  ["5 + 2 =", ["7", "8", "9", "6"], 0],
] as const;

const task = (name: string) => `task: ${name}
dataset_path: json
dataset_kwargs:
  data_files:
    test: ${name}.jsonl
test_split: test
output_type: multiple_choice
doc_to_text: "Question: {{question}}\\nAnswer:"
doc_to_choice: choices
doc_to_target: answer
`;
const jsonl = (docs: readonly (readonly [string, readonly string[], number])[]) =>
  docs.map(([question, choices, answer]) => JSON.stringify({ question, choices, answer })).join("\n") + "\n";

const CONFIG = `models:
  - path: ./model
    name: tiny-llama
benchmarks:
  - task: ./tasks/tiny_yes.yaml
  - task: ./tasks/tiny_facts.yaml
  - task: ./tasks/tiny_arith.yaml
abilities:
  - name: ${QUANT}
    data: ./diag/quantitative.diag.jsonl
  - name: ${SPATIAL}
    data: ./diag/spatial.diag.jsonl
  - name: ${CAUSAL}
    data: ./diag/causal.diag.jsonl
ablation:
  k: [0.001, 0.01]
  selections: [top, random]
  batch_size: 2
seed: 3
bootstrap:
  resamples: 300
`;

let root: string;
let runDir: string;
let results: {
  run_id: string;
  models: {
    benchmarks: { name: string; acc: number }[];
    profile: {
      k: number[];
      variants: { ability: string | null; selection: string; k: number; benchmarks: { name: string; acc: Cell; acc_norm: Cell }[] }[];
    };
  }[];
};
interface Cell {
  ais: number | null;
  reason?: string;
  significant: boolean;
  ci: { low: number; high: number } | null;
  flips: { right_to_wrong: number; wrong_to_right: number };
}

before(async () => {
  ({ root } = await makeProfileProject({
    config: CONFIG,
    extraFiles: {
      "tasks/tiny_facts.yaml": task("tiny_facts"),
      "tasks/tiny_facts.jsonl": jsonl(FACTS),
      "tasks/tiny_arith.yaml": task("tiny_arith"),
      "tasks/tiny_arith.jsonl": jsonl(ARITH),
      "diag/causal.diag.jsonl":
        CAUSAL_ITEMS.map((item, i) => JSON.stringify({ id: `causal-${i}`, ability: CAUSAL, ...item })).join("\n") + "\n",
    },
  }));
  const run = await bprof(["run", path.join(root, "profile.bprof.yaml")]);
  assert.equal(run.exitCode, 0, `bprof run failed:\n${run.stderr}\n${run.stdout}`);
  const runs = await fs.readdir(path.join(root, ".bprof", "runs"));
  runDir = path.join(root, ".bprof", "runs", runs[0]!);
  results = JSON.parse(await fs.readFile(path.join(runDir, "results.json"), "utf8"));
});
after(async () => fs.rm(root, { recursive: true, force: true }));

const cellsAt = (k: number, metric: "acc" | "acc_norm") =>
  results.models[0]!.profile.variants.filter((v) => v.k === k).flatMap((v) => v.benchmarks.map((b) => ({ v, b: b.name, cell: b[metric] })));

test("bprof report writes every format into the run folder, or where --out says", { timeout: 120_000 }, async () => {
  for (const [format, ext] of [
    ["html", "html"],
    ["md", "md"],
    ["csv", "csv"],
    ["json", "json"],
    ["latex", "tex"],
  ] as const) {
    const r = await bprof(["report", runDir, "--format", format]);
    assert.equal(r.exitCode, 0, `report --format ${format}:\n${r.stderr}`);
    assert.equal(r.stdout.trim(), path.join(runDir, `report.${ext}`));
    assert.ok((await fs.stat(path.join(runDir, `report.${ext}`))).size > 0);
  }
  // A run id, looked up in the config's output folder; --out; --out - for stdout.
  const out = path.join(root, "out", "ais.md");
  const byId = await bprof(["report", path.basename(runDir), path.join(root, "profile.bprof.yaml"), "--format", "md", "--out", out]);
  assert.equal(byId.exitCode, 0, byId.stderr);
  assert.equal(await fs.readFile(out, "utf8"), await fs.readFile(path.join(runDir, "report.md"), "utf8"));
  const stdout = await bprof(["report", runDir, "--format", "csv", "--out", "-"]);
  assert.equal(stdout.exitCode, 0, stdout.stderr);
  assert.equal(stdout.stdout.trimEnd(), (await fs.readFile(path.join(runDir, "report.csv"), "utf8")).trimEnd());
});

test("the CSV and JSON reports hold every cell of results.json, both metrics", async () => {
  const csv = (await fs.readFile(path.join(runDir, "report.csv"), "utf8")).trimEnd().split("\r\n");
  const json = JSON.parse(await fs.readFile(path.join(runDir, "report.json"), "utf8"));
  const variants = results.models[0]!.profile.variants;
  const expected = variants.length * 3 * 2;
  assert.equal(csv.length, 1 + expected);
  assert.equal(json.schema, "bprof.report");
  assert.equal(json.run.id, results.run_id);
  assert.equal(json.cells.length, expected);
  const header = csv[0]!.split(",");
  for (const col of [
    "model",
    "ability",
    "k",
    "selection",
    "benchmark",
    "metric",
    "baseline",
    "ablated",
    "chance",
    "ais",
    "ci_low",
    "ci_high",
    "significant",
    "specificity",
    "reason",
  ]) {
    assert.ok(header.includes(col), `CSV column ${col}`);
  }
  // The causal ability's name holds "&": unquoted in CSV (no comma or quote in it).
  assert.ok(csv.some((line) => line.startsWith(`tiny-llama,${CAUSAL},paper,top,`)));
  const checked = [
    ...cellsAt(0.01, "acc").map((x) => ({ ...x, metric: "acc" })),
    ...cellsAt(0.001, "acc_norm").map((x) => ({ ...x, metric: "acc_norm" })),
  ];
  for (const { v, b, cell, metric } of checked) {
    const row = json.cells.find(
      (c: { ability: string | null; selection: string; k: number; benchmark: string; metric: string }) =>
        c.ability === v.ability && c.selection === v.selection && c.k === v.k && c.benchmark === b && c.metric === metric,
    );
    assert.ok(row, `${v.ability} ${v.k} ${b} ${metric}`);
    assert.equal(row.ais, cell.ais);
    assert.equal(row.significant, cell.significant && cell.ais !== null);
    assert.equal(row.ci_low, cell.ci?.low ?? null);
    assert.equal(row.right_to_wrong, cell.flips.right_to_wrong);
    if (cell.ais === null) assert.equal(row.reason, cell.reason);
  }
  // Flipped documents: exactly the flips of the negative cells.
  const negative = [...cellsAt(0.001, "acc"), ...cellsAt(0.01, "acc"), ...cellsAt(0.001, "acc_norm"), ...cellsAt(0.01, "acc_norm")].filter(
    ({ cell }) => cell.ais !== null && cell.ais < 0,
  );
  const flips = negative.reduce((sum, { cell }) => sum + cell.flips.right_to_wrong + cell.flips.wrong_to_right, 0);
  assert.equal(json.flipped_documents.length, flips);
  assert.deepEqual(json.warnings, []);
});

test("the Markdown and LaTeX reports show the AIS tables with marks and escaped names", async () => {
  const md = await fs.readFile(path.join(runDir, "report.md"), "utf8");
  assert.match(md, /^# Benchmark profile: run /m);
  assert.match(md, /^\| ability \| tiny\\_yes \| tiny\\_facts \| tiny\\_arith \|$/m);
  assert.match(md, /^\| Commonsense & Causal Reasoning \| /m);
  assert.match(md, /^### k = 0\.01 \(n = \d+ of [\d,]+ parameters zeroed\)$/m);
  for (const { v, b, cell } of cellsAt(0.01, "acc").filter((x) => x.v.selection === "top")) {
    if (cell.ais === null || cell.ais >= 0) continue;
    assert.match(md, new RegExp(`^#### ${v.ability} × ${b.replace(/_/g, "\\\\_")}: AIS -`, "m"), "a heading per negative cell");
  }
  const tex = await fs.readFile(path.join(runDir, "report.tex"), "utf8");
  assert.match(tex, /\\begin\{tabular\}\{lrrr\}/);
  assert.match(tex, /^Ability & tiny\\_yes & tiny\\_facts & tiny\\_arith \\\\$/m);
  assert.match(tex, /^Commonsense \\& Causal Reasoning & /m);
  assert.match(tex, /at \$k = 0\.01\$/, "the largest k by default");
  const k001 = await bprof(["report", runDir, "--format", "latex", "--k", "0.001", "--out", "-"]);
  assert.match(k001.stdout, /at \$k = 0\.001\$/);
});

test("the HTML page is self-contained and draws its heatmaps in headless Chromium without errors", { timeout: 120_000 }, async () => {
  const file = path.join(runDir, "report.html");
  const html = await fs.readFile(file, "utf8");
  // Nothing loaded from elsewhere (the bundle's license comments name URLs; the page loads none, as
  // the request listener below checks).
  assert.ok(!/<script[^>]+\bsrc=|<link\b|<img\b|<iframe\b|@import/i.test(html), "no external script, style or image");
  assert.ok(
    html.includes(`<meta http-equiv="Content-Security-Policy" content="default-src 'none';`),
    "a CSP that allows nothing by default",
  );
  await fs.mkdir(RESULTS_DIR, { recursive: true });
  await fs.copyFile(file, path.join(RESULTS_DIR, "report.html"));

  let browser: Browser | undefined;
  try {
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--no-first-run",
      ],
    });
    const page = await openPage(browser, file);
    const text = await page.evaluate(() => document.body.innerText);
    assert.match(text, /Commonsense & Causal Reasoning/);
    assert.match(text, /Ability overlap at k = 0\.01/);
    await page.screenshot({ path: path.join(RESULTS_DIR, "report.png"), fullPage: true });
    // The last heatmap on its own, for a close look.
    await page
      .locator("figure.heatmap")
      .last()
      .screenshot({ path: path.join(RESULTS_DIR, "report-heatmap.png") });

    // acc_norm: tiny_yes is at chance under it, so its cells are n/a (hatched, with a reason).
    const norm = path.join(RESULTS_DIR, "report-acc_norm.html");
    const r = await bprof(["report", runDir, "--metric", "acc_norm", "--out", norm]);
    assert.equal(r.exitCode, 0, r.stderr);
    const normPage = await openPage(browser, norm);
    assert.match(
      await normPage.evaluate(() => document.querySelector("ol.reasons")?.textContent ?? ""),
      /baseline score 0\.5000 is at chance/,
    );
    await normPage
      .locator("figure.heatmap")
      .last()
      .screenshot({ path: path.join(RESULTS_DIR, "report-heatmap-acc_norm.png") });
  } finally {
    await browser?.close();
  }
});

/** Opens a report from file:// and checks that every heatmap was drawn, without a console error or a request. */
async function openPage(browser: Browser, file: string) {
  const page = await browser.newPage({ viewport: { width: 1240, height: 900 }, deviceScaleFactor: 1 });
  const problems: string[] = [];
  page.on("console", (m) => {
    if (m.type() === "error" || m.type() === "warning") problems.push(`console ${m.type()}: ${m.text()}`);
  });
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  page.on("request", (r) => {
    if (!/^(file|data):/.test(r.url())) problems.push(`network request: ${r.url()}`);
  });
  await page.goto(pathToFileURL(file).href);
  await page.waitForFunction(
    () => document.querySelectorAll(".figure-tools").length === document.querySelectorAll("canvas").length,
    undefined,
    { timeout: 10_000 },
  );
  const canvases = await page.evaluate(() =>
    Array.from(document.querySelectorAll("canvas")).map((c) => {
      // Something was drawn: the canvas holds non-transparent, non-white pixels.
      const ctx = c.getContext("2d")!;
      const data = ctx.getImageData(0, 0, c.width, c.height).data;
      let inked = 0;
      for (let i = 0; i < data.length; i += 4)
        if (data[i + 3]! > 0 && (data[i]! < 240 || data[i + 1]! < 240 || data[i + 2]! < 240)) inked++;
      return { id: c.id, width: c.width, height: c.height, inked };
    }),
  );
  assert.deepEqual(
    canvases.map((c) => c.id),
    ["heatmap-0-0", "heatmap-0-1"],
  );
  for (const c of canvases) assert.ok(c.width > 200 && c.height > 100 && c.inked > 1000, JSON.stringify(c));
  assert.deepEqual(problems, [], `${file} in Chromium`);
  return page;
}

test("bad input: a missing run, another schema, an unknown format or metric, a k not in the sweep: one line, exit 2", async () => {
  const oneLine = (r: { stderr: string }) => {
    const lines = r.stderr.trim().split("\n");
    assert.equal(lines.length, 1, r.stderr);
    assert.doesNotMatch(r.stderr, /\s+at\s+\S+\s+\(/, "no stack trace");
    return lines[0]!;
  };
  const missing = await bprof(["report", path.join(root, "no-such-run")]);
  assert.equal(missing.exitCode, 2);
  assert.match(oneLine(missing), /^bprof: no run folder `.*no-such-run`/);

  const unknownId = await bprof(["report", "20000101-000000-abcd"], { cwd: root });
  assert.equal(unknownId.exitCode, 2);
  assert.match(oneLine(unknownId), /no run folder `20000101-000000-abcd`/);

  const other = path.join(root, "other");
  await fs.mkdir(other);
  await fs.writeFile(path.join(other, "results.json"), JSON.stringify({ schema: "something.else", schema_version: 1 }));
  const schema = await bprof(["report", other]);
  assert.equal(schema.exitCode, 2);
  assert.match(oneLine(schema), /is not a Benchmark Profiler results file \(its schema is `something\.else`\)/);

  await fs.writeFile(path.join(other, "results.json"), JSON.stringify({ schema: "bprof.results", schema_version: 2 }));
  const version = await bprof(["report", path.join(other, "results.json")]);
  assert.equal(version.exitCode, 2);
  assert.match(oneLine(version), /has schema_version 2; this bprof reads version 1/);

  const unfinished = path.join(root, "unfinished");
  await fs.mkdir(unfinished);
  const noResults = await bprof(["report", unfinished]);
  assert.equal(noResults.exitCode, 2);
  assert.match(oneLine(noResults), /has no results\.json/);

  const format = await bprof(["report", runDir, "--format", "pdf"]);
  assert.equal(format.exitCode, 2);
  assert.equal(oneLine(format), "bprof: unknown report format `pdf` (formats: html, md, csv, json, latex)");

  const metric = await bprof(["report", runDir, "--metric", "f1"]);
  assert.equal(metric.exitCode, 2);
  assert.match(oneLine(metric), /unknown metric `f1`/);

  const k = await bprof(["report", runDir, "--k", "0.5"]);
  assert.equal(k.exitCode, 2);
  assert.equal(oneLine(k), "bprof: k = 0.5 is not in the sweep of model `tiny-llama` (k: 0.001, 0.01)");

  const option = await bprof(["report", runDir, "--colour", "red"]);
  assert.equal(option.exitCode, 2);
  assert.match(option.stderr, /^bprof: Unknown option '--colour'/);
});
