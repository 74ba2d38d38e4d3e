// A run folder that came with a repository, damaged or written to do harm, through the CLI as a
// user runs it: a field of the wrong type in results.json, an items file or flips.jsonl, a
// results.json that is a link to itself, a variant that scored fewer documents than its baseline.
// `bprof report` and `bprof compare` end each with exit 2 and one line naming the file and the
// line or field, never an internal error or a stack trace (the earlier round's cases of a
// repository: untrustedRepository.test.ts).
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import * as path from "node:path";
import { after, test } from "node:test";
import { bprof } from "../support/cli";
import { fixtureResults, MODEL_FOLDER, withStability, writeFixtureRun } from "../support/reportFixture";

const roots: string[] = [];
after(() => Promise.all(roots.map((r) => fs.rm(r, { recursive: true, force: true }))));

type FieldAt = readonly (string | number)[];

/** A fixture run folder (with stability and fluency), each field at a path of its results.json set to its value. */
async function runFolder(changes: readonly (readonly [FieldAt, unknown])[] = []): Promise<string> {
  const results = withStability(fixtureResults());
  results.models[0]!.profile!.fluency = {
    text: "built-in",
    tokens: 100,
    loglik_per_token: -2.5,
    perplexity: 12.18,
    max_perplexity_ratio: 2,
  };
  for (const [at, value] of changes) {
    const parent = at.slice(0, -1).reduce((node, key) => (node as Record<string | number, unknown>)[key], results as unknown) as Record<
      string | number,
      unknown
    >;
    parent[at.at(-1)!] = value;
  }
  const dir = await writeFixtureRun(results);
  roots.push(path.dirname(path.dirname(dir)));
  return dir;
}

const modelDir = (dir: string) => path.join(dir, "models", MODEL_FOLDER);
const NEGATIVE_ITEMS = "variants/commonsense-and-causal-reasoning.top.k1.items.jsonl";

/** One flipped document of the fixture's negative cell (Causal's top set at k = 0.01 on logiqa), as flips.jsonl records it. */
const flipLine = (over: Record<string, unknown>) =>
  JSON.stringify({
    variant: NEGATIVE_ITEMS,
    benchmark: "logiqa",
    metric: "acc",
    index: 13,
    direction: "wrong_to_right",
    target: 1,
    baselinePrediction: 0,
    ablatedPrediction: 1,
    baselineLogprobs: [-1, -3],
    ablatedLogprobs: [-3, -1],
    choiceBytes: [3, 2],
    ...over,
  }) + "\n";

/** Exit 2 and one line on stderr that names `where`: no internal error, no stack trace. */
function assertBadInput(r: { exitCode?: number; stderr: string }, where: RegExp, what: string): void {
  assert.equal(r.exitCode, 2, `${what}: ${r.stderr}`);
  const lines = r.stderr.trim().split("\n");
  assert.equal(lines.length, 1, `${what}: one line: ${r.stderr}`);
  assert.doesNotMatch(r.stderr, /internal error|\n\s+at |TypeError|is not a function/, what);
  assert.match(lines[0]!, where, what);
}

test("`bprof report`: a field of the wrong type in results.json is exit 2 at its field, in every format", async () => {
  const profile = ["models", 0, "profile"] as const;
  const cases: [string, FieldAt, unknown, RegExp][] = [
    [
      "a stability half that is markup",
      [...profile, "stability", 0, "halves"],
      ['<meta http-equiv="refresh" content="0;url=https://evil.example">', 6],
      /results\.json: models\[0\]\.profile\.stability\[0\]\.halves\[0\]: expected a number$/,
    ],
    [
      "an expected ability's weight that is a form",
      ["models", 0, "benchmarks", 0, "expects"],
      [{ ability: "Spatial Reasoning", weight: "<form action=https://evil.example>" }],
      /results\.json: models\[0\]\.benchmarks\[0\]\.expects\[0\]\.weight: expected a number$/,
    ],
    [
      "a Jaccard entry of the overlap as a string",
      [...profile, "overlap", 1, "jaccard", 0, 1],
      "0.5",
      /results\.json: models\[0\]\.profile\.overlap\[1\]\.jaccard\[0\]\[1\]: expected a number$/,
    ],
    [
      "the perplexity as a string",
      [...profile, "fluency", "perplexity"],
      "12.18",
      /results\.json: models\[0\]\.profile\.fluency\.perplexity: expected a number$/,
    ],
  ];
  for (const [what, at, value, where] of cases) {
    const dir = await runFolder([[at, value]]);
    for (const format of ["html", "md", "latex", "csv", "json"]) {
      assertBadInput(await bprof(["report", dir, "--format", format, "--out", "-"]), where, `${what} (${format})`);
    }
  }
});

test("`bprof report`: a line of the wrong type in flips.jsonl or an items file is exit 2 at its file and line", async () => {
  const cases: [string, string, string, RegExp][] = [
    [
      "log-probabilities as a string",
      "flips.jsonl",
      flipLine({ baselineLogprobs: "-1,-3" }),
      /flips\.jsonl:1: baselineLogprobs: expected an array$/,
    ],
    [
      "a document index that is markup",
      "flips.jsonl",
      flipLine({ index: "<meta http-equiv=refresh content=0>" }),
      /flips\.jsonl:1: index: expected a number$/,
    ],
    [
      "a prediction that is TeX",
      "flips.jsonl",
      flipLine({ baselinePrediction: "\\input{/etc/passwd}" }),
      /flips\.jsonl:1: baselinePrediction: expected a number$/,
    ],
    ["a target that is a form", "flips.jsonl", flipLine({ target: "<form>" }), /flips\.jsonl:1: target: expected a number$/],
  ];
  for (const [what, file, text, where] of cases) {
    const dir = await runFolder();
    await fs.writeFile(path.join(modelDir(dir), file), text);
    for (const format of ["html", "md", "json"])
      assertBadInput(await bprof(["report", dir, "--format", format, "--out", "-"]), where, `${what} (${format})`);
  }
  // Without flips.jsonl the documents come from the items files, each line checked.
  const dir = await runFolder();
  const items = path.join(modelDir(dir), NEGATIVE_ITEMS);
  const lines = (await fs.readFile(items, "utf8")).trim().split("\n");
  const damaged = JSON.parse(lines[5]!) as { choices: { logprob: unknown }[] };
  damaged.choices[0]!.logprob = "-1";
  lines[5] = JSON.stringify(damaged);
  await fs.writeFile(items, lines.join("\n") + "\n");
  assertBadInput(
    await bprof(["report", dir, "--format", "md", "--out", "-"]),
    /commonsense-and-causal-reasoning\.top\.k1\.items\.jsonl:6: choices\[0\]\.logprob: expected a number$/,
    "an item's log-probability as a string",
  );
});

test("a results.json that is a link to itself is exit 2 naming it, for `bprof report` and `bprof compare`", async () => {
  const dir = await runFolder();
  const file = path.join(dir, "results.json");
  await fs.rm(file);
  await fs.symlink("results.json", file);
  const loop = /results\.json \(it is a link that leads to itself, or through too many links: ELOOP\)$/;
  assertBadInput(await bprof(["report", dir, "--format", "md", "--out", "-"]), loop, "report of the folder");
  assertBadInput(await bprof(["compare", dir, dir]), loop, "compare");
  // named as a file, it is no run folder bprof can find: said as for a missing one
  const named = await bprof(["report", file]);
  assert.equal(named.exitCode, 2, named.stderr);
  assert.doesNotMatch(named.stderr, /internal error|\n\s+at /);
});

test("`bprof compare` whose variant scored fewer documents than its baseline is exit 2 naming both files and counts", async () => {
  const a = await runFolder();
  const b = await runFolder();
  const items = path.join(modelDir(b), NEGATIVE_ITEMS);
  const lines = (await fs.readFile(items, "utf8")).trim().split("\n");
  await fs.writeFile(items, lines.slice(0, -1).join("\n") + "\n");
  const r = await bprof(["compare", a, b]);
  assertBadInput(
    r,
    new RegExp(
      `^bprof: ${items.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} \\(models\\[0\\]\\.profile\\.variants\\[1\\]\\.items_file of .*results\\.json\\) ` +
        `scores 3 documents of benchmark \`logiqa\`, .*items\\.jsonl 4: variant has 3 scored items, the baseline 4`,
    ),
    "fewer items",
  );
});
