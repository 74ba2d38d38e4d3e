// src/core's layers (docs/architecture.md, "Layers"): a module imports its own layer and those
// below it, never one above, type-only imports included. The CLI and the extension sit on top of
// all of them, and no module of the core imports either.
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import * as path from "node:path";
import { test } from "node:test";
import ts from "typescript";

const ROOT = path.join(import.meta.dirname, "..", "..", "..");
const CORE = path.join(ROOT, "src", "core");

/** Bottom to top: each layer's folders under src/core. The order of docs/architecture.md's table. */
const CORE_LAYERS: readonly { name: string; folders: readonly string[] }[] = [
  { name: "base", folders: ["base"] },
  { name: "formats", folders: ["lmeval", "model", "diagnostic", "prompts"] },
  { name: "statistics", folders: ["analysis"] },
  { name: "config", folders: ["config"] },
  { name: "planning", folders: ["plan"] },
  { name: "runner", folders: ["runner"] },
  { name: "launching", folders: ["launch"] },
  { name: "results", folders: ["results"] },
  { name: "reports", folders: ["report"] },
  { name: "orchestration", folders: ["run"] },
  { name: "editor services", folders: ["language", "workspace", "demo"] },
];

/** The layer index of a file under src/core (by its first folder); undefined outside every layer. */
function layerOf(file: string): number | undefined {
  const relative = path.relative(CORE, file);
  if (relative.startsWith("..")) return undefined;
  const folder = relative.split(path.sep)[0]!;
  const index = CORE_LAYERS.findIndex((l) => l.folders.includes(folder));
  return index < 0 ? undefined : index;
}

/** Relative imports of one module (type-only ones included), as absolute .ts file names. */
function importsOf(file: string, text: string): string[] {
  return ts
    .preProcessFile(text, true, false)
    .importedFiles.map((f) => f.fileName)
    .filter((name) => name.startsWith("."))
    .map((name) => path.resolve(path.dirname(file), name) + ".ts");
}

/** Each import that points up a layer, or out of the core into the CLI or the extension: "from -> to". */
function upwardImports(modules: ReadonlyMap<string, string>): string[] {
  const found: string[] = [];
  for (const [file, text] of modules) {
    const from = layerOf(file);
    if (from === undefined) continue;
    for (const target of importsOf(file, text)) {
      const to = layerOf(target);
      const outOfCore = path.relative(CORE, target).startsWith("..");
      if (outOfCore || (to !== undefined && to > from)) found.push(`${path.relative(ROOT, file)} -> ${path.relative(ROOT, target)}`);
    }
  }
  return found.sort();
}

async function coreModules(): Promise<Map<string, string>> {
  const entries = await fs.readdir(CORE, { recursive: true, withFileTypes: true });
  const files = entries.filter((e) => e.isFile() && e.name.endsWith(".ts")).map((e) => path.join(e.parentPath, e.name));
  return new Map(await Promise.all(files.map(async (f) => [f, await fs.readFile(f, "utf8")] as const)));
}

test("every module of src/core lies in a folder of a layer (no loose files, no folder left out)", async () => {
  const modules = await coreModules();
  assert.ok(modules.size > 100, `read ${modules.size} modules`);
  assert.deepEqual(
    [...modules.keys()].filter((f) => layerOf(f) === undefined).map((f) => path.relative(ROOT, f)),
    [],
  );
});

test("no module of src/core imports a layer above its own, or the CLI or the extension", async () => {
  assert.deepEqual(upwardImports(await coreModules()), []);
});

test("the layer check finds an import up a layer and one out of the core, and allows one down or across", () => {
  const at = (relative: string) => path.join(CORE, relative);
  const modules = new Map([
    [at("base/fsutil.ts"), 'import { x } from "../report/model";\n'],
    [at("config/load.ts"), 'import type { Y } from "../../extension/ctx";\nimport { z } from "../base/fsutil";\n'],
    [at("lmeval/task.ts"), 'import { w } from "../prompts/tokenize";\n'],
  ]);
  assert.deepEqual(upwardImports(modules), [
    "src/core/base/fsutil.ts -> src/core/report/model.ts",
    "src/core/config/load.ts -> src/extension/ctx.ts",
  ]);
});
