// lm-eval's names for tasks, groups and tags, as its TaskManager finds them under an include
// path: every *.yaml file that says `task: <name>` is that task; one that says `group: <name>` with
// a `task:` list is a group of those names (tasks, other groups, tags); a task's `tag:` (one name
// or a list) puts it under that tag. A config's `task_paths` are the folders searched. A group
// whose file has `aggregate_metric_list` is scored as a whole too (lmeval/group.ts).
import { promises as fs } from "node:fs";
import * as path from "node:path";
import { parseDocument } from "yaml";
import { functionTag } from "../base/yamlSource";

export interface TaskIndex {
  tasks: Map<string, string>;
  /** Group name -> its `task:` list (names of tasks, groups or tags). */
  groups: Map<string, string[]>;
  tags: Map<string, string[]>;
  /** Group name -> its file, for the groups whose file has `aggregate_metric_list`. */
  aggregating: Map<string, string>;
}

/** How far a search goes: lm-eval's own tasks folder holds about 10,000 YAML files. */
const MAX_FILES = 50_000;
const MAX_DEPTH = 8;

/**
 * What a name stands for: the task files in order, the members of its groups not found, and the
 * groups under it (itself included) that lm-eval scores as a whole, outer before inner; or why it
 * stands for none.
 */
export type Resolved = { files: string[]; notFound: string[]; groups: GroupFiles[] } | { missing: string };

/** A group with `aggregate_metric_list`: its file and the task files under it, nested groups flattened. */
export interface GroupFiles {
  name: string;
  file: string;
  tasks: string[];
}

/** The index of every YAML file under `folders`; kept per folder until a file in it changes. */
export async function taskIndex(folders: readonly string[]): Promise<TaskIndex> {
  const index: TaskIndex = { tasks: new Map(), groups: new Map(), tags: new Map(), aggregating: new Map() };
  for (const folder of folders) {
    const part = await folderIndex(folder);
    for (const [k, v] of part.tasks) if (!index.tasks.has(k)) index.tasks.set(k, v);
    for (const [k, v] of part.groups) {
      if (index.groups.has(k)) continue;
      index.groups.set(k, v);
      const file = part.aggregating.get(k);
      if (file) index.aggregating.set(k, file);
    }
    for (const [k, v] of part.tags) index.tags.set(k, [...(index.tags.get(k) ?? []), ...v]);
  }
  return index;
}

/** The task files a task, group or tag name stands for, groups and tags expanded in order, each file once. */
export function resolveTaskName(index: TaskIndex, name: string): Resolved {
  const files: string[] = [];
  const missing: string[] = [];
  const groups: GroupFiles[] = [];
  // The task files under `n`, each once.
  const visit = (n: string, seen: Set<string>): string[] => {
    if (seen.has(n)) return [];
    const inner = new Set([...seen, n]);
    const task = index.tasks.get(n);
    if (task) {
      if (!files.includes(task)) files.push(task);
      return [task];
    }
    const groupMembers = index.groups.get(n);
    const members = groupMembers ?? index.tags.get(n);
    if (!members) {
      missing.push(n);
      return [];
    }
    const at = groups.length;
    const tasks = [...new Set(members.flatMap((m) => visit(m, inner)))];
    const file = groupMembers ? index.aggregating.get(n) : undefined;
    if (file && tasks.length > 0 && !groups.some((g) => g.name === n)) groups.splice(at, 0, { name: n, file, tasks });
    return tasks;
  };
  visit(name, new Set());
  if (files.length === 0)
    return {
      missing: missing.includes(name)
        ? `no task, group or tag is named \`${name}\``
        : `\`${name}\` names no task that exists (${missing.map((m) => `\`${m}\``).join(", ")} missing)`,
    };
  return { files, notFound: missing, groups };
}

const folderIndexes = new Map<string, { stamp: string; index: TaskIndex }>();

async function folderIndex(folder: string): Promise<TaskIndex> {
  const files = await yamlFiles(folder);
  const stamp = files.map((f) => `${f.file}:${f.mtime}`).join("\n");
  const known = folderIndexes.get(folder);
  if (known?.stamp === stamp) return known.index;
  const index: TaskIndex = { tasks: new Map(), groups: new Map(), tags: new Map(), aggregating: new Map() };
  for (const { file } of files) {
    const keys = await topLevelKeys(file);
    if (!keys) continue;
    if (typeof keys.group === "string" && Array.isArray(keys.task)) {
      index.groups.set(
        keys.group,
        keys.task.filter((t): t is string => typeof t === "string"),
      );
      if (keys.aggregate_metric_list !== undefined && keys.aggregate_metric_list !== null) index.aggregating.set(keys.group, file);
      else index.aggregating.delete(keys.group);
    } else if (typeof keys.task === "string") {
      if (!index.tasks.has(keys.task)) index.tasks.set(keys.task, file);
      const tags =
        typeof keys.tag === "string"
          ? [keys.tag]
          : Array.isArray(keys.tag)
            ? keys.tag.filter((t): t is string => typeof t === "string")
            : [];
      for (const tag of tags) index.tags.set(tag, [...(index.tags.get(tag) ?? []), keys.task]);
    }
  }
  folderIndexes.set(folder, { stamp, index });
  return index;
}

/** The *.yaml files under `folder`, sorted, with their modification times. */
async function yamlFiles(folder: string): Promise<{ file: string; mtime: number }[]> {
  const out: { file: string; mtime: number }[] = [];
  const walk = async (dir: string, depth: number) => {
    const entries = await fs.readdir(dir, { withFileTypes: true }).catch(() => []);
    for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
      if (out.length >= MAX_FILES) return;
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) {
        if (depth < MAX_DEPTH && !entry.name.startsWith(".")) await walk(full, depth + 1);
      } else if (entry.name.endsWith(".yaml")) {
        out.push({ file: full, mtime: (await fs.stat(full).catch(() => undefined))?.mtimeMs ?? 0 });
      }
    }
  };
  await walk(folder, 0);
  return out;
}

/** The `task`, `group`, `tag` and `aggregate_metric_list` keys of a YAML file; undefined when it is not a mapping that parses. */
async function topLevelKeys(
  file: string,
): Promise<{ task?: unknown; group?: unknown; tag?: unknown; aggregate_metric_list?: unknown } | undefined> {
  const text = await fs.readFile(file, "utf8").catch(() => undefined);
  if (text === undefined) return undefined;
  const document = parseDocument(text, { customTags: [functionTag], logLevel: "silent" });
  let value: unknown;
  try {
    // A file that does not parse, or expands too many aliases, names nothing: the task's own checks say why when it is used.
    value = document.errors.length === 0 ? document.toJS({ maxAliasCount: 100 }) : undefined;
  } catch {
    return undefined;
  }
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}
