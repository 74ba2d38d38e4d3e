// A chat template, an inline task and left truncation through the whole path: config -> chat
// rendering -> tokens -> truncated job (documents split into parts where their choices keep
// different amounts of context) -> real bprof-runner -> scores joined back in choice order,
// checked against the runner's scores of token ids spelled out here (the runner's numbers
// themselves are checked against transformers in transformersParity.test.ts).
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, before, test } from "node:test";
import { bprof } from "../support/cli";
import { float32Tolerance, runnerChoiceScores } from "../support/runnerScores";
import { makeTinyProject, TINY_BENCHMARK_DOCS, type TinyProject } from "../support/tinyProject";

// ChatML markers as text (the byte tokenizer has no tokens for them) after the tokenizer's BOS.
const TEMPLATE =
  "{{ bos_token }}{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>\n' }}{% endfor %}" +
  "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}";
const MAX_LENGTH = 40;
const BOS = 256;

let project: TinyProject;
let configPath: string;

before(async () => {
  project = await makeTinyProject(await fs.mkdtemp(path.join(os.tmpdir(), "bprof-chat-int-")));
  const tokenizerConfigFile = path.join(project.modelDir, "tokenizer_config.json");
  const tokenizerConfig = JSON.parse(await fs.readFile(tokenizerConfigFile, "utf8"));
  await fs.writeFile(tokenizerConfigFile, JSON.stringify({ ...tokenizerConfig, chat_template: TEMPLATE }, null, 2));
  configPath = path.join(project.root, "chat.bprof.yaml");
  await fs.writeFile(
    configPath,
    [
      "models:",
      "  - path: ./model",
      "    name: chat",
      "    chat_template: true",
      `    max_length: ${MAX_LENGTH}`,
      "benchmarks:",
      "  - name: inline_mc",
      "    task:",
      "      task: inline_mc",
      "      dataset_path: json",
      "      dataset_kwargs: {data_files: {test: tasks/tiny_mc.jsonl}}",
      "      output_type: multiple_choice",
      '      doc_to_text: "Question: {{question}}\\nAnswer:"',
      "      doc_to_choice: choices",
      "      doc_to_target: answer",
      "",
    ].join("\n"),
  );
});
after(async () => fs.rm(project.root, { recursive: true, force: true }));

const utf8 = (text: string) => [...Buffer.from(text, "utf8")];

test("bprof run with a chat template and max_length scores each choice on lm-eval's truncated templated context", async () => {
  const result = await bprof(["run", configPath]);
  assert.equal(result.exitCode, 0, `bprof run failed:\n${result.stderr}\n${result.stdout}`);
  assert.match(result.stdout, /chat\s+inline_mc\s+acc/);

  const runs = await fs.readdir(path.join(project.root, ".bprof", "runs"));
  const modelDir = path.join(project.root, ".bprof", "runs", runs[0]!, "models", "chat");
  const job = JSON.parse(await fs.readFile(path.join(modelDir, "job.json"), "utf8"));
  // Every document's choices differ in length and every context is cut: one job item per choice length.
  assert.ok(
    job.items.some((i: { id: string }) => i.id.includes("#")),
    "some document is split into parts",
  );

  const items = (await fs.readFile(path.join(modelDir, "items.jsonl"), "utf8"))
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));
  assert.equal(items.length, TINY_BENCHMARK_DOCS.length);
  // Each choice as its own item, as lm-eval reads it: the conversation up to the assistant's turn,
  // whose trailing "\n" moves into the continuation (lm-eval's context/continuation split; no
  // target_delimiter before the choice), cut as (context + continuation)[-(max_length + 1):].
  const pairs = items.map((item) => {
    const doc = TINY_BENCHMARK_DOCS[item.index]!;
    const rendered = `<|im_start|>user\nQuestion: ${doc.question}\nAnswer:<|im_end|>\n<|im_start|>assistant`;
    const context = [BOS, ...utf8(rendered)];
    return doc.choices.map((choice) => {
      const continuation = utf8(`\n${choice}`);
      return { context: context.slice(-(MAX_LENGTH + 1 - continuation.length)), choices: [continuation] };
    });
  });
  const expectedScores = (await runnerChoiceScores(project.modelDir, pairs.flat())).map((scores) => scores[0]!);
  let checked = 0;
  for (const [i, item] of items.entries()) {
    pairs[i]!.forEach(({ choices: [continuation] }, c) => {
      const expected = expectedScores[checked]!;
      const got = item.choices[c];
      assert.ok(
        Math.abs(got.logprob - expected.logprob) < float32Tolerance(expected.logprob),
        `${item.index} choice ${c}: bprof run ${got.logprob}, the expected tokens ${expected.logprob}`,
      );
      assert.equal(got.tokens, continuation!.length);
      checked++;
    });
  }
  assert.equal(checked, 10);
});

test("a template that prints today's date prints the run's start date; --resume compiles the same job, and refuses a run whose date was changed", async () => {
  const dated = path.join(project.root, "dated-model");
  await fs.cp(project.modelDir, dated, { recursive: true });
  const tokenizerConfigFile = path.join(dated, "tokenizer_config.json");
  const tokenizerConfig = JSON.parse(await fs.readFile(tokenizerConfigFile, "utf8"));
  const template = "{{ bos_token }}Today Date: {{ strftime_now('%d %b %Y') }}\n" + TEMPLATE.slice("{{ bos_token }}".length);
  await fs.writeFile(tokenizerConfigFile, JSON.stringify({ ...tokenizerConfig, chat_template: template }, null, 2));
  const config = path.join(project.root, "dated.bprof.yaml");
  await fs.writeFile(
    config,
    (await fs.readFile(configPath, "utf8")).replace("path: ./model", "path: ./dated-model").replace(`    max_length: ${MAX_LENGTH}\n`, "") +
      "output: .bprof-dated\n",
  );

  const first = await bprof(["run", config]);
  assert.equal(first.exitCode, 0, first.stderr);
  const runsDir = path.join(project.root, ".bprof-dated", "runs");
  const runDir = path.join(runsDir, (await fs.readdir(runsDir))[0]!);
  const manifestFile = path.join(runDir, "run.json");
  const manifest = JSON.parse(await fs.readFile(manifestFile, "utf8"));
  const job = JSON.parse(await fs.readFile(path.join(runDir, "models", "chat", "job.json"), "utf8"));
  const created = new Date(manifest.created);
  const day = `${String(created.getUTCDate()).padStart(2, "0")} ${created.toLocaleString("en-US", { month: "short", timeZone: "UTC" })} ${created.getUTCFullYear()}`;
  assert.equal(Buffer.from(job.items[0].context.slice(1)).toString("utf8").split("\n")[0], `Today Date: ${day}`);

  // Another time zone, where the clock's date may differ: the job is the same.
  const resumed = await bprof(["run", "--resume", runDir], { env: { TZ: "Pacific/Kiritimati" } });
  assert.equal(resumed.exitCode, 0, resumed.stderr);
  // A run that started on another day renders another date: its folder's job no longer matches.
  await fs.writeFile(manifestFile, JSON.stringify({ ...manifest, created: "2024-07-26T12:00:00.000Z" }, null, 2) + "\n");
  const refused = await bprof(["run", "--resume", runDir]);
  assert.equal(refused.exitCode, 2, refused.stderr);
  assert.match(refused.stderr, /the job compiled from the config now differs from/);
});
