// lm-eval's "multiple input" form (winogrande): doc_to_text gives the gold index, doc_to_choice the
// contexts and doc_to_target the one continuation. lm-eval's own winogrande task file
// (../shared/lm-eval-tasks, read in place, its Python helpers run) over documents in the Hugging
// Face dataset's shape written here; task files of our own for few-shot, Jinja and the errors; the
// job the runner gets (one item per choice) and the scores put back together. Expected requests are
// written out by hand from lm-eval's construct_requests: (context + choice, target_delimiter + target).
import assert from "node:assert/strict";
import { existsSync, promises as fs } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, before, test } from "node:test";
import { benchmarkAccuracy } from "../../../src/core/analysis/accuracy";
import { benchmarkTexts, loadProfile } from "../../../src/core/config/load";
import { benchmarkHover } from "../../../src/core/language/hover";
import { loadTask, type MultipleChoiceItem } from "../../../src/core/lmeval/task";
import { writeRandomLlama } from "../../support/randomLlama";
import { compileScoreJob } from "../../../src/core/plan/job";
import { errorsOf, formatProblem, type Problem } from "../../../src/core/base/problems";
import { loadTokenizer, type ModelTokenizer } from "../../../src/core/prompts/tokenize";
import { BOS_TOKEN_ID } from "../../../scripts/lib/byteTokenizer";
import { scoredItems, type RunnerScores } from "../../../src/core/results/items";

const lmEvalTasks = path.resolve(import.meta.dirname, "..", "..", "..", "..", "shared", "lm-eval-tasks");
const skipShared = existsSync(lmEvalTasks) ? false : "../shared/lm-eval-tasks (lm-eval's task files) is not here";
const winogrande = path.join(lmEvalTasks, "winogrande", "default.yaml");

const utf8 = (text: string) => [...Buffer.from(text, "utf8")];
const messages = (problems: Problem[]) => errorsOf(problems).map((p) => `${path.basename(p.file)}:${p.line} ${p.code} ${p.message}`);

/** Documents as allenai/winogrande has them: answer is "1" or "2", the blank is "_". */
const WINOGRANDE_DOCS = [
  {
    sentence: "The trophy doesn't fit into the brown suitcase because _ is too large.",
    option1: "the trophy",
    option2: "the suitcase",
    answer: "1",
  },
  {
    sentence: "Ian volunteered to eat Dennis's menudo after already having a bowl because _ despised eating intestine.",
    option1: "Ian",
    option2: "Dennis",
    answer: "2",
  },
  {
    sentence: "Sarah was a much better surgeon than Maria so _ always got the easier cases.",
    option1: "Sarah",
    option2: "Maria",
    answer: "2",
  },
];

/** lm-eval's requests for WINOGRANDE_DOCS, by hand: per document, (context, continuation) per choice, and the gold index. */
const WINOGRANDE_REQUESTS = [
  {
    requests: [
      ["The trophy doesn't fit into the brown suitcase because the trophy", " is too large."],
      ["The trophy doesn't fit into the brown suitcase because the suitcase", " is too large."],
    ],
    gold: 0,
  },
  {
    requests: [
      ["Ian volunteered to eat Dennis's menudo after already having a bowl because Ian", " despised eating intestine."],
      ["Ian volunteered to eat Dennis's menudo after already having a bowl because Dennis", " despised eating intestine."],
    ],
    gold: 1,
  },
  {
    requests: [
      ["Sarah was a much better surgeon than Maria so Sarah", " always got the easier cases."],
      ["Sarah was a much better surgeon than Maria so Maria", " always got the easier cases."],
    ],
    gold: 1,
  },
];

/** The requests an item stands for: each choice's context and continuation, and the gold index. */
function requestsOf(item: MultipleChoiceItem) {
  return { requests: item.choices.map((choice, c) => [item.context + choice, item.continuations[c]]), gold: item.target };
}

// A plain chat template (no special tokens), so rendered text is bytes for the byte tokenizer.
const CHAT_TEMPLATE =
  "{% for m in messages %}<{{ m['role'] }}>{{ m['content'] }}</{{ m['role'] }}>\n{% endfor %}{% if add_generation_prompt %}<assistant>\n\n{% endif %}";

let root: string;
let tokenizer: ModelTokenizer;
before(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), "bprof-multiple-input-"));
  await fs.writeFile(path.join(root, "validation.jsonl"), WINOGRANDE_DOCS.map((d) => JSON.stringify(d)).join("\n") + "\n");
  const model = path.join(root, "model");
  await writeRandomLlama(model, { seed: 1 });
  const config = JSON.parse(await fs.readFile(path.join(model, "tokenizer_config.json"), "utf8")) as Record<string, unknown>;
  await fs.writeFile(path.join(model, "tokenizer_config.json"), JSON.stringify({ ...config, chat_template: CHAT_TEMPLATE }));
  tokenizer = await loadTokenizer(model);
});
after(() => fs.rm(root, { recursive: true, force: true }));

async function writeFiles(dir: string, files: Record<string, string>): Promise<string> {
  await fs.mkdir(dir, { recursive: true });
  for (const [file, text] of Object.entries(files)) await fs.writeFile(path.join(dir, file), text);
  return dir;
}

test(
  "winogrande as lm-eval ships it: each choice is a context, doc_to_target the continuation they share, doc_to_text the gold",
  { skip: skipShared },
  async () => {
    const { task, problems } = await loadTask(winogrande, { data: { validation: path.join(root, "validation.jsonl") } });
    assert.deepEqual(messages(problems), []);
    const items = task!.items as MultipleChoiceItem[];
    assert.deepEqual(items.map(requestsOf), WINOGRANDE_REQUESTS);
    // No description, no few-shot examples: the shared context is empty, the choices are whole contexts.
    assert.deepEqual(
      items.map((i) => [i.context, i.multipleInput]),
      [
        ["", { targetText: "is too large." }],
        ["", { targetText: "despised eating intestine." }],
        ["", { targetText: "always got the easier cases." }],
      ],
    );
    assert.deepEqual(
      items.map((i) => i.line),
      [1, 2, 3],
    );
    assert.deepEqual(task!.metrics, ["acc"]);
  },
);

test(
  "a job scores each choice of winogrande as its own runner item on the same continuation tokens, and the scores come back as lm-eval's acc",
  { skip: skipShared },
  async () => {
    const config = (model: string) =>
      `models:\n  - path: ./model\n${model}benchmarks:\n  - task: ${winogrande}\n    data: {validation: ./validation.jsonl}\n`;
    await fs.writeFile(path.join(root, "wino.bprof.yaml"), config(""));
    const { profile, problems } = await loadProfile(path.join(root, "wino.bprof.yaml"));
    assert.ok(profile, problems.map(formatProblem).join("\n"));
    assert.equal(profile.benchmarks[0]!.name, "winogrande");
    // The hover shows the correct choice's context, the contexts as the choices and the shared continuation.
    const hover = benchmarkHover(profile.benchmarks[0]!, profile.models);
    assert.ok(hover.includes("```text\nThe trophy doesn't fit into the brown suitcase because the trophy\n```"), hover);
    assert.ok(
      hover.includes("Choices (each ends its own context; all are scored on the continuation “is too large\\.”): **A. The trophy"),
      hover,
    );
    // The contamination check reads the whole sentence: the contexts and the continuation.
    assert.ok(benchmarkTexts(profile.benchmarks)[0]!.text.endsWith("because the suitcase is too large."));
    const { job, refs } = compileScoreJob(profile.models[0]!, profile.benchmarks, tokenizer, "cpu");

    // The byte tokenizer's ids are the UTF-8 bytes after its BOS: one runner item per choice, (context_i, continuation).
    assert.deepEqual(
      job.items,
      WINOGRANDE_REQUESTS.flatMap(({ requests }, d) =>
        requests.map(([context, continuation], c) => ({
          id: `winogrande/${d}#${c}`,
          context: [BOS_TOKEN_ID, ...utf8(context!)],
          choices: [utf8(continuation!)],
        })),
      ),
    );
    assert.deepEqual(
      refs,
      [0, 1, 2].map((d) => ({
        id: `winogrande/${d}`,
        benchmark: "winogrande",
        index: d,
        parts: [
          { id: `winogrande/${d}#0`, choices: [0] },
          { id: `winogrande/${d}#1`, choices: [1] },
        ],
      })),
    );

    // Scores per runner item; acc is the argmax of the summed log-probabilities against doc_to_text's index.
    const score = (logprob: number) => [{ logprob, tokens: 1, greedy: false }];
    const scores: RunnerScores = new Map([
      ["winogrande/0#0", score(-10)],
      ["winogrande/0#1", score(-12)], // predicts 0, gold 0
      ["winogrande/1#0", score(-5)],
      ["winogrande/1#1", score(-4)], //    predicts 1, gold 1
      ["winogrande/2#0", score(-7)],
      ["winogrande/2#1", score(-7.1)], // predicts 0, gold 1
    ]);
    const scored = scoredItems(refs, profile.benchmarks, scores, "scores.jsonl");
    assert.deepEqual(
      scored.map((s) => [s.target, s.prediction]),
      [
        [0, 0],
        [1, 1],
        [1, 0],
      ],
    );
    assert.deepEqual(
      scored.map((s) => s.choices.map((c) => c.logprob)),
      [
        [-10, -12],
        [-5, -4],
        [-7, -7.1],
      ],
    );
    assert.equal(benchmarkAccuracy(scored).acc, 2 / 3);
    // lm-eval's acc_norm divides by the length of each choice (doc_to_choice: here the contexts), so it
    // can differ from acc: "…so Sarah" and "…so Maria" are the same length, "…because Ian" is shorter than "…because Dennis".
    assert.deepEqual(
      scored.map((s) => s.choiceBytes),
      WINOGRANDE_REQUESTS.map(({ requests }) => requests.map(([context]) => utf8(context!).length)),
    );
    const norm = scoredItems(
      refs,
      profile.benchmarks,
      new Map([...scores, ["winogrande/1#0", score(-3.9)], ["winogrande/1#1", score(-4)]]),
      "scores.jsonl",
    );
    assert.deepEqual(
      norm.map((s) => [s.prediction, s.predictionNorm]),
      [
        [0, 0],
        [0, 1],
        [0, 0],
      ],
    );
    assert.throws(
      () => scoredItems(refs, profile.benchmarks, new Map([...scores].slice(1)), "scores.jsonl"),
      /scores of winogrande\/0 are missing or incomplete/,
    );

    // Left truncation cuts each choice's context on its own: (context_i + continuation)[-(L + 1):].
    // A continuation longer than L is an error at the document's line (lm-eval asserts it).
    const compiledWith = async (maxLength: number) => {
      await fs.writeFile(path.join(root, "short.bprof.yaml"), config(`    max_length: ${maxLength}\n`));
      const short = await loadProfile(path.join(root, "short.bprof.yaml"));
      assert.ok(short.profile, short.problems.map(formatProblem).join("\n"));
      return compileScoreJob(short.profile.models[0]!, short.profile.benchmarks, tokenizer, "cpu");
    };
    const cut = await compiledWith(30);
    const [context0, continuation0] = WINOGRANDE_REQUESTS[0]!.requests[1]!;
    assert.deepEqual(cut.job.items[1], {
      id: "winogrande/0#1",
      context: [BOS_TOKEN_ID, ...utf8(context0!)].slice(-(31 - continuation0!.length)),
      choices: [utf8(continuation0!)],
    });
    await assert.rejects(compiledWith(20), (e: Error) =>
      e.message.endsWith(
        "validation.jsonl:2:1: error: benchmark `winogrande`, document 1: the continuation (doc_to_target) is 27 tokens long, more than the model's max length (20): raise the model's `max_length` or leave the document out [task.document]",
      ),
    );

    // Through a chat template: each choice is a user message of its own, rendered up to the
    // assistant's turn; the continuation has no target_delimiter, and takes the context's trailing
    // "\n\n" (lm-eval's _encode_pair).
    await fs.writeFile(path.join(root, "chat.bprof.yaml"), config("    chat_template: true\n"));
    const chat = await loadProfile(path.join(root, "chat.bprof.yaml"));
    assert.ok(chat.profile, chat.problems.map(formatProblem).join("\n"));
    const chatJob = compileScoreJob(chat.profile.models[0]!, chat.profile.benchmarks, tokenizer, "cpu");
    assert.deepEqual(
      chatJob.job.items.slice(0, 2),
      WINOGRANDE_REQUESTS[0]!.requests.map(([context], c) => ({
        id: `winogrande/0#${c}`,
        // The template writes no BOS, so the tokenizer's is added (lm-eval's has_bos_prefix).
        context: [BOS_TOKEN_ID, ...utf8(`<user>${context}</user>\n<assistant>`)],
        choices: [utf8("\n\nis too large.")],
      })),
    );
  },
);

/** A task of our own in the multiple-input form; `docs` one JSON line each. */
async function ownTask(name: string, keys: string, docs: object[]): Promise<string> {
  const dir = await writeFiles(path.join(root, name), {
    "task.yaml": `task: ${name}\ndataset_path: json\ndataset_kwargs:\n  data_files:\n    test: docs.jsonl\noutput_type: multiple_choice\n${keys}`,
    "docs.jsonl": docs.map((d) => JSON.stringify(d)).join("\n") + "\n",
  });
  return path.join(dir, "task.yaml");
}

const PRONOUN_DOCS = [
  { a: "The cat chased the mouse because the cat", b: "The cat chased the mouse because the mouse", rest: "was hungry.", label: "0" },
  { a: "Anna thanked Beth because Anna", b: "Anna thanked Beth because Beth", rest: "had helped.", label: "1" },
];

test("Jinja that renders an index and a list: the form is lm-eval's; few-shot examples show the gold context, target_delimiter and the continuation", async () => {
  const file = await ownTask(
    "pronouns",
    [
      'description: "Fill in the blank.\\n\\n"',
      "num_fewshot: 1",
      "fewshot_config:",
      "  sampler: first_n",
      "  samples:",
      '    - {a: "Tom lent Bob money because Tom", b: "Tom lent Bob money because Bob", rest: "was rich.", label: "0"}',
      'doc_to_text: "{{label}}"',
      'doc_to_choice: "{{[a, b]}}"',
      "doc_to_target: rest",
      "",
    ].join("\n"),
    PRONOUN_DOCS,
  );
  const { task, problems } = await loadTask(file);
  assert.deepEqual(messages(problems), []);
  const shared = "Fill in the blank.\n\nTom lent Bob money because Tom was rich.\n\n";
  assert.deepEqual((task!.items as MultipleChoiceItem[]).map(requestsOf), [
    {
      requests: [
        [shared + "The cat chased the mouse because the cat", " was hungry."],
        [shared + "The cat chased the mouse because the mouse", " was hungry."],
      ],
      gold: 0,
    },
    {
      requests: [
        [shared + "Anna thanked Beth because Anna", " had helped."],
        [shared + "Anna thanked Beth because Beth", " had helped."],
      ],
      gold: 1,
    },
  ]);
  assert.deepEqual(task!.items[0]!.prompt, {
    description: "Fill in the blank.\n\n",
    fewshot: [{ text: "Tom lent Bob money because Tom", target: "was rich." }],
    text: "",
  });

  // With a chat template, the description and the example are one conversation, each choice one more.
  await fs.writeFile(
    path.join(root, "pronouns.bprof.yaml"),
    `models:\n  - path: ./model\n    chat_template: true\nbenchmarks:\n  - task: ${file}\n`,
  );
  const chat = await loadProfile(path.join(root, "pronouns.bprof.yaml"));
  assert.ok(chat.profile, chat.problems.map(formatProblem).join("\n"));
  const { job } = compileScoreJob(chat.profile.models[0]!, chat.profile.benchmarks, tokenizer, "cpu");
  const prefix = "<system>Fill in the blank.\n\n</system>\n<user>Tom lent Bob money because Tom was rich.\n\n</user>\n<assistant>\n\n";
  assert.deepEqual(job.items[1], {
    id: "pronouns/0#1",
    context: [BOS_TOKEN_ID, ...utf8(`${prefix}<user>The cat chased the mouse because the mouse</user>\n<assistant>`)],
    choices: [utf8("\n\nwas hungry.")],
  });
});

test("an index out of range, text where the first document gave an index, and contexts that are not a list of strings: errors at the data line or the key", async () => {
  const keys = 'doc_to_text: label\ndoc_to_choice: "{{[a, b]}}"\ndoc_to_target: rest\n';
  const range = await ownTask("range", keys, [
    { ...PRONOUN_DOCS[0], label: 0 },
    { ...PRONOUN_DOCS[1], label: 2 },
    { ...PRONOUN_DOCS[1], label: "Anna" },
  ]);
  assert.deepEqual(messages((await loadTask(range)).problems), [
    "docs.jsonl:2 task.document document 1: doc_to_text gives 2, which is not an index below 2 into the contexts doc_to_choice gives",
    "docs.jsonl:3 task.document document 2: doc_to_text gives text here but an index for the first document, and lm-eval reads the task's form (choices as contexts when it is an index) from the first document",
  ]);

  // doc_to_choice naming a field that holds a string: the same for every document, so once, at the key.
  const notList = await ownTask("not-list", "doc_to_text: label\ndoc_to_choice: a\ndoc_to_target: rest\n", [
    { ...PRONOUN_DOCS[0], label: 0 },
  ]);
  assert.deepEqual(messages((await loadTask(notList)).problems), [
    'task.yaml:8 task.template doc_to_choice: doc_to_text gives an index (lm-eval\'s multiple-input form, each choice a context), so doc_to_choice must give a list of at least 2 strings; it gives "The cat chased the mouse because the cat" in document 0',
  ]);
  // A Python helper's list of numbers, on a later document: at its data line.
  const numbers = await writeFiles(path.join(root, "numbers"), {
    "task.yaml":
      "task: numbers\ndataset_path: json\ndataset_kwargs:\n  data_files:\n    test: docs.jsonl\noutput_type: multiple_choice\ndoc_to_text: label\ndoc_to_choice: !function utils.choices\ndoc_to_target: rest\n",
    "utils.py": "def choices(doc):\n    return [doc['a'], doc['b']] if doc['label'] == 0 else [1, 2]\n",
    "docs.jsonl":
      [
        { ...PRONOUN_DOCS[0], label: 0 },
        { ...PRONOUN_DOCS[1], label: 1 },
      ]
        .map((d) => JSON.stringify(d))
        .join("\n") + "\n",
  });
  assert.deepEqual(messages((await loadTask(path.join(numbers, "task.yaml"))).problems), [
    "docs.jsonl:2 task.document document 1: doc_to_text gives an index (lm-eval's multiple-input form, each choice a context), so doc_to_choice must give a list of at least 2 strings; it gives [1,2]",
  ]);
});
