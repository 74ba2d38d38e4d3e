// The committed demo workspace is what the generators make from its seeds, its splits are
// disjoint, and its config loads without a single diagnostic (the contamination test included).
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { test } from "node:test";
import { loadProfile } from "../../../src/core/config/load";
import { ALL_GENERATORS, itemKey } from "../../../src/core/diagnostic/generators/index";
import { DEMO_CONFIG } from "../../../src/core/demo/demoWorkspace";
import {
  BENCHMARK_ITEMS,
  DEMO_PAIR,
  demoSplits,
  DIAGNOSTIC_ITEMS,
  heldOutKeys,
  MIXED_BENCHMARK,
  MIXED_ITEMS_PER_ABILITY,
  SECOND_SET_ABILITY,
  trainingItems,
  writeDemoWorkspace,
} from "../../../scripts/lib/demoAuthoring";
import { separateSetName } from "../../../src/core/config/abilities";
import { formatProblem } from "../../../src/core/base/problems";

const committed = path.resolve(import.meta.dirname, "..", "..", "..", "media", "demo");

async function filesUnder(dir: string, skip: (relative: string) => boolean): Promise<string[]> {
  const entries = await fs.readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => path.relative(dir, path.join(e.parentPath, e.name)))
    .filter((f) => !skip(f))
    .sort();
}

test("media/demo is what `npm run demo:workspace` writes, byte for byte", async () => {
  const tmp = await fs.mkdtemp(path.join(os.tmpdir(), "bprof-demo-ws-"));
  try {
    const written = (await writeDemoWorkspace(tmp)).sort();
    const notGenerated = (f: string) => f.startsWith("model") || f === "README.md" || f.startsWith(".bprof");
    assert.deepEqual(await filesUnder(committed, notGenerated), written);
    for (const f of written) {
      assert.equal(
        await fs.readFile(path.join(committed, f), "utf8"),
        await fs.readFile(path.join(tmp, f), "utf8"),
        `${f} differs: run npm run demo:workspace`,
      );
    }
  } finally {
    await fs.rm(tmp, { recursive: true, force: true });
  }
});

test("the splits are disjoint and of the planned sizes; the second set holds none of them nor a training item", async () => {
  const { diagnostic, benchmarks, secondSet } = demoSplits();
  const keys = new Map<string, string>();
  const add = (key: string, where: string) => {
    assert.ok(!keys.has(key), `${where} repeats an item of ${keys.get(key)}`);
    keys.set(key, where);
  };
  for (const [slug, items] of diagnostic) {
    assert.equal(items.length, DIAGNOSTIC_ITEMS);
    for (const it of items) add(itemKey(it), `diagnostic ${slug}`);
  }
  for (const b of benchmarks) {
    assert.equal(b.items.length, b.abilities.length === 1 ? BENCHMARK_ITEMS : 10 * MIXED_ITEMS_PER_ABILITY);
    for (const it of b.items) add(itemKey(it), b.name);
  }
  const held = await heldOutKeys(committed);
  assert.equal(held.size, keys.size, "the committed files hold exactly these items");
  // the second set: drawn after the model was trained, so none of its items is in the training mixture either
  const generator = ALL_GENERATORS.find((g) => g.ability === SECOND_SET_ABILITY)!;
  const trained = new Set(trainingItems(generator, held).map(itemKey));
  assert.equal(secondSet.length, DIAGNOSTIC_ITEMS);
  for (const it of secondSet) {
    assert.equal(it.ability, SECOND_SET_ABILITY);
    add(itemKey(it), "the second set");
    assert.ok(!trained.has(itemKey(it)), `the second set's ${it.id} is a training item`);
  }
});

test("the demo config loads without a problem; its min_effect is what 100 documents can detect, until a baseline says otherwise", async () => {
  const file = path.join(committed, DEMO_CONFIG);
  const { profile, problems } = await loadProfile(file);
  assert.deepEqual(problems.map(formatProblem), []);
  assert.ok(profile);
  // 100 documents a benchmark (`limit: 100`) detect an AIS of about 0.52 at 80% power at the
  // assumed baseline (halfway between chance 0.25 and 1), not the default `stats.min_effect` 0.1:
  // the demo asks for 0.6, and without that each entry would warn
  assert.equal(profile.stats.minEffect, 0.6);
  const text = await fs.readFile(file, "utf8");
  const defaults = await loadProfile(file, { text: text.replace(/^stats:\n(?: .*\n)+/m, "") });
  assert.deepEqual(
    defaults.problems.map((p) => [p.code, p.field]),
    profile.benchmarks.map((_, i) => ["config.low-power", `benchmarks[${i}]`]),
  );
  // once a run has scored them, a benchmark whose baseline is near chance cannot detect even 0.6
  const baselines = profile.benchmarks.map((b, i) => ({
    benchmark: b.name,
    model: profile.models[0]!.name,
    metric: "acc" as const,
    baseline: i === 2 ? 0.43 : 0.8,
    chance: 0.25,
  }));
  const scored = await loadProfile(file, { baselines: { runId: "r", baselines } });
  assert.deepEqual(
    scored.problems.map((p) => [p.code, p.field]),
    [["config.low-power", "benchmarks[2]"]],
  );
  // the ten, and a second set of one (`sets: separate`); pairs and expects as the config says
  assert.deepEqual(
    profile.abilities.filter((a) => a.of !== undefined).map((a) => [a.name, a.of]),
    [[separateSetName(SECOND_SET_ABILITY, 1), SECOND_SET_ABILITY]],
  );
  assert.equal(profile.abilities.length, 11);
  assert.deepEqual(profile.ablation!.pairs, [[...DEMO_PAIR]]);
  assert.ok(
    profile.benchmarks.every((b) => b.expects && b.expects.length > 0),
    "every benchmark has expects",
  );
  // Each ability labels exactly one benchmark, its own; the mixed benchmark has no label.
  for (const a of profile.abilities.filter((x) => x.of === undefined))
    assert.deepEqual(
      profile.benchmarks.filter((b) => b.ability === a.name).map((b) => b.name),
      [`demo_${ALL_GENERATORS.find((g) => g.ability === a.name)!.slug}`],
      a.name,
    );
  assert.equal(profile.benchmarks.find((b) => b.name === MIXED_BENCHMARK)!.ability, undefined);
});

test("Open Demo puts the demo where the user sees it: a folder in the one picked, shown in the window or a new one", async () => {
  const { demoFolderIn, demoPlacement, DEMO_FOLDER_NAME } = await import("../../../src/core/demo/demoWorkspace");
  const tmp = await fs.mkdtemp(path.join(os.tmpdir(), "bprof-demo-place-"));
  try {
    assert.equal(demoFolderIn(tmp), path.join(tmp, DEMO_FOLDER_NAME), "a new folder in the one picked");
    await fs.writeFile(path.join(tmp, DEMO_CONFIG), "");
    assert.equal(demoFolderIn(tmp), tmp, "a folder that holds the demo already is used again");
  } finally {
    await fs.rm(tmp, { recursive: true, force: true });
  }
  const demo = "/home/u/work/benchmark-profiler-demo";
  assert.equal(demoPlacement(demo, ["/home/u/work"], true), "inside", "inside an open folder: shown there");
  assert.equal(demoPlacement(demo, ["/home/u/other"], true), "add", "a trusted window adds it to its folders");
  assert.equal(demoPlacement(demo, [], false), "open", "a window with no folder opens it");
  assert.equal(demoPlacement(demo, ["/home/u/empty"], false), "newWindow", "an untrusted window opens it in a new window");
  assert.equal(demoPlacement(demo, ["/home/u/work"], false), "newWindow", "even inside its folder: the demo needs trust to run");
  assert.equal(demoPlacement("/home/u/workshop", ["/home/u/work"], true), "add", "a sibling with a longer name is not inside");
});
