// The Python files of a task's folder that its `!function` helpers import, found by reading their
// import statements: consent to a helper covers the sibling modules it runs, each hashed and named
// (taskPython.ts), and the bridge runs no module of the folder outside that set (bridgeSource.ts).
// Reading is a static over-approximation: an import in a string or a branch never taken adds a
// file to the set, which only makes the question longer; an import the reading cannot see (a name
// computed at run time) is refused by the bridge when it happens, never run unasked.
import { promises as fs } from "node:fs";
import * as path from "node:path";
import { isDirectory, isFile } from "../base/fsutil";

/** A Python name (PEP 3131 identifiers, as far as a regular expression can say). */
const PYTHON_NAME = /^[\p{L}_][\p{L}\p{N}_]*$/u;

/**
 * Whether `module` is a module path of Python names (`utils`, `pkg.utils`): no file path, no
 * leading dot, no `..`, so it names a file under the task's folder and nowhere else.
 */
export function isModulePath(module: string): boolean {
  return module.split(".").every((part) => PYTHON_NAME.test(part));
}

/** Whether `name` is a Python name (a function's in `!function module.name`). */
export function isPythonName(name: string): boolean {
  return PYTHON_NAME.test(name);
}

/** How many files one helper's imports may add: a task folder is a few modules, not a library. */
const MAX_FILES = 256;

/**
 * The Python files of `dir` (the folder of the task YAML that names the helpers, the first place
 * Python looks) that `entries` import, directly or through each other, with the entries first.
 */
export async function importedTaskFiles(dir: string, entries: readonly string[]): Promise<string[]> {
  const found = new Map<string, string>(entries.map((file) => [file, ""]));
  const queue = [...found.keys()];
  while (queue.length > 0 && found.size < MAX_FILES) {
    const file = queue.shift()!;
    const source = await fs.readFile(file, "utf8").catch(() => undefined);
    if (source === undefined) continue;
    for (const module of importedModules(source, found.get(file)!)) {
      for (const { file: inner, packageName } of await moduleFiles(dir, module)) {
        if (found.has(inner)) continue;
        found.set(inner, packageName);
        queue.push(inner);
      }
    }
  }
  return [...found.keys()];
}

/**
 * The modules a Python source's imports name, relative ones resolved against `packageName` (the
 * package of the file; "" for a top-level module): `import a.b as c, d` names a.b and d, `from
 * a import b` names a and a.b (b may be a submodule), `importlib.import_module("x")` names x.
 */
export function importedModules(source: string, packageName: string): string[] {
  const modules = new Set<string>();
  for (const statement of logicalLines(source)) {
    const plain = /^\s*import\s+(.+)$/.exec(statement);
    if (plain) for (const name of names(plain[1]!)) modules.add(name);
    const from = /^\s*from\s+(\.*)([\p{L}\p{N}_.]*)\s+import\s+(.+)$/u.exec(statement);
    if (from) {
      const base = resolveRelative(from[1]!.length, from[2]!, packageName);
      if (base === undefined) continue;
      if (base !== "") modules.add(base);
      for (const name of names(from[3]!)) if (name !== "*") modules.add(base === "" ? name : `${base}.${name}`);
    }
  }
  for (const m of source.matchAll(/\b(?:import_module|__import__)\(\s*["']([\p{L}\p{N}_.]+)["']/gu)) modules.add(m[1]!);
  return [...modules].filter(isModulePath);
}

/** Source lines as statements: comments dropped, backslash continuations and parentheses joined. */
function logicalLines(source: string): string[] {
  const statements: string[] = [];
  let open = 0;
  let current = "";
  for (const raw of source.split(/\r?\n/)) {
    const line = raw.replace(/#.*$/, "");
    current += (current === "" ? "" : " ") + line.replace(/\\$/, "");
    for (const c of line) open += c === "(" ? 1 : c === ")" ? -1 : 0;
    if (line.endsWith("\\") || open > 0) continue;
    open = 0;
    statements.push(...current.split(";"));
    current = "";
  }
  if (current !== "") statements.push(current);
  return statements;
}

/** `a.b as c, (d, e)` as its names: a.b, d, e. */
function names(list: string): string[] {
  return list
    .replace(/[()]/g, " ")
    .split(",")
    .map((part) =>
      part
        .trim()
        .split(/\s+as\s+/)[0]!
        .trim(),
    )
    .filter((name) => name !== "");
}

/** A `from` import's module: `level` leading dots go up from `packageName`; undefined above the top. */
function resolveRelative(level: number, module: string, packageName: string): string | undefined {
  if (level === 0) return module;
  const parts = packageName === "" ? [] : packageName.split(".");
  if (level - 1 > parts.length || parts.length === 0) return undefined;
  const base = parts.slice(0, parts.length - (level - 1)).join(".");
  return module === "" ? base : base === "" ? module : `${base}.${module}`;
}

/**
 * The files importing `module` from `dir` executes: each package's __init__.py on the way and the
 * module itself, where they exist; each with the package its own relative imports start from.
 */
async function moduleFiles(dir: string, module: string): Promise<{ file: string; packageName: string }[]> {
  const parts = module.split(".");
  const files: { file: string; packageName: string }[] = [];
  for (let i = 1; i <= parts.length; i++) {
    const name = parts.slice(0, i).join(".");
    const folder = path.join(dir, ...parts.slice(0, i));
    const init = path.join(folder, "__init__.py");
    const single = `${folder}.py`;
    if (await isFile(init)) files.push({ file: init, packageName: name });
    else if (await isFile(single)) {
      files.push({ file: single, packageName: parts.slice(0, i - 1).join(".") });
      break;
    } else if (!(await isDirectory(folder))) break;
  }
  return files;
}
