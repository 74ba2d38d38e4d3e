import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, before, test } from "node:test";
import { loadTask } from "../../src/core/datasets/task";
import { parseListLiteral } from "../../src/core/prompts/literal";

let dir: string;
before(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), "bprof-task-"));
  await fs.writeFile(path.join(dir, "docs.jsonl"), [
    JSON.stringify({ q: "2+2?", options: ["3", "4"], label: "4" }),
    JSON.stringify({ q: "Capital of France?", options: ["Paris", "Rome", "Oslo"], label: "Paris" }),
    "",
  ].join("\n"));
});
after(async () => fs.rm(dir, { recursive: true, force: true }));

async function taskFile(name: string, yaml: string): Promise<string> {
  const file = path.join(dir, name);
  await fs.writeFile(file, yaml);
  return file;
}

const BASE = "task: demo\ndataset_path: json\ndataset_kwargs:\n  data_files:\n    test: docs.jsonl\noutput_type: multiple_choice\n";

test("templates render with Jinja; a template naming a field is that field; text targets become indices", async () => {
  const file = await taskFile("a.yaml", BASE + 'doc_to_text: "Q: {{q}}\\nA:"\ndoc_to_choice: options\ndoc_to_target: label\ntarget_delimiter: "  "\n');
  const { task, diagnostics } = await loadTask(file);
  assert.deepEqual(diagnostics, []);
  assert.equal(task!.items.length, 2);
  assert.deepEqual(task!.items[1], { index: 1, context: "Q: Capital of France?\nA:", continuations: ["  Paris", "  Rome", "  Oslo"], choices: ["Paris", "Rome", "Oslo"], target: 0 });
  assert.equal(task!.items[0]!.target, 1);
});

test("doc_to_choice as a Jinja template rendering a list literal, and limit", async () => {
  const file = await taskFile("b.yaml", BASE + "doc_to_text: q\ndoc_to_choice: \"{{options}}\"\ndoc_to_target: \"{{ options.index(label) if false else 0 }}\"\n");
  const { task, diagnostics } = await loadTask(file, 1);
  assert.deepEqual(diagnostics.filter((d) => d.severity === "error"), []);
  assert.equal(task!.items.length, 1);
  assert.deepEqual(task!.items[0]!.choices, ["3", "4"]);
});

test("unsupported keys and output types are refused by name with their line", async () => {
  const file = await taskFile("c.yaml", BASE.replace("multiple_choice", "loglikelihood_rolling") + "doc_to_text: q\ndoc_to_choice: options\ndoc_to_target: label\nprocess_docs: !function utils.process\n");
  const { task, diagnostics } = await loadTask(file);
  assert.equal(task, undefined);
  const messages = diagnostics.map((d) => `${d.line}: ${d.message}`);
  assert.ok(messages.includes("6: output_type `loglikelihood_rolling` is not supported yet; use multiple_choice"), messages.join("\n"));
  assert.ok(messages.includes("10: task key `process_docs` is not supported by Benchmark Profiler"), messages.join("\n"));
});

test("a target outside the choices is an error on the data line", async () => {
  const file = await taskFile("d.yaml", BASE + "doc_to_text: q\ndoc_to_choice: options\ndoc_to_target: \"{{ 7 }}\"\n");
  const { diagnostics } = await loadTask(file);
  assert.equal(diagnostics.length, 2);
  assert.equal(diagnostics[0]!.file, path.join(dir, "docs.jsonl"));
  assert.equal(diagnostics[0]!.line, 1);
  assert.match(diagnostics[0]!.message, /neither a choice nor an index below 2/);
});

test("a broken data line is reported with its line number", async () => {
  await fs.writeFile(path.join(dir, "bad.jsonl"), '{"q": "ok", "options": ["a", "b"], "label": "a"}\n{"q": oops}\n');
  const file = await taskFile("e.yaml", BASE.replace("docs.jsonl", "bad.jsonl") + "doc_to_text: q\ndoc_to_choice: options\ndoc_to_target: label\n");
  const { diagnostics } = await loadTask(file);
  assert.equal(diagnostics.length, 1);
  assert.equal(diagnostics[0]!.line, 2);
  assert.match(diagnostics[0]!.message, /^invalid JSON/);
});

test("list literals in JSON and Python quoting", () => {
  assert.deepEqual(parseListLiteral('["a", "b"]'), ["a", "b"]);
  assert.deepEqual(parseListLiteral("['it\\'s', \"b\" ,'c']"), ["it's", "b", "c"]);
  assert.equal(parseListLiteral("not a list"), undefined);
  assert.equal(parseListLiteral("['a' 'b']"), undefined);
});
