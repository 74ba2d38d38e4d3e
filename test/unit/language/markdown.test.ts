// Every hover and tooltip built from data (item ids, ability, benchmark, model and file names, run
// folders, answers, messages) fed hostile names, rendered by a real Markdown renderer with HTML
// and bare-URL links on (worse than VS Code's): no link, image or HTML element survives.
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { test } from "node:test";
import type { ResolvedAbility, ResolvedBenchmark, ResolvedModel } from "../../../src/core/config/load";
import type { DiagnosticItem } from "../../../src/core/diagnostic/item";
import { configCompletions } from "../../../src/core/language/completion";
import { abilityHover, benchmarkHover, diagnosticItemHover, schemaHover } from "../../../src/core/language/hover";
import { mdCode, mdText, verbatim } from "../../../src/core/language/markdown";
import { caseLinesHover, negativeCellTooltip, profileEntryTooltip, runTooltip, shardTooltip } from "../../../src/core/language/tooltips";
import type { CaseFlip, CellRef } from "../../../src/core/report/cases";
import type { NegativeCell } from "../../../src/core/report/types";
import type { FileCases } from "../../../src/core/workspace/service";

// markdown-it (a dependency of @vscode/vsce), loaded untyped: only render() is used.
const markdownIt = createRequire(import.meta.url)("markdown-it") as (options: object) => { render(markdown: string): string };
const renderer = markdownIt({ html: true, linkify: true });

const HOSTILE = "[x](https://evil/a) ![i](https://evil/p.png) <img src=x> `code` www.evil.com *b* # h\n\n[y]: https://evil/r";

/** What `markdown` becomes in HTML has no link, image or element that the Markdown did not write. */
function assertInert(markdown: string, what: string): void {
  const html = renderer.render(markdown);
  assert.doesNotMatch(html, /<a[\s>]/, `${what}: a link in ${html}`);
  assert.doesNotMatch(html, /<img[\s>]/, `${what}: an image in ${html}`);
  assert.doesNotMatch(html, /<h\d/, `${what}: a heading in ${html}`);
  assert.ok(!html.includes('evil/p.png"'), `${what}: an image source in ${html}`);
  assert.match(html, /evil/, `${what}: the hostile text is still shown, as text`);
}

const item: DiagnosticItem = {
  id: HOSTILE,
  ability: HOSTILE,
  context: HOSTILE,
  question: HOSTILE,
  choices: [HOSTILE, "b"],
  answer: 0,
  line: 1,
};
const model = { name: HOSTILE } as ResolvedModel;

test("the escaping helpers: text, inline code and blocks stay inert", () => {
  assertInert(mdText(HOSTILE), "mdText");
  assertInert(mdCode(HOSTILE), "mdCode");
  assertInert(mdCode(`\`\`a\` ${HOSTILE}`), "mdCode with backticks");
  assertInert(`x ${mdCode("`")} ${mdText(HOSTILE)}`, "mdCode of a backtick");
  assertInert(verbatim(`${HOSTILE}\n\`\`\`\n${HOSTILE}`), "verbatim");
  assert.equal(renderer.render(mdCode("a `b` c")).trim(), "<p><code>a `b` c</code></p>");
});

test("hovers: a diagnostic item, a benchmark, an ability, a config key", () => {
  assertInert(diagnosticItemHover(item, []), "item, no config");
  assertInert(
    diagnosticItemHover(item, [
      { model: HOSTILE, config: `/w/${HOSTILE}.bprof.yaml`, chat: false, text: HOSTILE, tokens: 3 },
      { model: HOSTILE, config: `/w/${HOSTILE}.bprof.yaml`, chat: true, text: "", error: HOSTILE },
    ]),
    "item with renderings",
  );
  const benchmark = {
    name: HOSTILE,
    ability: HOSTILE,
    task: {
      name: HOSTILE,
      file: `/w/${HOSTILE}.yaml`,
      dataFile: `/w/${HOSTILE}.jsonl`,
      outputType: "multiple_choice",
      numFewshot: 0,
      items: [
        {
          kind: "multiple_choice",
          index: 0,
          line: 1,
          context: HOSTILE,
          prompt: { description: "", fewshot: [], text: HOSTILE },
          choices: [HOSTILE, HOSTILE],
          target: 1,
        },
      ],
    },
  } as unknown as ResolvedBenchmark;
  assertInert(benchmarkHover(benchmark, [model]), "benchmark");
  const generation = structuredClone(benchmark) as unknown as { task: { outputType: string; items: object[] } };
  generation.task.outputType = "generate_until";
  generation.task.items = [
    { kind: "generate_until", index: 0, context: HOSTILE, prompt: { description: "", fewshot: [], text: HOSTILE }, target: HOSTILE },
  ];
  assertInert(benchmarkHover(generation as unknown as ResolvedBenchmark, []), "generate_until benchmark");
  const ability: ResolvedAbility = { name: HOSTILE, files: [`/w/${HOSTILE}.diag.jsonl`], items: [item] };
  assertInert(abilityHover(ability, []), "ability");
  assert.equal(schemaHover([HOSTILE]), undefined, "a key the schema does not know has no hover");
});

test("completion: the k values' details name the models", () => {
  const items = configCompletions(
    "ablation:\n  k: ",
    { line: 1, character: 5 },
    {
      configFile: "/w/x.bprof.yaml",
      abilityNames: [],
      taskFiles: [],
      datasetFiles: [],
      modelFolders: [],
      modelParameters: [{ name: HOSTILE, total: 1000 }],
    },
  );
  const documented = items.filter((i) => i.documentation);
  assert.ok(documented.length > 0, "the k values have their details");
  for (const i of documented) assertInert(i.documentation!, `k ${i.label}`);
});

test("the data file's case hover and the trees' tooltips", () => {
  const flip = (document: CaseFlip["document"], ability: string | null): CaseFlip => ({
    model: HOSTILE,
    ability,
    selection: "top",
    k: 0.01,
    metric: "acc",
    document,
  });
  const choice: CaseFlip["document"] = {
    index: 3,
    direction: "wrong_to_right",
    target: 0,
    baselinePrediction: 1,
    ablatedPrediction: 0,
    baselineLogprobs: [-2, -1],
    ablatedLogprobs: [-1, -2],
    choiceBytes: [1, 1],
  };
  const generated: CaseFlip["document"] = {
    kind: "generate_until",
    index: 3,
    direction: "right_to_wrong",
    target: HOSTILE,
    baselineAnswer: HOSTILE,
    ablatedAnswer: HOSTILE,
    baselineResponse: HOSTILE,
    ablatedResponse: HOSTILE,
  };
  const cases: FileCases[] = [
    {
      configFile: `/w/${HOSTILE}.bprof.yaml`,
      runId: HOSTILE,
      runDir: "/w/.bprof/runs/r",
      stale: HOSTILE,
      lines: [{ line: 1, index: 3, benchmark: HOSTILE, flips: [flip(choice, HOSTILE), flip(generated, null)] }],
    },
  ];
  const hover = caseLinesHover(cases, 1, new Set(["wrong_to_right", "right_to_wrong"]));
  assert.ok(hover);
  assertInert(hover, "case hover");

  assertInert(profileEntryTooltip({ label: HOSTILE, detail: HOSTILE, files: [`/w/${HOSTILE}`] }), "Profiles entry");
  const cell = {
    row: HOSTILE,
    ability: HOSTILE,
    selection: "top",
    benchmark: HOSTILE,
    metric: "acc",
    ais: -0.5,
    ci: { low: -1, high: -0.1, confidence: 0.95 },
    significant: true,
    rightToWrong: 0,
    wrongToRight: 1,
    documents: [],
    omitted: 0,
  } as unknown as NegativeCell;
  const ref: CellRef = { model: HOSTILE, k: 0.01, ability: HOSTILE, selection: "top", benchmark: HOSTILE, method: "signed" };
  assertInert(negativeCellTooltip(cell, ref), "Negative AIS cell");
  assertInert(runTooltip({ id: HOSTILE, configFile: HOSTILE, status: "failed: x", message: HOSTILE, dir: HOSTILE }), "run");
  assertInert(shardTooltip({ label: HOSTILE, model: HOSTILE, work: HOSTILE, message: HOSTILE, events: HOSTILE }), "shard");
});
