// generate_until end to end with the real runner on a tiny random Llama (byte-level tokenizer):
// a 5-document generation task made here, scored by `bprof run` (greedy decoding, max_gen_toks 8)
// and profiled with abilities beside the multiple-choice task of the profile project.
//
// A random model almost never produces a given answer, so the profiled task is built from what
// it does produce: a first run generates for every document; the second task stops at a character
// that run generated mid-text, and its targets are, for two documents, the answers the model's own
// greedy generations give under the task's rules (decoded, cut, filtered), spelled in another case
// (the task ignores case); the other documents have targets no generation matches. Everything is
// then recomputed by hand from the runner's token ids: UTF-8 bytes decoded by Node, the cut at the
// first `until` string, the regex filter, exact_match ignoring case, and the AIS with chance 0.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { promises as fs } from "node:fs";
import * as path from "node:path";
import { after, before, test } from "node:test";
import { bprof } from "../support/cli";
import { K, makeProfileProject, QUANT, SPATIAL } from "../support/profileProject";

const QUESTIONS = ["What is two plus two?", "Name a colour.", "Is water wet?", "Which animal barks?", "Say hello."];
const BOS = 256;
const EOS = 257;
const MAX_GEN_TOKS = 8;
const FILTER = "([A-Za-z0-9]+)";
const WRONG_TARGET = "no-generation-says-this";

/** A generation task over QUESTIONS: stop at `until`, the first ASCII word or number is the answer, case ignored. */
function taskYaml(name: string, until: string[]): string {
  return `task: ${name}
dataset_path: json
dataset_kwargs:
  data_files:
    test: ${name}.jsonl
output_type: generate_until
doc_to_text: "Question: {{question}}\\nAnswer:"
doc_to_target: target
generation_kwargs:
  until: ${JSON.stringify(until)}
  max_gen_toks: ${MAX_GEN_TOKS}
  do_sample: false
filter_list:
  - name: first-word
    filter:
      - function: regex
        regex_pattern: ${JSON.stringify(FILTER)}
      - function: take_first
metric_list:
  - metric: exact_match
    ignore_case: true
`;
}

const docsJsonl = (targets: string[]) => QUESTIONS.map((question, i) => JSON.stringify({ question, target: targets[i] })).join("\n") + "\n";

const config = (benchmarks: string[], abilities: boolean) => `models:
  - path: ./model
    name: tiny-llama
benchmarks:
${benchmarks.map((b) => `  - task: ./tasks/${b}.yaml\n`).join("")}${
  abilities
    ? `abilities:
  - name: ${QUANT}
    data: ./diag/quantitative.diag.jsonl
  - name: ${SPATIAL}
    data: ./diag/spatial.diag.jsonl
ablation:
  k: [${K.join(", ")}]
  selections: [top, random]
  batch_size: 2
seed: 3
bootstrap:
  resamples: 300
`
    : ""
}`;

// By hand, independently of the code under test.
const utf8 = (text: string) => [...Buffer.from(text, "utf8")];
/** The byte-level tokenizer: ids below 256 are UTF-8 bytes; BOS and EOS are special and skipped. */
const decodeByHand = (ids: number[]) => Buffer.from(ids.filter((id) => id < 256)).toString("utf8");
const cutByHand = (text: string, until: string[]) => until.reduce((t, stop) => (t.includes(stop) ? t.slice(0, t.indexOf(stop)) : t), text);
const filterByHand = (response: string) => /[A-Za-z0-9]+/.exec(response)?.[0] ?? "[invalid]";
const matchByHand = (answer: string, target: string) => answer.toLowerCase() === target.toLowerCase();

interface GenItem {
  kind: string;
  benchmark: string;
  index: number;
  target: string;
  answer: string;
  correct: boolean;
  response: string;
  generation: string;
  tokens: number[];
  stopped: boolean;
  filters: { name: string; answer: string; correct: boolean }[];
}
interface Cell {
  baseline: number;
  ablated: number;
  chance: number;
  ais: number | null;
  ci: { low: number; high: number } | null;
  flips: { right_to_wrong: number; wrong_to_right: number };
  test?: string;
  specificity?: { value: number | null };
}

let root: string;
let configPath: string;

async function readJsonl<T>(file: string): Promise<T[]> {
  return (await fs.readFile(file, "utf8"))
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as T);
}

// Run ids sort by start time to the second only, and two runs of this file can start in the same
// second: order them by the millisecond start time their run.json records.
async function newestRun(): Promise<string> {
  const base = path.join(root, ".bprof", "runs");
  const runs = await Promise.all(
    (await fs.readdir(base)).map(async (id) => {
      const manifest = JSON.parse(await fs.readFile(path.join(base, id, "run.json"), "utf8")) as { created: string };
      return { dir: path.join(base, id), created: Date.parse(manifest.created) };
    }),
  );
  runs.sort((a, b) => a.created - b.created);
  return runs.at(-1)!.dir;
}

before(async () => {
  ({ root, configPath } = await makeProfileProject({
    config: config(["probe", "tiny_yes"], false),
    extraFiles: { "tasks/probe.yaml": taskYaml("probe", ["Question:"]), "tasks/probe.jsonl": docsJsonl(QUESTIONS.map(() => WRONG_TARGET)) },
  }));
});
after(async () => fs.rm(root, { recursive: true, force: true }));

let probe: GenItem[];

test("bprof run scores a generate_until task: the runner's tokens decoded, cut, filtered and matched", { timeout: 120_000 }, async () => {
  const validated = await bprof(["validate", configPath]);
  assert.equal(validated.exitCode, 0, validated.stderr);
  // without a warning but the benchmarks' power: 5 and 8 documents detect no AIS (config.low-power)
  assert.deepEqual(
    validated.stderr.split("\n").filter((l) => l !== "" && !l.endsWith("[config.low-power]")),
    [],
    "generate_until benchmarks validate without a warning",
  );

  const result = await bprof(["run", configPath]);
  assert.equal(result.exitCode, 0, `bprof run failed:\n${result.stderr}\n${result.stdout}`);
  assert.match(result.stdout, /^tiny-llama {2}probe {2}exact_match 0\.0000 \(first-word\) {2}chance 0\.0000 {2}\(5 items\)$/m);
  assert.match(result.stdout, /^tiny-llama {2}tiny_yes {2}acc /m);

  const modelDir = path.join(await newestRun(), "models", "tiny-llama");
  const job = JSON.parse(await fs.readFile(path.join(modelDir, "job.json"), "utf8"));
  assert.equal(job.subcommand, "score");
  assert.deepEqual(job.items[0], {
    id: "probe/0",
    // BOS first: lm-eval 0.4.10+ encodes a generation context with the tokenizer's special tokens.
    context: [BOS, ...utf8(`Question: ${QUESTIONS[0]}\nAnswer:`)],
    generate: { max_tokens: MAX_GEN_TOKS, stop: [utf8("Question:"), [EOS]] },
  });
  assert.ok(Array.isArray(job.items[5].choices), "the multiple-choice items keep their choices");

  const runner = new Map(
    (await readJsonl<{ id: string; generated: number[]; stopped: boolean }>(path.join(modelDir, "runner", "scores.jsonl"))).map((r) => [
      r.id,
      r,
    ]),
  );
  probe = (await readJsonl<GenItem>(path.join(modelDir, "items.jsonl"))).filter((i) => i.benchmark === "probe");
  assert.equal(probe.length, 5);
  for (const item of probe) {
    const line = runner.get(`probe/${item.index}`)!;
    assert.deepEqual(item.tokens, line.generated, "the runner's token ids, as it wrote them");
    assert.equal(item.stopped, line.stopped);
    assert.ok(line.generated.length >= 1 && line.generated.length <= MAX_GEN_TOKS);
    assert.equal(item.generation, decodeByHand(line.generated));
    assert.equal(item.response, cutByHand(item.generation, ["Question:"]));
    assert.equal(item.answer, filterByHand(item.response));
    assert.deepEqual(item.filters, [{ name: "first-word", answer: item.answer, correct: false }]);
    assert.deepEqual([item.kind, item.target, item.correct], ["generate_until", WRONG_TARGET, false]);
  }
});

test(
  "a profile with abilities over a generation task built from the model's own answers: exact_match AIS with chance 0",
  { timeout: 300_000 },
  async () => {
    assert.ok(probe, "the first test ran");
    // A stop character the model generated after the start of some generation (printable ASCII, one byte: one token).
    const stopByte =
      probe.flatMap((i) => i.tokens.slice(1, -1)).find((t) => t >= 0x21 && t <= 0x7e && !/[A-Za-z0-9]/.test(String.fromCharCode(t))) ??
      probe.flatMap((i) => i.tokens.slice(1, -1)).find((t) => t >= 0x21 && t <= 0x7e);
    assert.ok(stopByte !== undefined, `no printable character in the generations: ${JSON.stringify(probe.map((i) => i.tokens))}`);
    const until = [String.fromCharCode(stopByte), "\n"];
    // The answers the second task's rules give for the probe's generations; two documents get them as targets.
    const expected = probe.map((i) => filterByHand(cutByHand(decodeByHand(i.tokens), until)));
    const chosen = expected
      .map((a, i) => [a, i] as const)
      .filter(([a]) => a !== "[invalid]")
      .slice(0, 2)
      .map(([, i]) => i);
    assert.ok(chosen.length > 0, `no generation has an ASCII word: ${JSON.stringify(expected)}`);
    const flipCase = (s: string) => [...s].map((c) => (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase())).join("");
    const targets = QUESTIONS.map((_, i) => (chosen.includes(i) ? flipCase(expected[i]!) : WRONG_TARGET));
    await fs.writeFile(path.join(root, "tasks", "tiny_gen.yaml"), taskYaml("tiny_gen", until));
    await fs.writeFile(path.join(root, "tasks", "tiny_gen.jsonl"), docsJsonl(targets));
    await fs.writeFile(configPath, config(["tiny_gen", "tiny_yes"], true));

    const result = await bprof(["run", configPath]);
    assert.equal(result.exitCode, 0, `bprof run failed:\n${result.stderr}\n${result.stdout}`);
    assert.match(result.stdout, /^tiny-llama: AIS \(acc; exact_match for generate_until benchmarks\) at k = 0\.001 /m);
    assert.match(result.stdout, /^ability\s+tiny_gen \(exact_match\)\s+tiny_yes \(acc\)$/m);

    const runDir = await newestRun();
    const modelDir = path.join(runDir, "models", "tiny-llama");
    const job = JSON.parse(await fs.readFile(path.join(modelDir, "job.json"), "utf8"));
    assert.equal(job.subcommand, "profile");
    assert.deepEqual(job.items[0].generate, { max_tokens: MAX_GEN_TOKS, stop: [[stopByte], [10], [EOS]] });

    // Every generated item of the baseline, by hand from the runner's baseline.jsonl.
    const runner = new Map(
      (await readJsonl<{ id: string; generated: number[]; stopped: boolean }>(path.join(modelDir, "runner", "baseline.jsonl"))).map((r) => [
        r.id,
        r,
      ]),
    );
    const baseline = (await readJsonl<GenItem>(path.join(modelDir, "items.jsonl"))).filter((i) => i.benchmark === "tiny_gen");
    for (const item of baseline) {
      const line = runner.get(`tiny_gen/${item.index}`)!;
      assert.deepEqual(item.tokens, line.generated);
      const response = cutByHand(decodeByHand(line.generated), until);
      const answer = filterByHand(response);
      assert.deepEqual(
        [item.response, item.answer, item.target, item.correct],
        [response, answer, targets[item.index], matchByHand(answer, targets[item.index]!)],
      );
      // A generation that produced the stop character ends on it: the runner stopped there, the cut removed it.
      if (line.generated.includes(stopByte)) assert.equal(line.generated.at(-1), stopByte);
    }
    const right = (items: GenItem[]) => items.filter((i) => i.correct).length;
    const p0 = right(baseline) / 5;
    assert.ok(p0 > 0, `the chosen documents should be right at baseline: ${JSON.stringify(baseline.map((i) => [i.answer, i.target]))}`);

    const results = JSON.parse(await fs.readFile(path.join(runDir, "results.json"), "utf8"));
    assert.equal(results.schema_version, 1);
    const model = results.models[0];
    assert.deepEqual(model.benchmarks[0], {
      name: "tiny_gen",
      task_file: path.join(root, "tasks", "tiny_gen.yaml"),
      output_type: "generate_until",
      items: 5,
      exact_match: p0,
      chance: 0,
      filter: "first-word",
      exact_match_by_filter: { "first-word": p0 },
      data_file: path.join(root, "tasks", "tiny_gen.jsonl"),
      data_sha256: createHash("sha256")
        .update(await fs.readFile(path.join(root, "tasks", "tiny_gen.jsonl")))
        .digest("hex"),
    });
    assert.equal(model.benchmarks[1].output_type, "multiple_choice");

    // Every cell of the generation benchmark by hand: AIS = (P(theta) - P(theta_a)) / P(theta).
    for (const v of model.profile.variants) {
      const cells = v.benchmarks.find((b: { name: string }) => b.name === "tiny_gen");
      assert.deepEqual(Object.keys(cells), ["name", "exact_match"]);
      const cell: Cell = cells.exact_match;
      const ablated = (await readJsonl<GenItem>(path.join(modelDir, v.items_file))).filter((i) => i.benchmark === "tiny_gen");
      const variantRunner = new Map(
        (await readJsonl<{ id: string; generated: number[] }>(path.join(modelDir, v.scores_file))).map((r) => [r.id, r]),
      );
      for (const item of ablated) {
        assert.deepEqual(item.tokens, variantRunner.get(`tiny_gen/${item.index}`)!.generated);
        assert.equal(item.correct, matchByHand(filterByHand(cutByHand(decodeByHand(item.tokens), until)), targets[item.index]!));
      }
      const pa = right(ablated) / 5;
      assert.equal(cell.baseline, p0);
      assert.equal(cell.ablated, pa);
      assert.equal(cell.chance, 0);
      assert.equal(cell.ais, (p0 - pa) / p0, `${v.ability} ${v.selection} k=${v.k}`);
      assert.ok(cell.ci !== null && cell.ci.low <= cell.ais! + 1e-12 && cell.ais! <= cell.ci.high + 1e-12, JSON.stringify(cell));
      const rightToWrong = baseline.filter((b, i) => b.correct && !ablated[i]!.correct).length;
      const wrongToRight = baseline.filter((b, i) => !b.correct && ablated[i]!.correct).length;
      assert.deepEqual(cell.flips, { right_to_wrong: rightToWrong, wrong_to_right: wrongToRight });
      if (v.selection === "top") {
        const random = model.profile.variants.find((r: { selection: string; k: number }) => r.selection === "random" && r.k === v.k);
        const pr = right((await readJsonl<GenItem>(path.join(modelDir, random.items_file))).filter((i) => i.benchmark === "tiny_gen")) / 5;
        // exact_match's chance is 0: a variant answering none right is saturated, its specificity not defined
        if (pa === 0 || pr === 0) assert.equal(cell.specificity!.value, null);
        else assert.ok(Math.abs(cell.specificity!.value! - ((p0 - pa) / p0 - (p0 - pr) / p0)) < 1e-12);
        assert.equal(cell.test, "mcnemar");
      }
    }

    // The reports show the generation benchmark under exact_match, the multiple-choice one under acc.
    const md = await bprof(["report", runDir, "--format", "md", "--out", "-"]);
    assert.equal(md.exitCode, 0, md.stderr);
    assert.match(md.stdout, /^\| ability \| tiny\\_gen \(exact\\_match\) \| tiny\\_yes \(acc\) \|$/m);
    assert.match(md.stdout, /^\| tiny\\_gen \| 5 \| – \| – \| \d\.\d{3} \| first-word \| 0\.000 \|$/m);
    const csv = await bprof(["report", runDir, "--format", "csv", "--metric", "exact_match", "--out", "-"]);
    assert.equal(csv.exitCode, 0, csv.stderr);
    const rows = csv.stdout.trimEnd().split("\r\n").slice(1);
    assert.equal(rows.length, model.profile.variants.length);
    assert.ok(
      rows.every((r) => r.includes(",tiny_gen,exact_match,5,")),
      rows.join("\n"),
    );
    const html = await bprof(["report", runDir]);
    assert.equal(html.exitCode, 0, html.stderr);
    assert.ok((await fs.readFile(path.join(runDir, "report.html"), "utf8")).includes("<th>tiny_gen (exact_match)</th>"));
    const refused = await bprof(["report", runDir, "--format", "latex", "--metric", "exact_match", "--out", "-"]);
    assert.equal(refused.exitCode, 2);
    assert.match(refused.stderr, /always shows generate_until benchmarks under exact_match/);
  },
);

test(
  "a filter class of the task's own (lm-eval's Filter API) runs in Python on the baseline's and every variant's responses, as the same filter in YAML does",
  { timeout: 300_000 },
  async () => {
    // The first-word regex again, as a Python class beside the task: its answers must be the YAML pipeline's.
    await fs.writeFile(
      path.join(root, "tasks", "word_filters.py"),
      [
        "import re",
        "from lm_eval.api.filter import Filter",
        "",
        "class FirstWord(Filter):",
        "    def __init__(self, pattern):",
        "        self.pattern = re.compile(pattern)",
        "",
        "    def apply(self, resps, docs):",
        "        return [[(self.pattern.findall(r) or ['[invalid]'])[0] for r in rs] for rs in resps]",
        "",
      ].join("\n"),
    );
    const yaml = taskYaml("tiny_gen_py", ["\n"]).replace(
      "metric_list:",
      `  - name: python-first-word\n    filter:\n      - function: !function word_filters.FirstWord\n        pattern: ${JSON.stringify(FILTER)}\n      - function: take_first\nmetric_list:`,
    );
    await fs.writeFile(path.join(root, "tasks", "tiny_gen_py.yaml"), yaml);
    await fs.writeFile(path.join(root, "tasks", "tiny_gen_py.jsonl"), docsJsonl(QUESTIONS.map(() => WRONG_TARGET)));
    await fs.writeFile(configPath, config(["tiny_gen_py"], true));

    const result = await bprof(["run", configPath]);
    assert.equal(result.exitCode, 0, `bprof run failed:\n${result.stderr}\n${result.stdout}`);
    const modelDir = path.join(await newestRun(), "models", "tiny-llama");
    const results = JSON.parse(await fs.readFile(path.join(path.dirname(path.dirname(modelDir)), "results.json"), "utf8"));
    const files = ["items.jsonl", ...results.models[0].profile.variants.map((v: { items_file: string }) => v.items_file)];
    let compared = 0;
    for (const file of files) {
      for (const item of await readJsonl<GenItem>(path.join(modelDir, file))) {
        assert.deepEqual(
          item.filters.map((f) => f.name),
          ["first-word", "python-first-word"],
        );
        assert.equal(item.filters[1]!.answer, item.filters[0]!.answer, `${file} document ${item.index}: ${JSON.stringify(item.response)}`);
        compared++;
      }
    }
    assert.equal(compared, 5 * files.length);
  },
);
