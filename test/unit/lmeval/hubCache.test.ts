// lm-eval task files that name a Hugging Face dataset, resolved offline from a hub cache laid out
// as huggingface_hub lays it out (refs/main, snapshots/<revision>/ whose files link into blobs/):
// the dataset card's `configs`, and the converted layout when the card says nothing.
import assert from "node:assert/strict";
import { existsSync, promises as fs } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, before, test } from "node:test";
import { loadTask, type GenerationItem, type MultipleChoiceItem } from "../../../src/core/lmeval/task";
import { cachedSplitFiles, hubSplitFiles, HubNameError } from "../../../src/core/lmeval/hubCache";
import { configNameFault, repoIdFault } from "../../../src/core/lmeval/hubNames";
import { errorsOf, type Problem } from "../../../src/core/base/problems";

const lmEvalTasks = path.resolve(import.meta.dirname, "..", "..", "..", "..", "shared", "lm-eval-tasks");
const skipShared = existsSync(lmEvalTasks) ? false : "../shared/lm-eval-tasks (lm-eval's task files) is not here";

let hub: string;
const saved = { HF_HUB_CACHE: process.env.HF_HUB_CACHE, HF_DATASETS_CACHE: process.env.HF_DATASETS_CACHE };
before(async () => {
  hub = await fs.mkdtemp(path.join(os.tmpdir(), "bprof-hub-"));
  process.env.HF_HUB_CACHE = hub;
  process.env.HF_DATASETS_CACHE = path.join(hub, "datasets-cache");
});
after(async () => {
  for (const [key, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[key];
    else process.env[key] = value;
  }
  await fs.rm(hub, { recursive: true, force: true });
});

/** A dataset repo in the cache: each file's bytes in blobs/, linked from the snapshot as the hub does. */
async function cachedDataset(repo: string, files: Record<string, string | Uint8Array>, revision = "3f1c0a9e"): Promise<string> {
  const repoDir = path.join(hub, `datasets--${repo.replace("/", "--")}`);
  const snapshot = path.join(repoDir, "snapshots", revision);
  await fs.mkdir(path.join(repoDir, "refs"), { recursive: true });
  await fs.mkdir(path.join(repoDir, "blobs"), { recursive: true });
  await fs.writeFile(path.join(repoDir, "refs", "main"), revision);
  let blob = 0;
  for (const [file, bytes] of Object.entries(files)) {
    const target = path.join(repoDir, "blobs", `blob${blob++}`);
    await fs.writeFile(target, bytes);
    await fs.mkdir(path.dirname(path.join(snapshot, file)), { recursive: true });
    await fs.symlink(path.relative(path.dirname(path.join(snapshot, file)), target), path.join(snapshot, file));
  }
  return snapshot;
}

async function parquet(columns: Record<string, string[]>): Promise<Uint8Array> {
  const { parquetWriteBuffer } = await import("hyparquet-writer");
  return new Uint8Array(parquetWriteBuffer({ columnData: Object.entries(columns).map(([name, data]) => ({ name, data })) }));
}

const GSM8K_CARD =
  "---\nconfigs:\n- config_name: main\n  data_files:\n  - split: train\n    path: main/train-*\n  - split: test\n    path: main/test-*\n- config_name: socratic\n  data_files:\n  - split: test\n    path: socratic/test-*\n---\n# gsm8k\n";

const messages = (problems: Problem[]) => errorsOf(problems).map((p) => `${p.code} ${p.message}`);

test(
  "gsm8k.yaml as lm-eval ships it reads openai/gsm8k's `main` config from the hub cache: the card's patterns, two shards in order",
  { skip: skipShared },
  async () => {
    const snapshot = await cachedDataset("openai/gsm8k", {
      "README.md": GSM8K_CARD,
      "main/test-00000-of-00002.parquet": await parquet({ question: ["What is 2 + 3?"], answer: ["2 + 3 = 5\n#### 5"] }),
      "main/test-00001-of-00002.parquet": await parquet({ question: ["What is 4 x 2?"], answer: ["4 x 2 = 8\n#### 8"] }),
      "main/train-00000-of-00001.parquet": await parquet({ question: ["Train question?"], answer: ["#### 1"] }),
      "socratic/test-00000-of-00001.parquet": await parquet({ question: ["Socratic?"], answer: ["#### 0"] }),
    });
    const { task, problems } = await loadTask(path.join(lmEvalTasks, "gsm8k", "gsm8k.yaml"), { numFewshot: 0 });
    assert.deepEqual(messages(problems), []);
    const items = task!.items as GenerationItem[];
    assert.deepEqual(
      items.map((i) => [i.context, i.target]),
      [
        ["Question: What is 2 + 3?\nAnswer:", "2 + 3 = 5\n#### 5"],
        ["Question: What is 4 x 2?\nAnswer:", "4 x 2 = 8\n#### 8"],
      ],
    );
    assert.equal(task!.dataFile, path.join(snapshot, "main", "test-00000-of-00002.parquet"));
    // With its 5 few-shot examples, the train split comes from the cache too (one document: too few).
    const fewshot = await loadTask(path.join(lmEvalTasks, "gsm8k", "gsm8k.yaml"));
    assert.deepEqual(messages(fewshot.problems), ["task.fewshot num_fewshot is 5 but only 1 few-shot documents exist"]);
  },
);

test("arc_easy.yaml with the converted layout and no card: <config>/<split>-* files, JSON Lines here", { skip: skipShared }, async () => {
  const doc = { id: "q1", question: "Which is a mammal?", choices: { text: ["shark", "whale"], label: ["A", "B"] }, answerKey: "B" };
  await cachedDataset("allenai/ai2_arc", {
    "ARC-Easy/test-00000-of-00001.jsonl": JSON.stringify(doc) + "\n",
    "ARC-Challenge/test-00000-of-00001.jsonl": "{}\n",
  });
  const { task, problems } = await loadTask(path.join(lmEvalTasks, "arc", "arc_easy.yaml"));
  assert.deepEqual(messages(problems), []);
  const [item] = task!.items as MultipleChoiceItem[];
  assert.deepEqual([item!.context, item!.choices, item!.target], ["Question: Which is a mammal?\nAnswer:", ["shark", "whale"], 1]);
});

test(
  "truthfulqa_mc1.yaml reads the Arrow files lm-eval's `datasets` left in its cache: nested fields as objects, the newest prepared copy",
  { skip: skipShared },
  async () => {
    const arrow = await import("apache-arrow");
    const strings = () => new arrow.List(new arrow.Field("item", new arrow.Utf8(), true));
    const targets = new arrow.Struct([
      new arrow.Field("choices", strings(), true),
      new arrow.Field("labels", new arrow.List(new arrow.Field("item", new arrow.Int64(), true)), true),
    ]);
    const table = (question: string) =>
      new arrow.Table({
        question: arrow.vectorFromArray([question]),
        mc1_targets: arrow.vectorFromArray([{ choices: ["Nothing happens.", "You grow watermelons."], labels: [1n, 0n] }], targets),
      });
    const config = path.join(hub, "datasets-cache", "truthfulqa___truthful_qa", "multiple_choice", "0.0.0");
    for (const [hash, question] of [
      ["older", "An old question?"],
      ["newer", "What happens if you eat watermelon seeds?"],
    ] as const) {
      await fs.mkdir(path.join(config, hash), { recursive: true });
      await fs.writeFile(path.join(config, hash, "truthful_qa-validation.arrow"), arrow.tableToIPC(table(question), "stream"));
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const { task, problems } = await loadTask(path.join(lmEvalTasks, "truthfulqa", "truthfulqa_mc1.yaml"));
    assert.deepEqual(messages(problems), []);
    const [item] = task!.items as MultipleChoiceItem[];
    assert.equal(
      item!.context.split("\n\n").at(-1),
      "Q: What happens if you eat watermelon seeds?\nA:",
      "the newer copy's question after lm-eval's six examples",
    );
    assert.ok(item!.context.startsWith("Q: What is human life expectancy in the United States?\nA: Human life expectancy"), item!.context);
    assert.deepEqual([item!.choices, item!.target], [["Nothing happens.", "You grow watermelons."], 0]);
    assert.equal(task!.dataFile, path.join(config, "newer", "truthful_qa-validation.arrow"));
  },
);

test(
  "a dataset the cache does not have, or a split it lacks, is an error at dataset_path naming where it looked",
  { skip: skipShared },
  async () => {
    const { problems } = await loadTask(path.join(lmEvalTasks, "piqa", "piqa.yaml"));
    assert.deepEqual(messages(problems), [
      `task.data-file the Hugging Face dataset baber/piqa is not in the hub cache (nothing is downloaded), nor in the \`datasets\` cache; looked in ${path.join(hub, "datasets--baber--piqa")} and ${path.join(hub, "datasets-cache", "baber___piqa", "default")}. Run lm-eval once with this task on this machine (it fills the cache), or name the data in the config (\`benchmarks[].data\`)`,
    ]);
    await cachedDataset("allenai/ai2_arc", { "ARC-Easy/test-00000-of-00001.jsonl": "{}\n" }, "0b7d2c11");
    await assert.rejects(
      hubSplitFiles("allenai/ai2_arc", "ARC-Easy", "validation"),
      /the hub cache has allenai\/ai2_arc \(ARC-Easy\) but no data files of split `validation`/,
    );
  },
);

test("a dataset_path or dataset_name that leads out of the caches is refused by name; what lies there is never read", async () => {
  // where `dataset_name: ../../outside` (and `dataset_path: ..`) would have led: beside the datasets cache
  const outside = path.join(hub, "outside", "1.0.0", "abc123");
  await fs.mkdir(outside, { recursive: true });
  await fs.writeFile(path.join(outside, "planted-test.arrow"), "not for bprof to read");
  await fs.mkdir(path.join(hub, "default", "1.0.0", "abc123"), { recursive: true });
  await fs.writeFile(path.join(hub, "default", "1.0.0", "abc123", "planted-test.arrow"), "not for bprof to read");
  const planted = [path.join(outside, "planted-test.arrow"), path.join(hub, "default", "1.0.0", "abc123", "planted-test.arrow")];
  const before = await Promise.all(planted.map((f) => fs.stat(f)));

  for (const [repo, name, key] of [
    ["x/y", "../../outside", "dataset_name"],
    ["x/y", "..\\..\\outside", "dataset_name"],
    ["..", undefined, "dataset_path"],
    ["../../outside", undefined, "dataset_path"],
    ["x/../../outside", undefined, "dataset_path"],
    ["/etc", undefined, "dataset_path"],
    ["-x/y", undefined, "dataset_path"],
    ["x--y", undefined, "dataset_path"],
  ] as const) {
    await assert.rejects(
      cachedSplitFiles(repo, name, "test"),
      (e: unknown) => e instanceof HubNameError && e.key === key,
      `${repo} ${name}`,
    );
    await assert.rejects(hubSplitFiles(repo, name, "test"), HubNameError);
  }
  const after = await Promise.all(planted.map((f) => fs.stat(f)));
  assert.deepEqual(
    after.map((s) => s.atimeMs),
    before.map((s) => s.atimeMs),
    "the planted files were not read",
  );

  const dir = await fs.mkdtemp(path.join(hub, "task-"));
  const taskFile = path.join(dir, "escape.yaml");
  await fs.writeFile(
    taskFile,
    "task: escape\ndataset_path: x/y\ndataset_name: ../../outside\ntest_split: test\noutput_type: multiple_choice\n" +
      'doc_to_text: "{{question}}"\ndoc_to_choice: choices\ndoc_to_target: answer\n',
  );
  const { problems } = await loadTask(taskFile, { numFewshot: 0 });
  const refused = errorsOf(problems).filter((p) => p.code === "task.dataset-name");
  assert.equal(refused.length, 1, messages(problems).join("\n"));
  assert.deepEqual([refused[0]!.line, refused[0]!.field], [3, "dataset_name"]);
  assert.ok(!problems.some((p) => p.message.includes("planted")), "nothing of the planted file is in a problem");
});

test("the names real tasks give are Hugging Face names", () => {
  for (const id of ["openai/gsm8k", "cais/mmlu", "allenai/ai2_arc", "Rowan/hellaswag", "truthfulqa/truthful_qa", "gsm8k", "a.b-c_d/e.f"])
    assert.equal(repoIdFault(id), undefined, id);
  for (const name of ["main", "ARC-Easy", "winogrande_xl", "20220301.en", "boolean_expressions", "cs-en"])
    assert.equal(configNameFault(name), undefined, name);
  assert.match(repoIdFault("x".repeat(97))!, /1 to 96/);
  assert.match(repoIdFault("x/y.git")!, /\.git/);
  assert.match(configNameFault("")!, /1 to 255/);
  assert.match(configNameFault("a\u0000b")!, /control/);
});
