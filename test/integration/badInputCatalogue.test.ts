// The catalogue of bad input: each kind of broken file a user (or an attacker) can hand bprof, in
// a copy of a small but complete project, checked with `bprof validate` as a user runs it. Every
// one must end with exit 2 and an error at the file, line and code where the fault is, never a
// stack trace, an internal error or a hang. docs/reliability.md states the counts.
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, before, describe, test } from "node:test";
import { bprof, repoRoot } from "../support/cli";
import { itemHash } from "../../src/core/diagnostic/review/reviewFile";
import { DIAGNOSTIC, makeProfileProject, QUANT as QUANT_ABILITY } from "../support/profileProject";

const CONFIG = "profile.bprof.yaml";
const TASK = "tasks/tiny_yes.yaml";
const DATA = "tasks/tiny_yes.jsonl";
const QUANT = "diag/quantitative.diag.jsonl";
const SPATIAL = "diag/spatial.diag.jsonl";
const MODEL_CONFIG = "model/config.json";
const REVIEW = "diag/quantitative.review.jsonl";
/** The content hash of the project's first quantitative item, as a review records it. */
const QUANT_0_HASH = itemHash({ ability: QUANT_ABILITY, ...DIAGNOSTIC[QUANT_ABILITY]![0]! });

/** A new text for a file of the project, from its current text. */
type Edit = (text: string) => string | Buffer;

interface BadInput {
  name: string;
  edits: Record<string, Edit | "delete" | "directory">;
  /** The file of the error, and the text of its line (first line that contains it); undefined: line 1. */
  at: [file: string, needle?: string];
  code: string;
  /** A word the message must hold, where the code alone does not say enough. */
  says?: RegExp;
  /** Options of `bprof validate` before the config (a flag the case is about). */
  args?: string[];
}

const replace =
  (from: string | RegExp, to: string): Edit =>
  (text) => {
    const edited = text.replace(from, to);
    if (edited === text) throw new Error(`the edit found nothing to replace: ${String(from)}`);
    return edited;
  };
const append =
  (more: string): Edit =>
  (text) =>
    text + more;
const whole =
  (text: string): Edit =>
  () =>
    text;
const latin1 =
  (edit: Edit): Edit =>
  (text) =>
    Buffer.from(edit(text) as string, "latin1");
/** Line `n` (1-based) of a JSONL file, as an object, edited. */
const jsonLine =
  (n: number, change: (item: Record<string, unknown>) => unknown): Edit =>
  (text) => {
    const lines = text.trim().split("\n");
    lines[n - 1] = JSON.stringify(change(JSON.parse(lines[n - 1]!)));
    return lines.join("\n") + "\n";
  };
const rawLine =
  (n: number, line: string): Edit =>
  (text) => {
    const lines = text.trim().split("\n");
    lines[n - 1] = line;
    return lines.join("\n") + "\n";
  };

/** A JSON line nested 100,000 deep, with a problem to place after it (`question` is not a string). */
const DEEP_LINE = `{"a":${"[".repeat(100_000)}${"]".repeat(100_000)}, "question": 5}`;

/** Nine levels of nine aliases, the "billion laughs" pattern. */
const ALIAS_BOMB =
  [
    "bomb_a: &a [x, x, x, x, x, x, x, x, x]",
    ..."bcdef".split("").map((k, i) => `bomb_${k}: &${k} [${Array(9).fill(`*${"abcdef"[i]}`).join(", ")}]`),
  ].join("\n") + "\n";

const CONFIG_CASES: BadInput[] = [
  {
    name: "`review: accepted` on a dataset that has no review file",
    edits: {
      [CONFIG]: replace("    data: [./diag/spatial.diag.jsonl]\n", "    data: [./diag/spatial.diag.jsonl]\n    review: accepted\n"),
    },
    at: [CONFIG, "review: accepted"],
    code: "config.review-missing",
  },
  {
    name: "a YAML flow list left open",
    edits: { [CONFIG]: replace("k: [0.01, 0.001]", "k: [0.01, 0.001") },
    at: [CONFIG, "selections"],
    code: "yaml.syntax",
  },
  {
    name: "a tab in the indentation",
    edits: { [CONFIG]: replace("  batch_size: 2", "\tbatch_size: 2") },
    at: [CONFIG, "batch_size"],
    code: "yaml.syntax",
  },
  { name: "a key given twice", edits: { [CONFIG]: append("seed: 4\n") }, at: [CONFIG, "seed: 4"], code: "yaml.syntax" },
  { name: "a YAML alias bomb", edits: { [CONFIG]: append(ALIAS_BOMB) }, at: [CONFIG, "*a"], code: "yaml.syntax", says: /alias/ },
  {
    name: "bytes that are not UTF-8",
    edits: { [CONFIG]: latin1(replace("seed: 3", "seed: 3 # caf\u00e9")) },
    at: [CONFIG, "seed"],
    code: "file.not-utf8",
  },
  {
    name: "a list where the config is a mapping",
    edits: { [CONFIG]: whole("- models\n- benchmarks\n") },
    at: [CONFIG],
    code: "config.invalid-value",
  },
  { name: "an empty config", edits: { [CONFIG]: whole("") }, at: [CONFIG], code: "config.invalid-value" },
  {
    name: "a misspelt top-level key",
    edits: { [CONFIG]: replace("seed: 3", "sede: 3") },
    at: [CONFIG, "sede"],
    code: "config.unknown-key",
    says: /seed/,
  },
  {
    name: "a misspelt model key",
    edits: { [CONFIG]: replace("    name: tiny-llama", "    nmae: tiny-llama") },
    at: [CONFIG, "nmae"],
    code: "config.unknown-key",
    says: /name/,
  },
  {
    name: "no models",
    edits: { [CONFIG]: replace("models:\n  - path: ./model\n    name: tiny-llama\n", "models: []\n") },
    at: [CONFIG, "models"],
    code: "config.invalid-value",
  },
  {
    name: "a model folder that does not exist",
    edits: { [CONFIG]: replace("path: ./model", "path: ./no-model") },
    at: [CONFIG, "no-model"],
    code: "config.model-folder",
  },
  {
    name: "a model path that is a file",
    edits: { [CONFIG]: replace("path: ./model", "path: ./tasks/tiny_yes.yaml") },
    at: [CONFIG, "path:"],
    code: "config.model-folder",
  },
  {
    name: "two models with one name",
    edits: { [CONFIG]: replace("    name: tiny-llama\n", "    name: tiny-llama\n  - path: ./model\n    name: tiny-llama\n") },
    at: [CONFIG, "  - path: ./model\n    name: tiny-llama\nbenchmarks"],
    code: "config.duplicate-name",
  },
  {
    name: "two model names that share a folder",
    edits: { [CONFIG]: replace("    name: tiny-llama\n", "    name: tiny llama\n  - path: ./model\n    name: tiny_llama\n") },
    at: [CONFIG, "  - path: ./model\n    name: tiny_llama"],
    code: "config.duplicate-name",
  },
  {
    name: "an empty model name",
    edits: { [CONFIG]: replace("name: tiny-llama", "name: ''") },
    at: [CONFIG, "name:"],
    code: "config.invalid-value",
  },
  {
    name: "an unknown dtype",
    edits: { [CONFIG]: replace("    name: tiny-llama\n", "    name: tiny-llama\n    dtype: int8\n") },
    at: [CONFIG, "dtype"],
    code: "config.not-allowed",
  },
  {
    name: "a max_length of 1",
    edits: { [CONFIG]: replace("    name: tiny-llama\n", "    name: tiny-llama\n    max_length: 1\n") },
    at: [CONFIG, "max_length"],
    code: "config.invalid-value",
  },
  {
    name: "a max_length that is text",
    edits: { [CONFIG]: replace("    name: tiny-llama\n", "    name: tiny-llama\n    max_length: long\n") },
    at: [CONFIG, "max_length"],
    code: "config.invalid-value",
  },
  {
    name: "a max_length too small for any document",
    edits: { [CONFIG]: replace("    name: tiny-llama\n", "    name: tiny-llama\n    max_length: 4\n") },
    at: [DATA],
    code: "task.document",
  },
  {
    name: "a chat template the model does not have",
    edits: { [CONFIG]: replace("    name: tiny-llama\n", "    name: tiny-llama\n    chat_template: true\n") },
    at: [CONFIG, "chat_template"],
    code: "config.chat-template",
  },
  {
    name: "a task file that does not exist",
    edits: { [CONFIG]: replace("./tasks/tiny_yes.yaml", "./tasks/none.yaml") },
    at: [CONFIG, "none.yaml"],
    code: "config.task-not-found",
  },
  {
    name: "a task name no file defines",
    edits: { [CONFIG]: replace("task: ./tasks/tiny_yes.yaml", "task: no_such_task") },
    at: [CONFIG, "no_such_task"],
    code: "config.task-not-found",
  },
  {
    name: "no benchmarks key",
    edits: { [CONFIG]: replace("benchmarks:\n  - task: ./tasks/tiny_yes.yaml\n", "") },
    at: [CONFIG],
    code: "config.missing-field",
    says: /benchmarks/,
  },
  {
    name: "a benchmark without its task",
    edits: { [CONFIG]: replace("  - task: ./tasks/tiny_yes.yaml", "  - name: tiny") },
    at: [CONFIG, "  - name: tiny\n"],
    code: "config.missing-field",
  },
  {
    name: "an ability that is not one of the ten",
    edits: { [CONFIG]: replace("name: Spatial Reasoning", "name: Spatial Reasonin") },
    at: [CONFIG, "data: [./diag/spatial"],
    code: "config.ability-no-items",
    says: /Spatial Reasoning/,
  },
  {
    name: "an ability declared twice",
    edits: { [CONFIG]: replace("ablation:", "  - name: 'Quantitative Reasoning'\n    data: ./diag/quantitative.diag.jsonl\nablation:") },
    at: [CONFIG, "'Quantitative Reasoning'"],
    code: "config.ability-declared-twice",
  },
  {
    name: "an ability dataset that does not exist",
    edits: { [CONFIG]: replace("./diag/quantitative.diag.jsonl", "./diag/missing.diag.jsonl") },
    at: [CONFIG, "missing.diag"],
    code: "config.dataset-not-found",
  },
  {
    name: "an ability dataset given as a number",
    edits: { [CONFIG]: replace("data: ./diag/quantitative.diag.jsonl", "data: 5") },
    at: [CONFIG, "data: 5"],
    code: "config.invalid-value",
  },
  { name: "k of 0", edits: { [CONFIG]: replace("k: [0.01, 0.001]", "k: [0.01, 0]") }, at: [CONFIG, "  k:"], code: "config.k-out-of-range" },
  { name: "k past 1", edits: { [CONFIG]: replace("k: [0.01, 0.001]", "k: [1.5]") }, at: [CONFIG, "  k:"], code: "config.k-out-of-range" },
  { name: "k empty", edits: { [CONFIG]: replace("k: [0.01, 0.001]", "k: []") }, at: [CONFIG, "  k:"], code: "config.invalid-value" },
  { name: "k as text", edits: { [CONFIG]: replace("k: [0.01, 0.001]", "k: [ten]") }, at: [CONFIG, "  k:"], code: "config.invalid-value" },
  {
    name: "k repeated",
    edits: { [CONFIG]: replace("k: [0.01, 0.001]", "k: [0.01, 0.01]") },
    at: [CONFIG, "  k:"],
    code: "config.repeated-value",
  },
  {
    name: "k so large that a top set cannot be found",
    edits: { [CONFIG]: replace("k: [0.01, 0.001]", "k: [0.9]") },
    at: [CONFIG, "  k:"],
    code: "config.k-too-large",
  },
  {
    name: "an unknown selection",
    edits: { [CONFIG]: replace("selections: [top, random]", "selections: [top, middle]") },
    at: [CONFIG, "selections"],
    code: "config.not-allowed",
  },
  {
    name: "a batch size of 0",
    edits: { [CONFIG]: replace("batch_size: 2", "batch_size: 0") },
    at: [CONFIG, "batch_size"],
    code: "config.invalid-value",
  },
  {
    name: "a fractional batch size",
    edits: { [CONFIG]: replace("batch_size: 2", "batch_size: 1.5") },
    at: [CONFIG, "batch_size"],
    code: "config.invalid-value",
  },
  {
    name: "an unknown importance rule",
    edits: { [CONFIG]: replace("batch_size: 2", "batch_size: 2\n  method: absolute") },
    at: [CONFIG, "method"],
    code: "config.not-allowed",
  },
  {
    name: "layer exclusions that leave no layer",
    edits: { [CONFIG]: replace("batch_size: 2", "batch_size: 2\n  front_removal: 2\n  back_removal: 2") },
    at: [CONFIG, "front_removal"],
    code: "config.layers-excluded",
  },
  { name: "a negative seed", edits: { [CONFIG]: replace("seed: 3", "seed: -1") }, at: [CONFIG, "seed"], code: "config.invalid-value" },
  { name: "a seed past 2^64", edits: { [CONFIG]: replace("seed: 3", "seed: 1e400") }, at: [CONFIG, "seed"], code: "config.invalid-value" },
  {
    name: "zero bootstrap resamples",
    edits: { [CONFIG]: replace("resamples: 500", "resamples: 0") },
    at: [CONFIG, "resamples"],
    code: "config.invalid-value",
  },
  {
    name: "a confidence of 2",
    edits: { [CONFIG]: replace("resamples: 500", "resamples: 500\n  confidence: 2") },
    at: [CONFIG, "confidence"],
    code: "config.invalid-value",
  },
  { name: "threads of 0", edits: { [CONFIG]: append("threads: 0\n") }, at: [CONFIG, "threads"], code: "config.invalid-value" },
  {
    name: "an output folder that is a file",
    edits: { [CONFIG]: append("output: ./tasks/tiny_yes.yaml\n") },
    at: [CONFIG, "output"],
    code: "config.output",
  },
  {
    name: "an output folder under a file",
    edits: { [CONFIG]: append("output: ./tasks/tiny_yes.yaml/runs\n") },
    at: [CONFIG, "output"],
    code: "config.output",
  },
  { name: "an unknown target", edits: { [CONFIG]: append("target: cloud\n") }, at: [CONFIG, "target"], code: "config.not-allowed" },
  {
    name: "an SSH target without a host",
    edits: { [CONFIG]: append("target:\n  ssh:\n    port: 22\n") },
    at: [CONFIG, "    port: 22"],
    code: "config.missing-field",
    says: /host/,
  },
  {
    name: "an SSH port out of range",
    edits: { [CONFIG]: append("target:\n  ssh:\n    host: gpu1\n    port: 70000\n") },
    at: [CONFIG, "port"],
    code: "config.invalid-value",
  },
  {
    name: "an SSH ProxyCommand",
    edits: { [CONFIG]: append("target:\n  ssh:\n    host: gpu1\n    options:\n      ProxyCommand: touch /tmp/owned\n") },
    at: [CONFIG, "ProxyCommand"],
    code: "config.ssh-option-runs-commands",
  },
  {
    name: "an SSH LocalCommand",
    edits: {
      [CONFIG]: append(
        "target:\n  ssh:\n    host: gpu1\n    options:\n      PermitLocalCommand: 'yes'\n      LocalCommand: touch /tmp/owned\n",
      ),
    },
    at: [CONFIG, "PermitLocalCommand"],
    code: "config.ssh-option-runs-commands",
  },
  {
    name: "an SSH option key that smuggles a command",
    edits: { [CONFIG]: append("target:\n  ssh:\n    host: gpu1\n    options:\n      'ProxyCommand=touch /tmp/owned #': 'x'\n") },
    at: [CONFIG, "ProxyCommand="],
    code: "config.invalid-value",
    says: /not an ssh option/,
  },
  {
    name: "an SSH ProxyJump that holds a command",
    edits: { [CONFIG]: append("target:\n  ssh:\n    host: gpu1\n    options:\n      ProxyJump: 'x$(touch /tmp/owned)@bastion'\n") },
    at: [CONFIG, "ProxyJump"],
    code: "config.ssh-option-value",
    says: /\[user@\]host\[:port\]/,
  },
  {
    name: "an SSH XAuthLocation with ForwardX11",
    edits: {
      [CONFIG]: append("target:\n  ssh:\n    host: gpu1\n    options:\n      XAuthLocation: /tmp/owned.sh\n      ForwardX11: 'yes'\n"),
    },
    at: [CONFIG, "XAuthLocation"],
    code: "config.ssh-option-not-allowed",
  },
  {
    name: "an SSH host with shell characters",
    edits: { [CONFIG]: append("target:\n  ssh:\n    host: 'gpu1$(touch /tmp/owned)'\n") },
    at: [CONFIG, "host:"],
    code: "config.invalid-value",
  },
  {
    name: "an SSH KnownHostsCommand",
    edits: { [CONFIG]: append("target:\n  ssh:\n    host: gpu1\n    options:\n      KnownHostsCommand: /bin/true\n") },
    at: [CONFIG, "KnownHostsCommand"],
    code: "config.ssh-option-runs-commands",
  },
  {
    name: "an SSH identity file that does not exist",
    edits: { [CONFIG]: append("target:\n  ssh:\n    host: gpu1\n    identity_file: ./no-key\n") },
    at: [CONFIG, "identity_file"],
    code: "config.identity-file-not-found",
  },
  {
    name: "a Slurm time in the wrong form",
    edits: { [CONFIG]: append("target:\n  slurm:\n    time: 2 hours\n") },
    at: [CONFIG, "time"],
    code: "config.invalid-value",
  },
  {
    name: "a target with two kinds",
    edits: { [CONFIG]: append("target:\n  ssh:\n    host: gpu1\n  slurm:\n    time: '10'\n") },
    at: [CONFIG, "  ssh:"],
    code: "config.invalid-value",
  },
  {
    name: "a named chat template the model does not have",
    edits: { [CONFIG]: replace("    name: tiny-llama\n", "    name: tiny-llama\n    chat_template: fancy\n") },
    at: [CONFIG, "chat_template"],
    code: "config.chat-template",
  },
  {
    name: "an ability with an empty list of datasets",
    edits: { [CONFIG]: replace("data: [./diag/spatial.diag.jsonl]", "data: []") },
    at: [CONFIG, "data: []"],
    code: "config.invalid-value",
  },
  {
    name: "an ability dataset that is a folder",
    edits: { [CONFIG]: replace("data: [./diag/spatial.diag.jsonl]", "data: [./diag]") },
    at: [CONFIG, "data: [./diag]"],
    code: "config.dataset-not-found",
  },
  {
    name: "a negative GPU count for Slurm",
    edits: { [CONFIG]: append("target:\n  slurm:\n    gpus: -1\n") },
    at: [CONFIG, "gpus"],
    code: "config.invalid-value",
  },
  {
    name: "a benchmark named twice",
    edits: { [CONFIG]: replace("  - task: ./tasks/tiny_yes.yaml\n", "  - task: ./tasks/tiny_yes.yaml\n  - task: ./tasks/tiny_yes.yaml\n") },
    at: [CONFIG, "  - task: ./tasks/tiny_yes.yaml\nabilities"],
    code: "config.duplicate-name",
  },
  {
    name: "an inline task with a misspelt key",
    edits: { [CONFIG]: replace("  - task: ./tasks/tiny_yes.yaml", "  - task:\n      include: ./tasks/tiny_yes.yaml\n      doc_to_txt: x") },
    at: [CONFIG, "doc_to_txt"],
    code: "config.unknown-key",
  },
  { name: "a config path that is a folder", edits: { [CONFIG]: "directory" }, at: [CONFIG], code: "file.unreadable" },
  {
    name: "an expects entry that holds terminal escapes (a clipboard write, a screen clear)",
    edits: {
      [CONFIG]: replace(
        "  - task: ./tasks/tiny_yes.yaml\n",
        '  - task: ./tasks/tiny_yes.yaml\n    expects: ["\\e]52;c;SGVsbG8=\\a\\e[2J"]\n',
      ),
    },
    at: [CONFIG, "expects"],
    code: "config.unknown-expected-ability",
    says: /^`\\u001b\]52;c;SGVsbG8=\\u0007\\u001b\[2J` is not one of/,
  },
];

const TASK_CASES: BadInput[] = [
  {
    name: "a task whose YAML does not parse",
    edits: { [TASK]: replace("output_type: multiple_choice", "output_type: [multiple_choice") },
    at: [TASK, "doc_to_text"],
    code: "yaml.syntax",
  },
  { name: "a task with a YAML alias bomb", edits: { [TASK]: append(ALIAS_BOMB) }, at: [TASK, "*a"], code: "yaml.syntax" },
  {
    name: "a task with bytes that are not UTF-8",
    edits: { [TASK]: latin1(append("# caf\u00e9\n")) },
    at: [TASK, "caf"],
    code: "file.not-utf8",
  },
  { name: "a task without doc_to_text", edits: { [TASK]: replace(/doc_to_text: .*\n/, "") }, at: [TASK], code: "task.missing-key" },
  {
    name: "an unknown output_type",
    edits: { [TASK]: replace("output_type: multiple_choice", "output_type: essay") },
    at: [TASK, "output_type"],
    code: "task.invalid-value",
  },
  {
    name: "a misspelt task key",
    edits: { [TASK]: replace("doc_to_target: answer", "doc_to_target: answer\ndoc_to_targte: answer") },
    at: [TASK, "doc_to_targte"],
    code: "task.unsupported-key",
  },
  {
    name: "a template that does not parse",
    edits: { [TASK]: replace("{{question}}", "{{question") },
    at: [TASK, "doc_to_text"],
    code: "task.template",
    says: /Jinja/,
  },
  {
    name: "a template that prints an undefined name",
    edits: { [TASK]: replace("{{question}}", "{{questoin}}") },
    at: [TASK, "doc_to_text"],
    code: "task.template",
    says: /questoin/,
  },
  {
    name: "a template with a range of 10^8",
    edits: { [TASK]: replace("{{question}}", "{% for i in range(100000000) %}x{% endfor %}") },
    at: [TASK, "doc_to_text"],
    code: "task.template",
    says: /range/,
  },
  {
    name: "a template with nested loops that never end in practice",
    edits: { [TASK]: replace("{{question}}", "{% for i in range(20000) %}{% for j in range(20000) %}{% endfor %}{% endfor %}") },
    at: [TASK, "doc_to_text"],
    code: "task.template",
  },
  {
    name: "a template that prints gigabytes",
    edits: { [TASK]: replace("{{question}}", "{% for i in range(90000) %}{{ question }}{% endfor %}") },
    at: [TASK, "doc_to_text"],
    code: "task.template",
    // either bound stops it: the output's, or on a loaded machine (the catalogue runs 4 at a time) the time's
    says: /printed more than 1,000,000 characters|did not finish within 2 s/,
  },
  {
    name: "doc_to_choice naming a field the documents lack",
    edits: { [TASK]: replace("doc_to_choice: choices", "doc_to_choice: options") },
    at: [TASK, "doc_to_choice"],
    code: "task.template",
    says: /`options` is not a field/,
  },
  {
    name: "a Python helper",
    edits: { [TASK]: replace('doc_to_text: "Question: {{question}}\\nAnswer:"', "doc_to_text: !function utils.doc_to_text") },
    at: [TASK, "doc_to_text"],
    code: "task.python-function",
  },
  {
    name: "a Python helper that would leave a file behind, under --no-task-python",
    edits: {
      [TASK]: replace('doc_to_text: "Question: {{question}}\\nAnswer:"', "doc_to_text: !function utils.doc_to_text"),
      "tasks/utils.py": () => "open('helper-ran', 'w').close()\ndef doc_to_text(doc):\n    return doc['question']\n",
    },
    args: ["--no-task-python"],
    at: [TASK, "doc_to_text"],
    code: "task.python-function",
    says: /task Python is turned off/,
  },
  {
    name: "a data file that does not exist",
    edits: { [TASK]: replace("test: tiny_yes.jsonl", "test: missing.jsonl") },
    at: [TASK, "missing.jsonl"],
    code: "task.data-file",
  },
  {
    name: "a split that the data files do not have",
    edits: { [TASK]: replace("test_split: test", "test_split: validation") },
    at: [TASK, "test: tiny_yes.jsonl"],
    code: "task.data-file",
    says: /validation/,
  },
  {
    name: "an include that does not exist",
    edits: { [TASK]: append("include: ./base.yaml\n") },
    at: [TASK, "include"],
    code: "task.include",
  },
  { name: "a negative num_fewshot", edits: { [TASK]: append("num_fewshot: -1\n") }, at: [TASK, "num_fewshot"], code: "task.invalid-value" },
  {
    name: "few-shot examples from a split the data files do not have",
    edits: { [TASK]: append("num_fewshot: 2\nfewshot_split: train\n") },
    at: [TASK, "test: tiny_yes.jsonl"],
    code: "task.data-file",
    says: /train/,
  },
  {
    name: "more few-shot examples than the split holds",
    edits: { [TASK]: append("num_fewshot: 20\nfewshot_split: test\n") },
    at: [TASK, "num_fewshot"],
    code: "task.fewshot",
  },
  { name: "a task file that is a list", edits: { [TASK]: whole("- task: tiny_yes\n") }, at: [TASK], code: "task.invalid-value" },
  {
    name: "a dataset_path that is neither a local format nor a cached Hugging Face dataset",
    edits: { [TASK]: replace("dataset_path: json", "dataset_path: xml") },
    at: [TASK, "dataset_path"],
    code: "task.data-file",
    says: /not in the hub cache/,
  },
  {
    name: "a dataset_name that leads out of the datasets cache",
    edits: { [TASK]: replace("dataset_path: json", "dataset_path: allenai/ai2_arc\ndataset_name: ../../../x") },
    at: [TASK, "dataset_name"],
    code: "task.dataset-name",
    says: /not a dataset config name/,
  },
  {
    name: "a dataset_path that is a path, not a Hugging Face id",
    edits: { [TASK]: replace("dataset_path: json", "dataset_path: ../../x") },
    at: [TASK, "dataset_path"],
    code: "task.dataset-name",
    says: /not a Hugging Face dataset id/,
  },
  {
    name: "a task that includes itself",
    edits: { [TASK]: append("include: ./tiny_yes.yaml\n") },
    at: [TASK, "include"],
    code: "task.include",
  },
  {
    name: "a generation task whose max_gen_toks fills the model's window",
    edits: {
      [TASK]: replace(
        "output_type: multiple_choice",
        'output_type: generate_until\ngeneration_kwargs:\n  until: ["\\n"]\n  max_gen_toks: 4096',
      ),
    },
    at: [CONFIG, "task: ./tasks"],
    code: "config.window-too-small",
  },
];

const DATA_CASES: BadInput[] = [
  {
    name: "a data line that is not JSON",
    edits: { [DATA]: rawLine(3, '{"question": "Is the sun a star') },
    at: [DATA, "Is the sun a star"],
    code: "task.document",
  },
  { name: "a data line that is an array", edits: { [DATA]: rawLine(2, "[1, 2]") }, at: [DATA, "[1, 2]"], code: "task.document" },
  {
    name: "an answer index past the choices",
    edits: { [DATA]: jsonLine(4, (d) => ({ ...d, answer: 5 })) },
    at: [DATA, "feathers"],
    code: "task.document",
  },
  {
    name: "a document with no choices",
    edits: { [DATA]: jsonLine(5, (d) => ({ ...d, choices: [] })) },
    at: [DATA, "snow"],
    code: "task.document",
  },
  {
    name: "a document without the field the template prints",
    edits: { [DATA]: jsonLine(6, ({ question: _, ...rest }) => rest) },
    at: [TASK, "doc_to_text"],
    code: "task.template",
    says: /`question` is undefined.*in document 5/,
  },
  { name: "an empty data file", edits: { [DATA]: whole("") }, at: [DATA], code: "task.empty-split" },
  {
    name: "a data file with bytes that are not UTF-8",
    edits: { [DATA]: latin1(jsonLine(2, (d) => ({ ...d, question: "Caf\u00e9?" }))) },
    at: [DATA, "Caf"],
    code: "file.not-utf8",
  },
  { name: "a data file that is a folder", edits: { [DATA]: "directory" }, at: [TASK, "tiny_yes.jsonl"], code: "task.data-file" },
  {
    name: "a data line nested 100,000 deep",
    edits: { [DATA]: rawLine(2, DEEP_LINE) },
    at: [DATA, '{"a":[[['],
    code: "json.too-deep",
    says: /nested deeper than 64 levels/,
  },
];

const DATASET_CASES: BadInput[] = [
  {
    name: "a diagnostic line that is not JSON",
    edits: { [QUANT]: rawLine(2, '{"id": "q2", "ability": ') },
    at: [QUANT, '"q2"'],
    code: "diag.syntax",
  },
  {
    name: "a diagnostic line that is not an object",
    edits: { [QUANT]: rawLine(2, '"just a string"') },
    at: [QUANT, "just a string"],
    code: "diag.not-object",
  },
  {
    name: "a diagnostic item without its question",
    edits: { [QUANT]: jsonLine(2, ({ question: _, ...rest }) => rest) },
    at: [QUANT, "train"],
    code: "diag.missing-field",
    says: /question/,
  },
  {
    name: "an answer past the choices",
    edits: { [QUANT]: jsonLine(1, (d) => ({ ...d, answer: 7 })) },
    at: [QUANT, "Ann"],
    code: "diag.answer-out-of-range",
  },
  {
    name: "an answer given as text",
    edits: { [QUANT]: jsonLine(1, (d) => ({ ...d, answer: "7" })) },
    at: [QUANT, "Ann"],
    code: "diag.answer-not-index",
  },
  {
    name: "one choice only",
    edits: { [QUANT]: jsonLine(3, (d) => ({ ...d, choices: ["72"], answer: 0 })) },
    at: [QUANT, "9 times 8"],
    code: "diag.choice-count",
  },
  {
    name: "an empty choice",
    edits: { [QUANT]: jsonLine(3, (d) => ({ ...d, choices: ["64", "", "72"] })) },
    at: [QUANT, "9 times 8"],
    code: "diag.choice-empty",
  },
  {
    name: "a choice repeated",
    edits: { [QUANT]: jsonLine(3, (d) => ({ ...d, choices: ["64", "64", "72"] })) },
    at: [QUANT, "9 times 8"],
    code: "diag.choice-repeated",
  },
  {
    name: "an id used twice",
    edits: { [QUANT]: jsonLine(2, (d) => ({ ...d, id: "quantitative-0" })) },
    at: [QUANT, "train"],
    code: "diag.duplicate-id",
  },
  {
    name: "a context that is a number",
    edits: { [QUANT]: jsonLine(4, (d) => ({ ...d, context: 12 })) },
    at: [QUANT, "eggs"],
    code: "diag.wrong-type",
  },
  { name: "an empty id", edits: { [QUANT]: jsonLine(4, (d) => ({ ...d, id: " " })) }, at: [QUANT, "12 eggs"], code: "diag.empty-field" },
  {
    name: "an item without its ability",
    edits: { [QUANT]: jsonLine(2, ({ ability: _, ...rest }) => rest) },
    at: [QUANT, "train"],
    code: "diag.missing-field",
  },
  { name: "an empty dataset", edits: { [SPATIAL]: whole("") }, at: [CONFIG, "data: [./diag/spatial"], code: "config.ability-no-items" },
  {
    name: "a dataset with bytes that are not UTF-8",
    edits: { [SPATIAL]: latin1(jsonLine(2, (d) => ({ ...d, context: "Tom fa\u00e7es north and turns right." }))) },
    at: [SPATIAL, "Tom"],
    code: "file.not-utf8",
  },
  {
    name: "an item longer than the model's window",
    edits: {
      [QUANT]: jsonLine(2, (d) => ({ ...d, context: "far away ".repeat(60) })),
      [CONFIG]: replace("    name: tiny-llama\n", "    name: tiny-llama\n    max_length: 200\n"),
    },
    at: [QUANT, "far away"],
    code: "diag.too-long",
  },
  {
    name: "a 10 MB item",
    edits: { [QUANT]: jsonLine(2, (d) => ({ ...d, context: "x".repeat(10_000_000) })) },
    at: [QUANT, "xxxx"],
    code: "diag.too-long",
  },
  {
    name: "a diagnostic line nested 100,000 deep, with a field of the wrong type to place",
    edits: { [QUANT]: rawLine(2, DEEP_LINE) },
    at: [QUANT, '{"a":[[['],
    code: "json.too-deep",
    says: /nested deeper than 64 levels/,
  },
  {
    name: "an item in the released code's format",
    edits: {
      [QUANT]: jsonLine(2, (d) => ({
        context: d.context,
        question: d.question,
        options: d.choices,
        answer: "120 km",
        question_type: "arithmetic_word_problem",
      })),
    },
    at: [QUANT, "question_type"],
    code: "diag.authors-format",
    says: /convert it/,
  },
  {
    name: "an item in the released code's format whose answer is none of its options",
    edits: {
      [QUANT]: jsonLine(2, (d) => ({
        context: d.context,
        question: d.question,
        options: d.choices,
        answer: "90 km",
        question_type: "arithmetic_word_problem",
      })),
    },
    at: [QUANT, "question_type"],
    code: "diag.answer-not-an-option",
  },
  {
    name: "a review file's line that is not a decision",
    edits: { [REVIEW]: whole('{"id": "quantitative-0", "hash": "0123456789abcdef", "decision": "maybe"}\n') },
    at: [REVIEW, "maybe"],
    code: "review.invalid-record",
    says: /must be one of accept, reject, correct, flag/,
  },
  {
    name: "a review's correction to a choice the item does not have",
    edits: {
      [REVIEW]: (text) => text + JSON.stringify({ id: "quantitative-0", hash: QUANT_0_HASH, decision: "correct", answer: 5 }) + "\n",
    },
    at: [REVIEW, "correct"],
    code: "review.answer-out-of-range",
  },
];

const MODEL_CASES: BadInput[] = [
  {
    name: "a model config.json that is not JSON",
    edits: { [MODEL_CONFIG]: (t) => t.slice(0, 40) },
    at: [CONFIG, "path: ./model"],
    code: "config.model-folder",
  },
  {
    name: "a model folder without config.json",
    edits: { [MODEL_CONFIG]: "delete" },
    at: [CONFIG, "path: ./model"],
    code: "config.model-folder",
  },
  {
    name: "a model folder without tokenizer.json",
    edits: { "model/tokenizer.json": "delete" },
    at: [CONFIG, "path: ./model"],
    code: "config.model-folder",
  },
  {
    name: "a tokenizer.json that is not JSON",
    edits: { "model/tokenizer.json": whole('{"model": ') },
    at: ["model/tokenizer.json"],
    code: "json.syntax",
  },
  {
    name: "a model.safetensors cut short",
    edits: { "model/model.safetensors": (t) => t.slice(0, 64) },
    at: [CONFIG, "path: ./model"],
    code: "config.model-folder",
    says: /not a complete safetensors file/,
  },
  {
    name: "a model folder without weights",
    edits: { "model/model.safetensors": "delete" },
    at: [CONFIG, "path: ./model"],
    code: "config.model-folder",
  },
  {
    name: "a model of a family the runner does not know",
    edits: { [MODEL_CONFIG]: (t) => JSON.stringify({ ...JSON.parse(t), model_type: "gpt2", architectures: ["GPT2LMHeadModel"] }) },
    at: [CONFIG, "path: ./model"],
    code: "config.model-folder",
  },
  {
    name: "a config.json without model_type",
    edits: {
      [MODEL_CONFIG]: (t) => {
        const { model_type: _, ...rest } = JSON.parse(t);
        return JSON.stringify(rest);
      },
    },
    at: [CONFIG, "path: ./model"],
    code: "config.model-folder",
    says: /model_type/,
  },
  {
    name: "a tokenizer_config.json that is not JSON",
    edits: { "model/tokenizer_config.json": whole('{"bos_token": ') },
    at: ["model/tokenizer_config.json"],
    code: "json.syntax",
  },
  {
    name: "a tokenizer.json pre-tokenizer of Sequences nested 100,000 deep",
    edits: {
      "model/tokenizer.json": (t) => {
        const json = JSON.parse(t);
        const inner = JSON.stringify(json.pre_tokenizer);
        json.pre_tokenizer = "NESTED";
        const nested = '{"type": "Sequence", "pretokenizers": ['.repeat(50_000) + inner + "]}".repeat(50_000);
        return JSON.stringify(json, null, 2).replace('"NESTED"', nested);
      },
    },
    at: ["model/tokenizer.json", '"pre_tokenizer"'],
    code: "json.too-deep",
  },
  {
    name: "a tokenizer.json Split pattern that backtracks catastrophically on ordinary text",
    edits: {
      "model/tokenizer.json": (t) => {
        const json = JSON.parse(t);
        const split = { type: "Split", pattern: { Regex: "(\\w+\\s?)*$" }, behavior: "Isolated", invert: false };
        json.pre_tokenizer = { type: "Sequence", pretokenizers: [split, json.pre_tokenizer] };
        return JSON.stringify(json, null, 2);
      },
      [DATA]: jsonLine(2, (d) => ({
        ...d,
        question: "Do fish live in water or in trees and do they breathe through gills like the other animals of the sea?",
      })),
    },
    at: ["model/tokenizer.json", '"Regex"'],
    code: "model.tokenizer-pattern",
    says: /ran past its time limit/,
  },
  {
    name: "a generation_config.json with a text eos_token_id",
    edits: { "model/generation_config.json": whole('{"eos_token_id": "end"}\n') },
    at: ["model/generation_config.json", "eos_token_id"],
    code: "model.generation-config",
  },
];

const CASES = [...CONFIG_CASES, ...TASK_CASES, ...DATA_CASES, ...DATASET_CASES, ...MODEL_CASES];

let template: string;
let work: string;

before(async () => {
  work = await fs.mkdtemp(path.join(os.tmpdir(), "bprof-catalogue-"));
  template = path.join(work, "template");
  await makeProfileProject({ root: template });
});
after(() => fs.rm(work, { recursive: true, force: true }));

async function projectWith(name: string, edits: BadInput["edits"]): Promise<string> {
  const root = path.join(work, name.replace(/[^a-z0-9]+/gi, "-"));
  await fs.cp(template, root, { recursive: true });
  for (const [file, edit] of Object.entries(edits)) {
    const target = path.join(root, file);
    if (edit === "delete") await fs.rm(target);
    else if (edit === "directory") await fs.rm(target).then(() => fs.mkdir(target));
    // Read and written as latin1, byte for byte: the edits of binary files keep their other bytes.
    else await fs.writeFile(target, edit(await fs.readFile(target, "latin1").catch(() => "")), "latin1");
  }
  return root;
}

/** The 1-based line of the first line holding `needle` (which may span lines); 1 without one. */
async function lineOf(file: string, needle: string | undefined): Promise<number> {
  if (needle === undefined) return 1;
  const text = await fs.readFile(file, "latin1");
  const at = text.indexOf(needle);
  assert.ok(at >= 0, `${needle} is not in ${file}`);
  return text.slice(0, at).split("\n").length;
}

/** What a terminal would act on: a lone CR, the other C0 controls but tab and line feed, DEL, C1. */
// eslint-disable-next-line no-control-regex -- the control characters are what is looked for
const TERMINAL_CONTROL = /\r(?!\n)|[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/;

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

describe(`bad input: ${CASES.length} kinds, each an error at its file and line with exit 2`, { concurrency: 4 }, () => {
  for (const c of CASES) {
    test(c.name, async () => {
      const root = await projectWith(c.name, c.edits);
      const file = path.join(root, c.at[0]);
      const line = await lineOf(file, c.at[1]).catch(() => 1);
      const r = await bprof(["validate", ...(c.args ?? []), path.join(root, CONFIG)], {
        ...(c.args ? { cwd: root } : {}),
        timeout: 60_000,
      });
      assert.equal(r.timedOut, false, "bprof validate did not finish within 60 s");
      assert.equal(r.exitCode, 2, r.stderr);
      assert.doesNotMatch(r.stderr, /internal error|\n\s+at \S+ \(/, "no internal error, no stack trace");
      assert.doesNotMatch(r.stdout + r.stderr, TERMINAL_CONTROL, "no control character of the files reaches the terminal");
      const wanted = new RegExp(`^${escape(file)}:${line}:\\d+: error: (.*) \\[${escape(c.code)}\\]$`, "m");
      const found = wanted.exec(r.stderr);
      assert.ok(found, `expected an error at ${c.at[0]}:${line} [${c.code}], got:\n${r.stderr}`);
      if (c.says) assert.match(found[1]!, c.says);
    });
  }
});

test("docs/reliability.md states the catalogue's counts", async () => {
  const page = (await fs.readFile(path.join(repoRoot, "docs", "reliability.md"), "utf8")).replace(/\s+/g, " ");
  assert.ok(page.includes(`**${CASES.length} kinds of bad input**`), `docs/reliability.md: ${CASES.length} kinds of bad input`);
  const groups: [BadInput[], string][] = [
    [CONFIG_CASES, "in configs"],
    [TASK_CASES, "in lm-eval task files"],
    [DATA_CASES, "in benchmark data files"],
    [DATASET_CASES, "in diagnostic datasets"],
    [MODEL_CASES, "in model folders"],
  ];
  for (const [cases, words] of groups)
    assert.ok(page.includes(`${cases.length} ${words}`), `docs/reliability.md: ${cases.length} ${words}`);
});
