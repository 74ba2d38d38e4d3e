// The committed demo workspace is what the generators make from its seeds, its splits are
// disjoint, and its config loads without a single diagnostic (the contamination test included).
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { test } from "node:test";
import { loadProfile } from "../../src/core/config/load";
import { itemKey } from "../../src/core/datasets/generators/index";
import { BENCHMARK_ITEMS, DEMO_CONFIG, demoSplits, DIAGNOSTIC_ITEMS, heldOutKeys, MIXED_ITEMS_PER_ABILITY, ownBenchmark, writeDemoWorkspace } from "../../src/core/demo/demoWorkspace";
import { diagonalCheck } from "../../src/core/demo/validity";
import type { ModelResults, VariantResult } from "../../src/core/results/store";
import { formatDiagnostic } from "../../src/core/diagnostics";

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
      assert.equal(await fs.readFile(path.join(committed, f), "utf8"), await fs.readFile(path.join(tmp, f), "utf8"), `${f} differs: run npm run demo:workspace`);
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
  const { profile, diagnostics } = await loadProfile(path.join(committed, DEMO_CONFIG), { forRun: true });
  assert.deepEqual(diagnostics.map(formatDiagnostic), []);
  assert.ok(profile);
  assert.equal(profile.abilities.length, 10);
  for (const a of profile.abilities) assert.ok(ownBenchmark(a.name) && profile.benchmarks.some((b) => b.name === ownBenchmark(a.name)), a.name);
});

test("the diagonal check counts rows whose own benchmark has the largest AIS; undefined cells never win", () => {
  const cell = (ais: number | null) => ({ baseline: 0.8, ablated: 0.5, chance: 0.25, ais, ci: null, significant: false, undefined_resamples: 0 });
  const variant = (ability: string, k: number, cells: Record<string, number | null>): VariantResult => ({
    ability, ability_id: ability, selection: "top", k, n: 1, scores_file: "", items_file: "",
    benchmarks: Object.entries(cells).map(([name, ais]) => ({ name, acc: cell(ais), acc_norm: cell(ais) })),
  } as unknown as VariantResult);
  const model = {
    name: "m", path: "", dtype: "float32", benchmarks: [],
    profile: {
      variants: [
        variant("A", 0.01, { a: 0.9, b: 0.2, mix: 0.3 }),
        variant("B", 0.01, { a: 0.5, b: 0.4, mix: null }),
        variant("C", 0.01, { a: 0.1, c: null }),
        variant("A", 0.001, { a: 0.0, b: 0.5 }),
      ],
    },
  } as unknown as ModelResults;
  const own = (ability: string) => ({ A: "a", B: "b", C: "c" })[ability];
  const check = diagonalCheck(model, 0.01, own);
  assert.deepEqual(check.rows.map((r) => [r.ability, r.largest, r.diagonal, r.largestOther?.benchmark]), [
    ["A", true, 0.9, "mix"], ["B", false, 0.4, "a"], ["C", false, null, "a"],
  ]);
  assert.equal(check.count, 1);
});
