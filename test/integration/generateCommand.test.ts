// `bprof generate` as a user runs it: the same items as the generators' API, on stdout or in a
// file, and bad arguments refused with exit code 2.
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { test } from "node:test";
import { ALL_GENERATORS, GENERATORS, generateItems, toJsonl } from "../../src/core/diagnostic/generators/index";
import { bprof } from "../support/cli";

test("bprof generate writes one ability's items to stdout, all ten to a file", async () => {
  const one = await bprof(["generate", "--ability", "spatial", "--n", "5", "--seed", "3"]);
  assert.equal(one.exitCode, 0, one.stderr);
  assert.equal(one.stdout + "\n", toJsonl(generateItems(GENERATORS["Spatial Reasoning"], { n: 5, seed: 3 })));

  const byName = await bprof(["generate", "--ability", "Commonsense & Causal Reasoning", "--n", "2"]);
  assert.equal(byName.stdout + "\n", toJsonl(generateItems(GENERATORS["Commonsense & Causal Reasoning"], { n: 2, seed: 1 })));

  const dir = await fs.mkdtemp(path.join(os.tmpdir(), "bprof-generate-"));
  try {
    const file = path.join(dir, "sub", "all.diag.jsonl");
    const all = await bprof(["generate", "--n", "4", "--out", file]);
    assert.equal(all.exitCode, 0, all.stderr);
    assert.match(all.stderr, /40 items \(analogical, .*temporal\) -> /);
    assert.equal(await fs.readFile(file, "utf8"), toJsonl(ALL_GENERATORS.flatMap((g) => generateItems(g, { n: 4, seed: 1 }))));
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
});

test("bprof generate refuses unknown abilities and bad counts", async () => {
  const typo = await bprof(["generate", "--ability", "spatal"]);
  assert.equal(typo.exitCode, 2);
  assert.match(typo.stderr, /no generator for `spatal`: did you mean `spatial`\?/);
  for (const [flag, value] of [
    ["--n", "0"],
    ["--n", "x"],
    ["--seed", "1.5"],
  ] as const) {
    const bad = await bprof(["generate", flag, value]);
    assert.equal(bad.exitCode, 2, `${flag} ${value}`);
    assert.match(bad.stderr, new RegExp(`${flag} must be`));
  }
});
