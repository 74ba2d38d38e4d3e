// The committed demo workspace is what the generators make from its seeds, its splits are
// disjoint, and its config loads without a single diagnostic (the contamination test included).
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { test } from "node:test";
import { loadProfile } from "../../src/core/config/load";
import { ALL_GENERATORS, itemKey } from "../../src/core/datasets/generators/index";
import { DEMO_CONFIG } from "../../src/core/demo/demoWorkspace";
import {
  BENCHMARK_ITEMS,
  demoSplits,
  DIAGNOSTIC_ITEMS,
  heldOutKeys,
  MIXED_BENCHMARK,
  MIXED_ITEMS_PER_ABILITY,
  writeDemoWorkspace,
} from "../../scripts/lib/demoAuthoring";
import { formatProblem } from "../../src/core/problems";

const committed = path.resolve(import.meta.dirname, "..", "..", "media", "demo");

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

test("the splits are disjoint and of the planned sizes", async () => {
  const { diagnostic, benchmarks } = demoSplits();
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
  assert.equal((await heldOutKeys(committed)).size, keys.size, "the committed files hold exactly these items");
});

test("the demo config loads without a diagnostic", async () => {
  const { profile, problems } = await loadProfile(path.join(committed, DEMO_CONFIG));
  assert.deepEqual(problems.map(formatProblem), []);
  assert.ok(profile);
  assert.equal(profile.abilities.length, 10);
  // Each ability labels exactly one benchmark, its own; the mixed benchmark has no label.
  for (const a of profile.abilities)
    assert.deepEqual(
      profile.benchmarks.filter((b) => b.ability === a.name).map((b) => b.name),
      [`demo_${ALL_GENERATORS.find((g) => g.ability === a.name)!.slug}`],
      a.name,
    );
  assert.equal(profile.benchmarks.find((b) => b.name === MIXED_BENCHMARK)!.ability, undefined);
});
