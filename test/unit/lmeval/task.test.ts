import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, before, test } from "node:test";
import { loadTask, loadTaskPlaces } from "../../../src/core/lmeval/task";
import { parseListLiteral } from "../../../src/core/lmeval/literal";
import { lmEvalTemplate } from "../../../src/core/lmeval/template";

let dir: string;
before(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), "bprof-task-"));
  await fs.writeFile(
    path.join(dir, "docs.jsonl"),
    [
      JSON.stringify({ q: "2+2?", options: ["3", "4"], label: "4" }),
      JSON.stringify({ q: "Capital of France?", options: ["Paris", "Rome", "Oslo"], label: "Paris" }),
      "",
    ].join("\n"),
  );
});
after(async () => fs.rm(dir, { recursive: true, force: true }));

async function taskFile(name: string, yaml: string): Promise<string> {
  const file = path.join(dir, name);
  await fs.writeFile(file, yaml);
  return file;
}

const BASE = "task: demo\ndataset_path: json\ndataset_kwargs:\n  data_files:\n    test: docs.jsonl\noutput_type: multiple_choice\n";

test("templates render with Jinja; a template naming a field is that field; text targets become indices", async () => {
  const file = await taskFile(
    "a.yaml",
    BASE + 'doc_to_text: "Q: {{q}}\\nA:"\ndoc_to_choice: options\ndoc_to_target: label\ntarget_delimiter: "  "\n',
  );
  const { task, problems } = await loadTask(file);
  assert.deepEqual(problems, []);
  assert.equal(task!.items.length, 2);
  assert.deepEqual(task!.items[1], {
    kind: "multiple_choice",
    index: 1,
    line: 2,
    context: "Q: Capital of France?\nA:",
    prompt: { description: "", fewshot: [], text: "Q: Capital of France?\nA:" },
    continuations: ["  Paris", "  Rome", "  Oslo"],
    choices: ["Paris", "Rome", "Oslo"],
    target: 0,
  });
  assert.equal((task!.items[0] as { target: number }).target, 1);
});

test("each document's line in its data file, where the document starts: JSON Lines, a JSON list under `field`, CSV with fields across lines", async () => {
  const task = (data: string) =>
    `task: lines\ndataset_path: ${data.endsWith(".csv") ? "csv" : "json"}\ndataset_kwargs:\n  data_files:\n    test: ${data}\noutput_type: multiple_choice\ndoc_to_text: q\ndoc_to_choice: options\ndoc_to_target: label\n`;
  const doc = (q: string) => ({ q, options: ["a", "b"], label: "a" });

  await fs.writeFile(
    path.join(dir, "lines.jsonl"),
    ["", JSON.stringify(doc("one")), "", "  ", JSON.stringify(doc("two")), ""].join("\r\n"),
  );
  // Pretty-printed, under a field, with a document spread over several lines.
  await fs.writeFile(path.join(dir, "lines.json"), JSON.stringify({ meta: { n: 2 }, rows: [doc("one"), doc("two")] }, null, 2));
  // A byte order mark, CRLF, a quoted question over three lines, a blank line between records.
  await fs.writeFile(
    path.join(dir, "lines.csv"),
    "\ufeffq,options,label\r\n\"first\r\nsecond, still\r\nthird\",\"['a', 'b']\",a\r\n\r\ntwo,\"['a', 'b']\",a\r\nthree,\"['a', 'b']\",a\r\n",
  );
  const placesOf = async (name: string, yaml: string, limit?: number) => {
    const { places, problems } = await loadTaskPlaces(await taskFile(name, yaml), limit === undefined ? {} : { limit });
    assert.deepEqual(
      problems.filter((p) => p.severity === "error"),
      [],
      name,
    );
    return places!.lines;
  };
  assert.deepEqual(await placesOf("lines-jsonl.yaml", task("lines.jsonl")), [2, 5]);
  const json = await fs.readFile(path.join(dir, "lines.json"), "utf8");
  const expected = json.split("\n").flatMap((l, i) => (l === "    {" ? [i + 1] : []));
  assert.equal(expected.length, 2);
  const underField = task("lines.json").replace("    test: lines.json\n", "    test: lines.json\n  field: rows\n");
  assert.deepEqual(await placesOf("lines-json.yaml", underField), expected);
  assert.deepEqual(await placesOf("lines-csv.yaml", task("lines.csv")), [2, 6, 7]);
  assert.deepEqual(await placesOf("lines-csv-limit.yaml", task("lines.csv"), 2), [2, 6], "limit keeps the first documents");
  const { task: csvTask } = await loadTask(path.join(dir, "lines-csv.yaml"));
  assert.deepEqual(
    csvTask!.items.map((i) => i.context),
    ["first\r\nsecond, still\r\nthird", "two", "three"],
    "the header's byte order mark is not part of a column's name",
  );
});

test("doc_to_choice as a Jinja template rendering a list literal, and limit", async () => {
  const file = await taskFile(
    "b.yaml",
    BASE + 'doc_to_text: q\ndoc_to_choice: "{{options}}"\ndoc_to_target: "{{ options.index(label) if false else 0 }}"\n',
  );
  const { task, problems } = await loadTask(file, { limit: 1 });
  assert.deepEqual(
    problems.filter((d) => d.severity === "error"),
    [],
  );
  assert.equal(task!.items.length, 1);
  assert.deepEqual(task!.items[0], {
    kind: "multiple_choice",
    index: 0,
    line: 1,
    context: "2+2?",
    prompt: { description: "", fewshot: [], text: "2+2?" },
    choices: ["3", "4"],
    continuations: [" 3", " 4"],
    target: 0,
  });
});

test("unsupported keys and output types are refused by name with their line", async () => {
  const file = await taskFile(
    "c.yaml",
    BASE.replace("multiple_choice", "loglikelihood_rolling") +
      "doc_to_text: q\ndoc_to_choice: options\ndoc_to_target: label\nuse_prompt: promptsource:x\n",
  );
  const { task, problems } = await loadTask(file);
  assert.equal(task, undefined);
  const messages = problems.map((d) => `${d.line}: ${d.message}`);
  assert.ok(
    messages.includes("6: output_type `loglikelihood_rolling` is not supported; use multiple_choice or generate_until"),
    messages.join("\n"),
  );
  assert.ok(messages.includes("10: task key `use_prompt` is not supported by Benchmark Profiler"), messages.join("\n"));
});

test("a target outside the choices is an error on the data line", async () => {
  const file = await taskFile("d.yaml", BASE + 'doc_to_text: q\ndoc_to_choice: options\ndoc_to_target: "{{ 7 }}"\n');
  const { problems } = await loadTask(file);
  assert.equal(problems.length, 2);
  assert.equal(problems[0]!.file, path.join(dir, "docs.jsonl"));
  assert.equal(problems[0]!.line, 1);
  assert.match(problems[0]!.message, /neither a choice nor an index below 2/);
});

test("a broken data line is reported with its line number", async () => {
  await fs.writeFile(path.join(dir, "bad.jsonl"), '{"q": "ok", "options": ["a", "b"], "label": "a"}\n{"q": oops}\n');
  const file = await taskFile(
    "e.yaml",
    BASE.replace("docs.jsonl", "bad.jsonl") + "doc_to_text: q\ndoc_to_choice: options\ndoc_to_target: label\n",
  );
  const { problems } = await loadTask(file);
  assert.equal(problems.length, 1);
  assert.equal(problems[0]!.line, 2);
  assert.match(problems[0]!.message, /^invalid JSON/);
});

test("list literals in JSON and Python quoting", () => {
  assert.deepEqual(parseListLiteral('["a", "b"]'), ["a", "b"]);
  assert.deepEqual(parseListLiteral("['it\\'s', \"b\" ,'c']"), ["it's", "b", "c"]);
  assert.equal(parseListLiteral("not a list"), undefined);
  assert.equal(parseListLiteral("['a' 'b']"), undefined);
});

test("few-shot from the test split follows lm-eval: Python's Random(1234).sample, n+1 drawn, the document dropped", async () => {
  // Expected picks computed with CPython: r = random.Random(1234); r.sample(range(10), 3) per document.
  //   doc 0 -> [7, 1, 0] -> 7, 1;  doc 1 -> [1, 0, 9] -> 0, 9;  doc 2 -> [1, 5, 3] -> 1, 5
  const docs = Array.from({ length: 10 }, (_, i) => JSON.stringify({ q: `q${i}`, a: `a${i}` })).join("\n");
  await fs.writeFile(path.join(dir, "ten.jsonl"), docs + "\n");
  const file = await taskFile(
    "fewshot.yaml",
    'task: fs\ndataset_path: json\ndataset_kwargs:\n  data_files:\n    test: ten.jsonl\noutput_type: generate_until\nfewshot_split: test\nnum_fewshot: 2\ndescription: "Answer.\\n\\n"\ndoc_to_text: "Q: {{q}}"\ndoc_to_target: a\n',
  );
  const { task, problems } = await loadTask(file, { limit: 3 });
  assert.deepEqual(problems, []);
  const shot = (i: number) => `Q: q${i} a${i}`;
  assert.deepEqual(
    task!.items.map((i) => i.context),
    [
      `Answer.\n\n${shot(7)}\n\n${shot(1)}\n\nQ: q0`,
      `Answer.\n\n${shot(0)}\n\n${shot(9)}\n\nQ: q1`,
      `Answer.\n\n${shot(1)}\n\n${shot(5)}\n\nQ: q2`,
    ],
  );
  assert.deepEqual(task!.generation, { until: ["\n\n"], maxGenToks: 256 });
});

test("few-shot samples with first_n: multiple-choice examples show the answer's text", async () => {
  const file = await taskFile(
    "samples.yaml",
    BASE +
      'doc_to_text: "{{q}}"\ndoc_to_choice: options\ndoc_to_target: label\nnum_fewshot: 1\nfewshot_delimiter: " | "\nfewshot_config:\n  sampler: first_n\n  samples:\n    - {q: "1+1?", options: ["2", "3"], label: "2"}\n',
  );
  const { task, problems } = await loadTask(file);
  assert.deepEqual(problems, []);
  assert.equal(task!.items[0]!.context, "1+1? 2 | 2+2?");
});

test("a !function whose module is missing, unknown dataset kwargs and unsupported filters are refused with their position", async () => {
  const file = await taskFile("fn.yaml", BASE + "doc_to_text: q\ndoc_to_choice: options\ndoc_to_target: !function utils.target\n");
  const { problems } = await loadTask(file);
  assert.equal(problems.length, 1);
  assert.equal(problems[0]!.line, 9);
  assert.match(problems[0]!.message, /^`doc_to_target` \(`!function utils\.target`\): LookupError: no module file .*utils\.py$/);

  const file2 = await taskFile(
    "filters.yaml",
    BASE.replace("output_type: multiple_choice", "output_type: generate_until") +
      "doc_to_text: q\ndoc_to_target: label\nfilter_list:\n  - name: x\n    filter:\n      - function: word_count\n      - function: take_first_k\n      - function: map\n        mapping_dict: [A, B]\n",
  );
  const { problems: d2 } = await loadTask(file2);
  assert.deepEqual(
    d2.map((d) => [d.line, d.message]),
    [
      [
        12,
        "filter function `word_count` is not supported (supported: regex, take_first, lowercase, uppercase, remove_whitespace, take_first_k, majority_vote, map, multi_choice_regex, custom)",
      ],
      [13, "a take_first_k filter needs `k`, a positive integer"],
      [14, "a map filter needs `mapping_dict`, a mapping of responses to answers"],
    ],
  );
});

test("include cycles and missing includes are errors on the include key", async () => {
  await taskFile("cyc-a.yaml", "include: cyc-b.yaml\ntask: a\n");
  const b = await taskFile("cyc-b.yaml", "include: cyc-a.yaml\n");
  const { problems } = await loadTask(b);
  assert.match(problems[0]!.message, /^include cycle through/);
  const missing = await taskFile("inc-missing.yaml", "include: nowhere.yaml\n");
  assert.match((await loadTask(missing)).problems[0]!.message, /^included file not found/);
});

test("csv and parquet documents", async () => {
  await fs.writeFile(path.join(dir, "docs.csv"), 'q,a,b,label\n"2+2?",3,4,1\n"Capital, of France?",Paris,Rome,0\n');
  const csv = await taskFile(
    "csv.yaml",
    BASE.replace("json", "csv").replace("docs.jsonl", "docs.csv") +
      'doc_to_text: q\ndoc_to_choice: "{{ [a, b] }}"\ndoc_to_target: "{{label}}"\n',
  );
  const { task, problems } = await loadTask(csv);
  assert.deepEqual(problems, []);
  assert.deepEqual(
    task!.items.map((i) => [i.context, (i as { choices: string[] }).choices, (i as { target: number }).target]),
    [
      ["2+2?", ["3", "4"], 1],
      ["Capital, of France?", ["Paris", "Rome"], 0],
    ],
  );

  const { parquetWriteBuffer } = await import("hyparquet-writer");
  const buffer = parquetWriteBuffer({
    columnData: [
      { name: "q", data: ["a?", "b?"] },
      { name: "label", data: [1, 0] },
    ],
  });
  await fs.writeFile(path.join(dir, "docs.parquet"), new Uint8Array(buffer));
  const pq = await taskFile(
    "pq.yaml",
    BASE.replace("json", "parquet").replace("docs.jsonl", "docs.parquet") +
      "doc_to_text: q\ndoc_to_choice: \"{{ ['no', 'yes'] }}\"\ndoc_to_target: \"{{label}}\"\n",
  );
  const parquet = await loadTask(pq);
  assert.deepEqual(parquet.problems, []);
  assert.deepEqual(
    parquet.task!.items.map((i) => [i.context, (i as { target: number }).target]),
    [
      ["a?", 1],
      ["b?", 0],
    ],
  );
});

test("templates render as lm-eval's jinja2 does: trailing newlines kept, blocks not trimmed", () => {
  assert.equal(lmEvalTemplate("A\n\n").render({}), "A\n\n");
  assert.equal(lmEvalTemplate("{% if x %}\nyes{% endif %}\n  {{ y }}").render({ x: true, y: 2 }), "\nyes\n  2");
});

test("ARC's task keys: doc_to_target calls .index() on the labels, as lm-eval's arc_easy does; a label not in the list is an error on its data line", async () => {
  const docs = [
    {
      id: "q1",
      question: "Which gas do plants take in for photosynthesis?",
      choices: { text: ["oxygen", "carbon dioxide", "helium"], label: ["A", "B", "C"] },
      answerKey: "B",
    },
    {
      id: "q2",
      question: "What is frozen water called?",
      choices: { text: ["steam", "ice", "fog", "dew"], label: ["1", "2", "3", "4"] },
      answerKey: "2",
    },
    { id: "q3", question: "Which is a mammal?", choices: { text: ["whale", "shark"], label: ["A", "B"] }, answerKey: "E" },
  ];
  await fs.writeFile(path.join(dir, "arc.jsonl"), docs.map((d) => JSON.stringify(d)).join("\n") + "\n");
  const yaml = [
    "task: arc_local",
    "dataset_path: json",
    "dataset_kwargs: {data_files: {test: arc.jsonl}}",
    "output_type: multiple_choice",
    'doc_to_text: "Question: {{question}}\\nAnswer:"',
    'doc_to_target: "{{choices.label.index(answerKey)}}"',
    'doc_to_choice: "{{choices.text}}"',
    "",
  ].join("\n");
  const { task } = await loadTask(await taskFile("arc.yaml", yaml), { limit: 2 });
  assert.deepEqual(
    task!.items.map((i) => [i.kind === "multiple_choice" && i.choices, i.kind === "multiple_choice" && i.target]),
    [
      [["oxygen", "carbon dioxide", "helium"], 1],
      [["steam", "ice", "fog", "dew"], 1],
    ],
  );
  const { problems } = await loadTask(await taskFile("arc.yaml", yaml));
  assert.deepEqual(
    problems.map((d) => `${path.basename(d.file)}:${d.line}: ${d.message}`),
    ['arc.jsonl:3: document 2: "E" is not in list ["A","B"]'],
  );
});

test("Python's .index() on strings, and an attribute named index is still an attribute", () => {
  assert.equal(lmEvalTemplate("{{ word.index('c') }}|{{ doc.index }}").render({ word: "abc", doc: { index: 5 } }), "2|5");
  assert.throws(() => lmEvalTemplate("{{ word.index('z') }}").render({ word: "abc" }), /substring not found/);
});
