// The hover on a data file's flipped document: the document named by its id and line, never by
// its index alone; the flip of the cell the file was opened from first, in full, the rest folded.
import assert from "node:assert/strict";
import { test } from "node:test";
import { caseLinesHover } from "../../../src/core/language/tooltips";
import { documentId } from "../../../src/core/lmeval/documents";
import type { CaseFlip, CellRef } from "../../../src/core/report/cases";
import { documentName } from "../../../src/core/report/documentName";
import type { FileCases } from "../../../src/core/workspace/service";

const BOTH = new Set(["wrong_to_right", "right_to_wrong"]);

/** The hover's Markdown with its escapes taken out: the text as the hover shows it. */
function hoverText(...args: Parameters<typeof caseLinesHover>): string {
  const markdown = caseLinesHover(...args);
  assert.ok(markdown, "a hover");
  return markdown.replace(/\\(.)/g, "$1");
}

function flip(ability: string | null, k: number, method?: "signed" | "paper"): CaseFlip {
  return {
    model: "demo",
    ability,
    selection: "top",
    ...(method ? { method } : {}),
    k,
    metric: "acc",
    document: {
      index: 5,
      direction: "wrong_to_right",
      target: 1,
      baselinePrediction: 0,
      ablatedPrediction: 1,
      baselineLogprobs: [-1.25, -2.5],
      ablatedLogprobs: [-3, -0.75],
      choiceBytes: [4, 4],
    },
  };
}

const FLIPS = [
  flip("Deductive Reasoning", 0.01024, "signed"),
  flip("Deductive Reasoning", 0.01024, "paper"),
  flip("Semantic Relationship", 0.01024, "signed"),
  flip("Semantic Relationship", 0.04096, "signed"),
  flip(null, 0.01024),
];

function cases(id?: string): FileCases[] {
  return [
    {
      configFile: "/w/demo.bprof.yaml",
      runId: "r1",
      runDir: "/w/.bprof/runs/r1",
      lines: [{ line: 6, index: 5, ...(id ? { id } : {}), benchmark: "demo_deductive", flips: FLIPS }],
    },
  ];
}

const SEMANTIC: CellRef = {
  model: "demo",
  k: 0.04096,
  ability: "Semantic Relationship",
  selection: "top",
  benchmark: "demo_deductive",
  method: "signed",
};

test("a document is named by its id and line; by its index only when it has neither", () => {
  assert.equal(documentName({ index: 5, id: "deductive-2-6", line: 6 }), "deductive-2-6 (line 6)");
  assert.equal(documentName({ index: 5, line: 6 }), "line 6");
  assert.equal(documentName({ index: 5, id: "deductive-2-6" }), "deductive-2-6");
  assert.equal(documentName({ index: 5 }), "document 5");
  assert.equal(documentId({ id: "deductive-2-6" }), "deductive-2-6");
  assert.equal(documentId({ id: 17 }), "17");
  assert.equal(documentId({ id: "  " }), undefined);
  assert.equal(documentId({ id: { nested: 1 } }), undefined);
  assert.equal(documentId({ question: "q" }), undefined);
});

test("the hover names the document by id and line, shows one flip in full and folds the rest", () => {
  const hover = hoverText(cases("deductive-2-6"), 6, BOTH);
  assert.match(hover, /^\*\*deductive-2-6 \(line 6\) of `demo_deductive`\*\*/);
  assert.doesNotMatch(hover, /Document 5|document 5/);
  // without a focus, the first flip in the run's order is the one in full
  const [full, folded] = hover.split("**4 more flips** of this document:");
  assert.ok(folded, hover);
  assert.match(full!, /Deductive Reasoning \(top, signed rule, k 0\.01024\)/);
  assert.match(full!, /log-probabilities A -1\.25 → -3\.00/);
  assert.equal(folded.trim().split("\n").length, 4, "one line for each folded flip");
  assert.doesNotMatch(folded, /log-probabilities/);
  assert.match(folded, /- wrong → right: the random control \(k 0\.01024\)/);
});

test("a document without an id is named by its line", () => {
  assert.match(hoverText(cases(), 6, BOTH), /^\*\*line 6 of `demo_deductive`\*\*/);
});

test("the hover opened from a cell puts that cell's flip first, in full", () => {
  const hover = hoverText(cases("deductive-2-6"), 6, BOTH, { runDir: "/w/.bprof/runs/r1", ref: SEMANTIC });
  const [full, folded] = hover.split("**4 more flips** of this document:");
  assert.match(full!, /when Semantic Relationship \(top, signed rule, k 0\.04096\) is ablated/);
  assert.doesNotMatch(full!, /Deductive Reasoning/);
  assert.match(folded!, /Deductive Reasoning \(top, signed rule, k 0\.01024\)/);
  assert.doesNotMatch(folded!, /k 0\.04096/);

  // the random control's flip carries no rule: a cell of any rule's view finds it
  const random = hoverText(cases(), 6, BOTH, {
    runDir: "/w/.bprof/runs/r1",
    ref: { model: "demo", k: 0.01024, ability: null, selection: "top", benchmark: "demo_deductive", method: "paper" },
  });
  assert.match(random.split("more flips")[0]!, /when the random control \(k 0\.01024\) is ablated/);
});

test("a cell of another run or benchmark leaves the order as it is", () => {
  const otherRun = hoverText(cases(), 6, BOTH, { runDir: "/w/.bprof/runs/r2", ref: SEMANTIC });
  const otherBenchmark = hoverText(cases(), 6, BOTH, {
    runDir: "/w/.bprof/runs/r1",
    ref: { ...SEMANTIC, benchmark: "demo_semantic" },
  });
  for (const hover of [otherRun, otherBenchmark]) assert.match(hover.split("more flips")[0]!, /Deductive Reasoning \(top, signed rule/);
});

test("a single flip has nothing to fold", () => {
  const one: FileCases[] = [{ ...cases()[0]!, lines: [{ line: 6, index: 5, benchmark: "demo_deductive", flips: [FLIPS[0]!] }] }];
  assert.doesNotMatch(hoverText(one, 6, BOTH), /more flip/);
});
