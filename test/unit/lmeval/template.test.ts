// lmEvalTemplate's shortcuts (fields printed directly, only named fields handed to the library)
// against the library's plain render of the whole document: the same text, or the same error.
import assert from "node:assert/strict";
import { test } from "node:test";
import { parse, Template, tokenize } from "@huggingface/jinja";
import { lmEvalTemplate } from "../../../src/core/lmeval/template";

/** The straightforward render: lm-eval's Jinja options, the whole document given to the library. */
function libraryRender(source: string, doc: Record<string, unknown>): string {
  const text = source.endsWith("\n") ? source + "\n" : source;
  const template = Object.create(Template.prototype) as Template;
  (template as unknown as { parsed: unknown }).parsed = parse(tokenize(text, { lstrip_blocks: false, trim_blocks: false }));
  return template.render(doc);
}

function outcome(render: () => string): { text: string } | { error: string } {
  try {
    return { text: render() };
  } catch (e) {
    return { error: (e as Error).message };
  }
}

const TEMPLATES = [
  "Question: {{question}}\nAnswer:",
  "{{answer}}",
  "{{ choices.text }}",
  "{{choices.label}}: {{choices.text}}",
  "{{ meta.source.name }} / {{meta.year}}",
  "{{ meta.missing }}|{{ missing }}|{{ meta.items }}",
  "{{ question.upper() }}",
  "{{ question | trim }}\n",
  "{% if answer == 1 %}one{% else %}{{answer}}{% endif %}\n\n",
  "{% for c in choices.text %}{{loop.index}}. {{c}}\n{% endfor %}",
  "{{ true }}{{ none }}{{ range(2) | list }}",
  "{{score}} {{ratio}} {{flag}} {{nothing}} {{big}}",
  "{{score}}|{{ratio}}",
  "{{meta.year}}",
  "{{flag}}",
  "{{nothing}}",
  "{{big}}",
  "{{bytes.length}}|{{choices.text.length}}",
  "{{flags}}|{{holes}}",
  "plain text, no fields\n",
  "",
];

const DOCS: Record<string, unknown>[] = [
  { question: "What is 2+2?", answer: 1, choices: { text: ["3", "4"], label: ["A", "B"] }, meta: { source: { name: "arc" }, year: 2024 } },
  {
    question: "  spaced  ",
    answer: 0,
    choices: { text: ["it's", 'say "hi"', "back\\slash\n\ttab", "caf\u00e9 \ud83d\ude42 \ud800", ""], label: ["A", "B"] },
    meta: { source: { name: "x" }, year: -0 },
  },
  {
    question: "numbers",
    answer: 0,
    choices: { text: [1, 2.5, -0, NaN, Infinity, 1e21], label: [true, null] },
    meta: { source: { name: [["nested"]] }, year: 3 },
    flags: [true, false],
    holes: [1, undefined],
  },
  {
    question: "",
    answer: "B",
    choices: { text: [], label: [] },
    meta: { source: null, year: 1.5 },
    score: 0.5,
    ratio: 2,
    flag: true,
    nothing: null,
  },
  { question: "nested", answer: 3, choices: { text: ["a"], label: ["A"] }, meta: { source: { name: ["list"] }, year: 1e21 }, big: 2 ** 70 },
  // The library refuses these; the shortcuts must fail the same way.
  { question: "global name", answer: 1, true: "shadow", choices: { text: ["a"], label: ["A"] } },
  { question: "a bigint", answer: 1, big: 10n, choices: { text: ["a"], label: ["A"] } },
  { question: "a deep bigint", answer: 1, choices: { text: ["a"], label: ["A"] }, meta: { source: { name: 1n } } },
  { question: "a date", answer: new Date(0), choices: { text: ["a"], label: ["A"] }, meta: new Date(0) },
  // Parquet's binary columns: an object to the library, whose entries are its bytes.
  { question: "bytes", answer: 1, choices: { text: ["a", "b"], label: ["A", "B"] }, bytes: new Uint8Array([1, 2, 3]) },
];

/** The value at a dotted path of a document, as the library reads it (own entries of objects only). */
function valueAt(doc: Record<string, unknown>, dotted: string): unknown {
  let value: unknown = doc;
  for (const key of dotted.split(".")) {
    if (typeof value !== "object" || value === null || !Object.prototype.hasOwnProperty.call(value, key)) return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

test("lmEvalTemplate renders as the library does with the whole document, errors included; printing an undefined name raises", () => {
  let strict = 0;
  for (const source of TEMPLATES) {
    const template = lmEvalTemplate(source);
    for (const doc of DOCS) {
      // Twice: the second render takes the cached checks of the document.
      for (let round = 0; round < 2; round++) {
        const ours = outcome(() => template.render(doc));
        const where = `${JSON.stringify(source)} on ${String(doc.question)}`;
        // lm-eval's StrictUndefined: where the library prints nothing for a name the document
        // lacks, this raises, naming it. Everything else is the library's text or error.
        const undefinedName = "error" in ours ? /^`([\w.]+)` is undefined/.exec(ours.error)?.[1] : undefined;
        if (undefinedName) {
          assert.equal(valueAt(doc, undefinedName), undefined, `${where}: ${undefinedName} is in the document`);
          assert.ok(source.includes(undefinedName), where);
          strict++;
          continue;
        }
        assert.deepEqual(
          ours,
          outcome(() => libraryRender(source, doc)),
          where,
        );
      }
    }
  }
  assert.ok(strict > 0, "some of the cases print an undefined name");
});
