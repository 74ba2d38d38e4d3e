// Chat templates (lm-eval's --apply_chat_template), extra EOS ids and left truncation, on a tiny
// model folder made here: the byte-level tokenizer plus the special tokens of Llama 3 and ChatML,
// with real-looking templates in tokenizer_config.json. Rendered text is checked character for
// character, and tokens byte for byte (the tokenizer's ids are the UTF-8 bytes).
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, before, test } from "node:test";
import { loadProfile, type Profile } from "../../../src/core/config/load";
import type { DiagnosticItem } from "../../../src/core/diagnostic/item";
import { errorsOf, formatProblem, type Problem } from "../../../src/core/base/problems";
import { BOS_TOKEN, BOS_TOKEN_ID, byteLevelTokenizer, EOS_TOKEN_ID } from "../../../scripts/lib/byteTokenizer";
import { writeRandomLlama } from "../../support/randomLlama";
import {
  compileProfileJob,
  compileScoreJob,
  truncatedChoices,
  truncateGenerationContext,
  type ChoiceJobItem,
  type GenerateJobItem,
} from "../../../src/core/plan/job";
import { benchmarkMessages, diagnosticMessages } from "../../../src/core/prompts/chatPrompt";
import { loadChatTemplate } from "../../../src/core/prompts/chatTemplate";
import { diagnosticSequence } from "../../../src/core/prompts/diagnosticText";
import { loadTokenizer, type ModelTokenizer } from "../../../src/core/prompts/tokenize";
import { scoredItems, type RunnerScores } from "../../../src/core/results/items";

// Meta-Llama-3-8B-Instruct's template, as its tokenizer_config.json has it.
const LLAMA3_TEMPLATE =
  "{% set loop_messages = messages %}{% for message in loop_messages %}{% set content = '<|start_header_id|>' + message['role'] + " +
  "'<|end_header_id|>\n\n'+ message['content'] | trim + '<|eot_id|>' %}{% if loop.index0 == 0 %}{% set content = bos_token + content %}" +
  "{% endif %}{{ content }}{% endfor %}{% if add_generation_prompt %}{{ '<|start_header_id|>assistant<|end_header_id|>\n\n' }}{% endif %}";

// ChatML (Qwen 2 style, with its default system prompt), as the `default` of a list of named templates.
const CHATML_TEMPLATE =
  "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}{{ '<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n' }}{% endif %}" +
  "{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}";

// Gemma style: no system role.
const NO_SYSTEM_TEMPLATE =
  "{{ bos_token }}{% if messages[0]['role'] == 'system' %}{{ raise_exception('System role not supported') }}{% endif %}" +
  "{% for message in messages %}{{ '<start_of_turn>' + message['role'] + '\n' + message['content'] | trim + '<end_of_turn>\n' }}{% endfor %}" +
  "{% if add_generation_prompt %}{{'<start_of_turn>model\n'}}{% endif %}";

const SPECIAL = { START_HEADER: 258, END_HEADER: 259, EOT: 260, IM_START: 261, IM_END: 262 };
const SPECIAL_TOKENS: [number, string][] = [
  [SPECIAL.START_HEADER, "<|start_header_id|>"],
  [SPECIAL.END_HEADER, "<|end_header_id|>"],
  [SPECIAL.EOT, "<|eot_id|>"],
  [SPECIAL.IM_START, "<|im_start|>"],
  [SPECIAL.IM_END, "<|im_end|>"],
];

const utf8 = (text: string) => [...Buffer.from(text, "utf8")];

let root: string;

/** A model folder: random Llama weights, the byte tokenizer with chat special tokens, the given tokenizer_config.json additions. */
async function modelFolder(name: string, config: Record<string, unknown>, files: Record<string, string> = {}): Promise<string> {
  const dir = path.join(root, name);
  writeRandomLlama(dir, { seed: 1 });
  const { tokenizerJson, tokenizerConfig } = byteLevelTokenizer();
  for (const [id, content] of SPECIAL_TOKENS) {
    (tokenizerJson.added_tokens as object[]).push({
      id,
      content,
      single_word: false,
      lstrip: false,
      rstrip: false,
      normalized: false,
      special: true,
    });
  }
  await fs.writeFile(path.join(dir, "tokenizer.json"), JSON.stringify(tokenizerJson));
  await fs.writeFile(path.join(dir, "tokenizer_config.json"), JSON.stringify({ ...tokenizerConfig, ...config }, null, 2) + "\n");
  for (const [file, text] of Object.entries(files)) await fs.writeFile(path.join(dir, file), text);
  return dir;
}

const DOCS = [
  { q: "2+2", choices: ["3", "4"], answer: 1 },
  { q: "3+3", choices: ["6", "7"], answer: 0 },
];

/** An inline multiple-choice task with a description and one few-shot example; data relative to the config. */
function inlineMcTask(indent: string): string {
  return (
    [
      "task:",
      "  task: arith",
      "  dataset_path: json",
      "  dataset_kwargs:",
      "    data_files:",
      "      test: data/arith.jsonl",
      "  output_type: multiple_choice",
      '  description: "Answer with a number.\\n\\n"',
      "  num_fewshot: 1",
      "  fewshot_config:",
      "    sampler: first_n",
      "    samples:",
      '      - {q: "1+1", choices: ["2", "5"], answer: 0}',
      '  doc_to_text: "Q: {{q}}\\nA:"',
      "  doc_to_choice: choices",
      "  doc_to_target: answer",
    ]
      .map((l) => indent + l)
      .join("\n") + "\n"
  );
}

async function writeConfig(name: string, text: string): Promise<string> {
  const file = path.join(root, name);
  await fs.writeFile(file, text);
  return file;
}

async function load(name: string, text: string): Promise<{ profile?: Profile; problems: Problem[] }> {
  return loadProfile(await writeConfig(name, text));
}

let llama3: string;
let tokenizer: ModelTokenizer;

before(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), "bprof-chat-"));
  await fs.mkdir(path.join(root, "data"));
  await fs.writeFile(path.join(root, "data", "arith.jsonl"), DOCS.map((d) => JSON.stringify(d)).join("\n") + "\n");
  llama3 = await modelFolder(
    "llama3",
    { chat_template: LLAMA3_TEMPLATE },
    { "generation_config.json": JSON.stringify({ eos_token_id: [EOS_TOKEN_ID, SPECIAL.EOT] }) },
  );
  await modelFolder("chatml", {
    chat_template: [
      { name: "default", template: CHATML_TEMPLATE },
      { name: "tool_use", template: "{{ 'tools' }}" },
    ],
  });
  tokenizer = await loadTokenizer(llama3);
});
after(async () => fs.rm(root, { recursive: true, force: true }));

test("Llama 3: the description is a system message, the few-shot example and the question one user message, the assistant header last", async () => {
  const { profile, problems } = await load(
    "llama3.bprof.yaml",
    `models:\n  - path: ./llama3\n    chat_template: true\nbenchmarks:\n  - name: arith\n${inlineMcTask("    ")}`,
  );
  assert.ok(profile, problems.map(formatProblem).join("\n"));
  const item = profile.benchmarks[0]!.task.items[0]!;
  // Without a template: lm-eval's plain context.
  assert.equal(item.context, "Answer with a number.\n\nQ: 1+1\nA: 2\n\nQ: 2+2\nA:");
  assert.deepEqual(benchmarkMessages(item.prompt, profile.benchmarks[0]!.task, false), [
    { role: "system", content: "Answer with a number.\n\n" },
    { role: "user", content: "Q: 1+1\nA: 2\n\nQ: 2+2\nA:" },
  ]);
  const rendered =
    "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nAnswer with a number.<|eot_id|>" +
    "<|start_header_id|>user<|end_header_id|>\n\nQ: 1+1\nA: 2\n\nQ: 2+2\nA:<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n";
  assert.equal(
    profile.models[0]!.chat!.template.render(benchmarkMessages(item.prompt, profile.benchmarks[0]!.task, false), true),
    rendered,
  );

  const { job } = compileScoreJob(profile.models[0]!, profile.benchmarks, tokenizer, "cpu");
  const first = job.items[0] as ChoiceJobItem;
  // BOS once (the template writes it; nothing is added), the special tokens as single ids, and the
  // trailing "\n\n" of the context moved into every continuation; no target_delimiter before the choice.
  const contextText = rendered.slice(0, -2);
  const expectedContext = [
    BOS_TOKEN_ID,
    SPECIAL.START_HEADER,
    ...utf8("system"),
    SPECIAL.END_HEADER,
    ...utf8("\n\nAnswer with a number."),
    SPECIAL.EOT,
    SPECIAL.START_HEADER,
    ...utf8("user"),
    SPECIAL.END_HEADER,
    ...utf8("\n\nQ: 1+1\nA: 2\n\nQ: 2+2\nA:"),
    SPECIAL.EOT,
    SPECIAL.START_HEADER,
    ...utf8("assistant"),
    SPECIAL.END_HEADER,
  ];
  assert.equal(contextText.startsWith(BOS_TOKEN), true);
  assert.deepEqual(first.context, expectedContext);
  assert.equal(first.context.filter((t) => t === BOS_TOKEN_ID).length, 1);
  assert.deepEqual(first.choices, [utf8("\n\n3"), utf8("\n\n4")]);
});

test("ChatML from a list of named templates: `default` unless named; few-shot as multi-turn on request", async () => {
  const yaml = (chat: string, multiturn: boolean) =>
    `models:\n  - path: ./chatml\n    chat_template: ${chat}\n${multiturn ? "    fewshot_as_multiturn: true\n" : ""}` +
    `benchmarks:\n  - name: arith\n${inlineMcTask("    ")}`;
  const { profile, problems } = await load("chatml.bprof.yaml", yaml("true", true));
  assert.ok(profile, problems.map(formatProblem).join("\n"));
  const task = profile.benchmarks[0]!.task;
  const messages = benchmarkMessages(task.items[1]!.prompt, task, true);
  assert.deepEqual(messages, [
    { role: "system", content: "Answer with a number.\n\n" },
    { role: "user", content: "Q: 1+1\nA:" },
    { role: "assistant", content: "2" },
    { role: "user", content: "Q: 3+3\nA:" },
  ]);
  assert.equal(
    profile.models[0]!.chat!.template.render(messages, true),
    "<|im_start|>system\nAnswer with a number.\n\n<|im_end|>\n<|im_start|>user\nQ: 1+1\nA:<|im_end|>\n<|im_start|>assistant\n2<|im_end|>\n" +
      "<|im_start|>user\nQ: 3+3\nA:<|im_end|>\n<|im_start|>assistant\n",
  );
  const tool = await load("chatml-tool.bprof.yaml", yaml("tool_use", false));
  assert.equal(tool.profile!.models[0]!.chat!.template.render([{ role: "user", content: "x" }], true), "tools");
  assert.match(tool.profile!.models[0]!.chat!.template.origin, /chat_template `tool_use`/);
});

test("diagnostic items through the chat template: the user asks, the assistant answers, BOS once", async () => {
  const lookup = await loadChatTemplate(llama3);
  const item: DiagnosticItem = {
    id: "a",
    ability: "Deductive Reasoning",
    context: "All cats purr. Tom is a cat.",
    question: "Does Tom purr?",
    choices: ["yes", "no"],
    answer: 0,
    line: 1,
  };
  assert.deepEqual(diagnosticMessages(item), [
    { role: "user", content: "All cats purr. Tom is a cat.\nDoes Tom purr?" },
    { role: "assistant", content: "yes" },
  ]);
  assert.deepEqual(diagnosticMessages({ ...item, context: "  " }), [
    { role: "user", content: "Does Tom purr?" },
    { role: "assistant", content: "yes" },
  ]);
  assert.equal(
    lookup.template!.render(diagnosticMessages(item), false),
    "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nAll cats purr. Tom is a cat.\nDoes Tom purr?<|eot_id|>" +
      "<|start_header_id|>assistant<|end_header_id|>\n\nyes<|eot_id|>",
  );
  assert.deepEqual(diagnosticSequence(tokenizer, item, lookup.template), [
    BOS_TOKEN_ID,
    SPECIAL.START_HEADER,
    ...utf8("user"),
    SPECIAL.END_HEADER,
    ...utf8("\n\nAll cats purr. Tom is a cat.\nDoes Tom purr?"),
    SPECIAL.EOT,
    SPECIAL.START_HEADER,
    ...utf8("assistant"),
    SPECIAL.END_HEADER,
    ...utf8("\n\nyes"),
    SPECIAL.EOT,
  ]);
  // Without a template: the plain rendering, with the BOS the tokenizer adds.
  assert.deepEqual(diagnosticSequence(tokenizer, item), [
    BOS_TOKEN_ID,
    ...utf8("All cats purr. Tom is a cat.\nDoes Tom purr?\nAnswer: yes"),
  ]);

  // A profile job renders every ability's items through the model's template.
  await fs.writeFile(
    path.join(root, "d.diag.jsonl"),
    JSON.stringify({
      id: "a",
      ability: "Deductive Reasoning",
      context: item.context,
      question: item.question,
      choices: item.choices,
      answer: 0,
    }) + "\n",
  );
  const { profile, problems } = await load(
    "llama3-profile.bprof.yaml",
    `models:\n  - path: ./llama3\n    chat_template: true\nbenchmarks:\n  - name: arith\n${inlineMcTask("    ")}` +
      "abilities:\n  - name: Deductive Reasoning\n    data: ./d.diag.jsonl\nablation:\n  k: [0.001]\n",
  );
  assert.ok(profile, problems.map(formatProblem).join("\n"));
  const { job } = compileProfileJob(
    profile.models[0]!,
    profile.benchmarks,
    { abilities: profile.abilities, ablation: profile.ablation!, seed: 1 },
    tokenizer,
    "cpu",
  );
  assert.deepEqual(job.abilities[0]!.sequences[0], diagnosticSequence(tokenizer, item, lookup.template));
});

test("a template that refuses a system message: a warning on the config, and the description left out as lm-eval does", async () => {
  await modelFolder("gemma", { chat_template: NO_SYSTEM_TEMPLATE });
  const { profile, problems } = await load(
    "gemma.bprof.yaml",
    `models:\n  - path: ./gemma\n    chat_template: true\nbenchmarks:\n  - name: arith\n${inlineMcTask("    ")}`,
  );
  assert.ok(profile, problems.map(formatProblem).join("\n"));
  const warning = problems.find((d) => d.severity === "warning" && d.field === "models[0].chat_template");
  assert.ok(warning, problems.map(formatProblem).join("\n"));
  assert.match(warning.message, /refuses a system message: the descriptions of `arith` are left out for this model/);
  const gemmaTokenizer = await loadTokenizer(path.join(root, "gemma"));
  const { job } = compileScoreJob(profile.models[0]!, profile.benchmarks, gemmaTokenizer, "cpu");
  assert.deepEqual((job.items[0] as ChoiceJobItem).context, [
    BOS_TOKEN_ID,
    ...utf8("<start_of_turn>user\nQ: 1+1\nA: 2\n\nQ: 2+2\nA:<end_of_turn>\n<start_of_turn>model"),
  ]);
});

test("chat_template errors point into the config, or into the model's files, with line, column and field", async () => {
  await modelFolder("base", {});
  const base = await load(
    "base.bprof.yaml",
    `models:\n  - path: ./base\n    chat_template: true\nbenchmarks:\n  - name: arith\n${inlineMcTask("    ")}`,
  );
  assert.equal(base.profile, undefined);
  const [missing] = errorsOf(base.problems);
  assert.equal(formatProblem(missing!).split(": error: ")[0], `${path.join(root, "base.bprof.yaml")}:3:20`);
  assert.equal(missing!.field, "models[0].chat_template");
  assert.match(missing!.message, /the model has no chat template: .*tokenizer_config\.json has no `chat_template`/);

  const unknown = await load(
    "unknown.bprof.yaml",
    `models:\n  - path: ./chatml\n    chat_template: chat\nbenchmarks:\n  - name: arith\n${inlineMcTask("    ")}`,
  );
  assert.match(errorsOf(unknown.problems)[0]!.message, /no chat template named `chat` \(templates: `default`, `tool_use`\)/);
  assert.equal(errorsOf(unknown.problems)[0]!.field, "models[0].chat_template");

  await modelFolder("broken", { chat_template: "{% for message in messages %}{{ message['content'] }" });
  const broken = await load(
    "broken.bprof.yaml",
    `models:\n  - path: ./broken\n    chat_template: true\nbenchmarks:\n  - name: arith\n${inlineMcTask("    ")}`,
  );
  const [syntax] = errorsOf(broken.problems);
  assert.equal(syntax!.file, path.join(root, "broken", "tokenizer_config.json"));
  assert.equal(syntax!.field, "chat_template");
  const line = (await fs.readFile(syntax!.file, "utf8")).split("\n").findIndex((l) => l.includes('"chat_template"')) + 1;
  assert.equal(syntax!.line, line);
  assert.match(syntax!.message, /does not parse as Jinja/);

  // A template that parses but fails when rendered is an error at validation, not halfway through a run.
  await modelFolder("failing", {
    chat_template: "{% for message in messages %}{{ message['content'] }}{% endfor %}{{ raise_exception('only tools') }}",
  });
  const failing = await load(
    "failing.bprof.yaml",
    `models:\n  - path: ./failing\n    chat_template: true\nbenchmarks:\n  - name: arith\n${inlineMcTask("    ")}`,
  );
  const [render] = errorsOf(failing.problems);
  assert.equal(render!.field, "models[0].chat_template");
  assert.match(render!.message, /benchmark `arith`, document 0: the chat template of .*failing.*refuses the conversation: only tools/);

  const multiturn = await load(
    "multiturn.bprof.yaml",
    `models:\n  - path: ./llama3\n    fewshot_as_multiturn: true\nbenchmarks:\n  - name: arith\n${inlineMcTask("    ")}`,
  );
  const [needs] = errorsOf(multiturn.problems);
  assert.equal(`${needs!.line}:${needs!.column} ${needs!.field}`, "3:27 models[0].fewshot_as_multiturn");
  assert.match(needs!.message, /needs `chat_template`/);
});

test("generation_config.json's eos_token_id (a number or a list) stops generation, after until and the tokenizer's EOS", async () => {
  assert.deepEqual(tokenizer.extraEosTokenIds, [EOS_TOKEN_ID, SPECIAL.EOT]);
  const genTask = (indent: string) =>
    [
      "task:",
      "  task: say",
      "  dataset_path: json",
      "  dataset_kwargs: {data_files: {test: data/arith.jsonl}}",
      "  output_type: generate_until",
      '  doc_to_text: "Q: {{q}}\\nA:"',
      '  doc_to_target: "{{answer}}"',
      '  generation_kwargs: {until: ["\\n"], max_gen_toks: 5}',
    ]
      .map((l) => indent + l)
      .join("\n") + "\n";
  const { profile, problems } = await load(
    "gen.bprof.yaml",
    `models:\n  - path: ./llama3\n    chat_template: true\n    max_length: 20\nbenchmarks:\n  - name: say\n${genTask("    ")}`,
  );
  assert.ok(profile, problems.map(formatProblem).join("\n"));
  const { job } = compileScoreJob(profile.models[0]!, profile.benchmarks, tokenizer, "cpu");
  const item = job.items[0] as GenerateJobItem;
  // "\n", then EOS (257, also the first of generation_config's list: once), then <|eot_id|>.
  assert.deepEqual(item.generate, { max_tokens: 5, stop: [[10], [EOS_TOKEN_ID], [SPECIAL.EOT]] });
  // Left truncation: the context keeps its last max_length - max_gen_toks = 15 tokens (a generation
  // context keeps its trailing "\n\n": there is no continuation to move it to).
  const whole = [
    BOS_TOKEN_ID,
    SPECIAL.START_HEADER,
    ...utf8("user"),
    SPECIAL.END_HEADER,
    ...utf8("\n\nQ: 2+2\nA:"),
    SPECIAL.EOT,
    SPECIAL.START_HEADER,
    ...utf8("assistant"),
    SPECIAL.END_HEADER,
    ...utf8("\n\n"),
  ];
  assert.deepEqual(item.context, whole.slice(-15));

  // A single id is read as well; a value that is not ids is an error in generation_config.json.
  const single = await modelFolder("single", {}, { "generation_config.json": JSON.stringify({ eos_token_id: SPECIAL.IM_END }) });
  assert.deepEqual((await loadTokenizer(single)).extraEosTokenIds, [SPECIAL.IM_END]);
  await modelFolder("bad-eos", {}, { "generation_config.json": '{\n  "bos_token_id": 256,\n  "eos_token_id": "</s>"\n}\n' });
  const bad = await load("bad-eos.bprof.yaml", `models:\n  - path: ./bad-eos\nbenchmarks:\n  - name: say\n${genTask("    ")}`);
  const [eos] = errorsOf(bad.problems);
  assert.equal(
    formatProblem(eos!),
    `${path.join(root, "bad-eos", "generation_config.json")}:3:19: error: \`eos_token_id\` must be a token id or a list of token ids (field eos_token_id) [model.generation-config]`,
  );

  // lm-eval asserts max_gen_toks < max_length; here it is an error on the model's max_length.
  const tight = await load(
    "tight.bprof.yaml",
    `models:\n  - path: ./llama3\n    max_length: 5\nbenchmarks:\n  - name: say\n${genTask("    ")}`,
  );
  const [room] = errorsOf(tight.problems);
  assert.equal(room!.field, "models[0].max_length");
  assert.match(
    room!.message,
    /max_gen_toks = 5 tokens, which leaves no room for its context in model `llama3`'s max length 5 \(the config's `max_length`\)/,
  );
});

test("truncation as lm-eval's HF backend: generation contexts to L - max_gen_toks, choices to (context + continuation)[-(L + 1):]", () => {
  assert.deepEqual(truncateGenerationContext([1, 2, 3, 4, 5, 6], 8, 4), [3, 4, 5, 6]);
  assert.deepEqual(truncateGenerationContext([1, 2, 3, 4, 5, 6], 6, 4), [5, 6]);
  assert.deepEqual(truncateGenerationContext([1, 2], 8, 4), [1, 2]);
  assert.deepEqual(truncateGenerationContext([1, 2], undefined, 4), [1, 2]);
  assert.throws(
    () => truncateGenerationContext([1], 4, 4, "gsm8k, document 3"),
    /gsm8k, document 3: max_gen_toks \(4\) must be less than the model's max length \(4\)/,
  );

  const context = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10];
  // L = 8: choice 0 (1 token) keeps 8 context tokens, choices 1 and 2 (3 tokens) keep 6.
  assert.deepEqual(truncatedChoices(context, [[11], [12, 13, 14], [15, 16, 17]], 8), [
    { context: [3, 4, 5, 6, 7, 8, 9, 10], choices: [0] },
    { context: [5, 6, 7, 8, 9, 10], choices: [1, 2] },
  ]);
  // Nothing to cut, or the same cut for every choice: one group.
  assert.deepEqual(truncatedChoices(context, [[11], [12]], 20), [{ context, choices: [0, 1] }]);
  assert.deepEqual(truncatedChoices(context, [[11], [12]], 5), [{ context: [6, 7, 8, 9, 10], choices: [0, 1] }]);
  assert.throws(() => truncatedChoices(context, [[1, 2, 3]], 2), /choice 0 is 3 tokens long, more than the model's max length \(2\)/);
});

test("a truncated multiple-choice document goes to the runner in parts and its scores come back in choice order", async () => {
  // The plain context is 45 bytes; with max_length 20, " 3" (2 tokens) keeps 19 of them, " four" (5) keeps 16.
  await fs.writeFile(path.join(root, "data", "long.jsonl"), JSON.stringify({ q: "2+2", choices: ["3", "four"], answer: 1 }) + "\n");
  const task = inlineMcTask("    ").replace("data/arith.jsonl", "data/long.jsonl");
  const { profile, problems } = await load(
    "long.bprof.yaml",
    `models:\n  - path: ./llama3\n    max_length: 20\nbenchmarks:\n  - name: arith\n${task}`,
  );
  assert.ok(profile, problems.map(formatProblem).join("\n"));
  const { job, refs } = compileScoreJob(profile.models[0]!, profile.benchmarks, tokenizer, "cpu");
  const whole = utf8("Answer with a number.\n\nQ: 1+1\nA: 2\n\nQ: 2+2\nA:");
  assert.deepEqual(job.items, [
    { id: "arith/0#0", context: whole.slice(-(21 - 2)), choices: [utf8(" 3")] },
    { id: "arith/0#1", context: whole.slice(-(21 - 5)), choices: [utf8(" four")] },
  ]);
  assert.deepEqual(refs, [
    {
      id: "arith/0",
      benchmark: "arith",
      index: 0,
      parts: [
        { id: "arith/0#0", choices: [0] },
        { id: "arith/0#1", choices: [1] },
      ],
    },
  ]);
  const scores: RunnerScores = new Map([
    ["arith/0#0", [{ logprob: -3, tokens: 2, greedy: false }]],
    ["arith/0#1", [{ logprob: -1, tokens: 5, greedy: true }]],
  ]);
  const [scored] = scoredItems(refs, profile.benchmarks, scores, "scores.jsonl");
  assert.deepEqual(
    scored!.choices.map((c) => c.logprob),
    [-3, -1],
  );
  assert.equal(scored!.prediction, 1);
  assert.throws(
    () => scoredItems(refs, profile.benchmarks, new Map([...scores].slice(0, 1)), "scores.jsonl"),
    /scores of arith\/0 are missing or incomplete/,
  );
});

test("strftime_now prints the run's date, as Python's strftime in the C locale (in UTC)", async () => {
  // Llama 3.1's system header, as its template writes it.
  const template =
    "{{ bos_token }}Cutting Knowledge Date: December 2023\nToday Date: {{ strftime_now('%d %b %Y') }}\n{% for m in messages %}{{ m['content'] }}{% endfor %}";
  const dir = await modelFolder("dated", { chat_template: template });
  const lookup = await loadChatTemplate(dir);
  const messages = [{ role: "user" as const, content: "hi" }];
  const july = new Date(Date.UTC(2024, 6, 26, 23, 59));
  assert.equal(
    lookup.template!.on(july).render(messages, true),
    `${BOS_TOKEN}Cutting Knowledge Date: December 2023\nToday Date: 26 Jul 2024\nhi`,
  );
  assert.equal(lookup.template!.on(new Date("2025-01-05T00:30:00Z")).render(messages, true).split("\n")[1], "Today Date: 05 Jan 2025");
  const today = lookup.template!.render(messages, true).split("\n")[1];
  assert.match(today!, /^Today Date: \d\d [A-Z][a-z]{2} \d{4}$/, "without a run, the clock's date");
});

test("strftime: the directives chat templates use, English names, in UTC", async () => {
  const { strftime } = await import("../../../src/core/prompts/chatTemplate");
  const date = new Date(Date.UTC(2024, 6, 1, 9, 5, 7));
  assert.equal(strftime(date, "%A %a %d %B %b %Y %y %m %H:%M:%S %j %%"), "Monday Mon 01 July Jul 2024 24 07 09:05:07 183 %");
  assert.equal(strftime(new Date(Date.UTC(2023, 11, 31)), "%j"), "365");
  assert.equal(strftime(date, "%Z stays"), "%Z stays");
});
