// The lint's no-cycle rule does not count type-only imports (they are erased at run time). This
// test does: in src/core, src/cli and src/extension, a module must not reach itself through others
// even by its types, because a type-level cycle ties the modules together as much for a reader.
// (The extension's services take the few things each needs, not the context that holds them.)
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import * as path from "node:path";
import { test } from "node:test";
import ts from "typescript";

const ROOT = path.join(import.meta.dirname, "..", "..", "..");
const LAYERS = ["src/core", "src/cli", "src/extension"];

async function sourcesUnder(dir: string): Promise<string[]> {
  const entries = await fs.readdir(path.join(ROOT, dir), { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile() && e.name.endsWith(".ts")).map((e) => path.join(e.parentPath, e.name));
}

/** Each module's relative imports, type-only ones included, as absolute file names. */
async function importGraph(files: readonly string[]): Promise<Map<string, string[]>> {
  const known = new Set(files);
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const text = await fs.readFile(file, "utf8");
    const imported = ts
      .preProcessFile(text, true, false)
      .importedFiles.map((f) => f.fileName)
      .filter((name) => name.startsWith("."))
      .map((name) => path.resolve(path.dirname(file), name) + ".ts")
      .filter((target) => known.has(target));
    graph.set(file, imported);
  }
  return graph;
}

/** The strongly connected components of more than one module (Tarjan). */
function cycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(path.relative(ROOT, w));
    } while (w !== v);
    if (component.length > 1) found.push(component.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

test("src/core, src/cli and src/extension have no import cycle, type-only imports included", async () => {
  const files = (await Promise.all(LAYERS.map(sourcesUnder))).flat();
  assert.ok(files.length > 100, `read ${files.length} modules`);
  assert.deepEqual(cycles(await importGraph(files)), []);
});

test("the cycle finder finds a cycle made of type-only imports", () => {
  const graph = new Map([
    ["/a.ts", ["/b.ts"]],
    ["/b.ts", ["/c.ts"]],
    ["/c.ts", ["/a.ts"]],
    ["/d.ts", ["/a.ts"]],
  ]);
  assert.equal(cycles(graph).length, 1);
  assert.equal(cycles(graph)[0]!.length, 3);
});
