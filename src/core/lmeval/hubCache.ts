// A task's Hugging Face dataset (`dataset_path: openai/gsm8k`, `dataset_name: main`) from the
// Hugging Face caches this machine already has, offline. First the hub cache: the snapshot its
// `main` ref names, the data files of the dataset card's `configs` for the config and split, else
// the layouts the hub's converted datasets use (`<config>/<split>-*.parquet`, `data/<split>-*`).
// Then the `datasets` library's cache, where lm-eval's load_dataset leaves each split as Arrow
// files (`<org>___<name>/<config>/<version>/<hash>/<name>-<split>[-NNNNN-of-NNNNN].arrow`).
// Nothing is downloaded; when nothing is found, the caller says where it looked. The names are
// checked as Hugging Face names first (hubNames.ts): a path is made only of names that are.
import { promises as fs } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { parse as parseYaml } from "yaml";
import { isDirectory } from "../base/fsutil";
import { datasetKindOf } from "./documents";
import { escapeRegExp } from "./pythonRegex";
import { configNameFault, repoIdFault } from "./hubNames";

/** The hub cache folder: HF_HUB_CACHE, else HF_HOME/hub, else ~/.cache/huggingface/hub. */
export function hubCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.HF_HUB_CACHE) return env.HF_HUB_CACHE;
  return path.join(env.HF_HOME ?? path.join(os.homedir(), ".cache", "huggingface"), "hub");
}

export interface HubSplit {
  /** The split's data files in the snapshot, in name order (shards concatenate in that order). */
  files: string[];
  /** The snapshot they were found in. */
  snapshot: string;
}

/** Where a split of a hub dataset was looked for, for the message when it was not found. */
export class HubDataNotFound extends Error {
  constructor(
    message: string,
    readonly looked: string,
  ) {
    super(message);
    this.name = "HubDataNotFound";
  }
}

/** A `dataset_path` or `dataset_name` that is no Hugging Face name (hubNames.ts): no cache path is made of it. */
export class HubNameError extends Error {
  constructor(
    message: string,
    readonly key: "dataset_path" | "dataset_name",
  ) {
    super(message);
    this.name = "HubNameError";
  }
}

/** Throws the HubNameError of a repo id or config name that is not one, before any path is made of them. */
function checkNames(repo: string, name: string | undefined): void {
  const repoFault = repoIdFault(repo);
  if (repoFault) throw new HubNameError(`\`${repo}\` is not a Hugging Face dataset id: ${repoFault}`, "dataset_path");
  const nameFault = name === undefined ? undefined : configNameFault(name);
  if (nameFault) throw new HubNameError(`\`${name}\` is not a dataset config name: ${nameFault}`, "dataset_name");
}

/** The `datasets` library's cache: HF_DATASETS_CACHE, else HF_HOME/datasets, else ~/.cache/huggingface/datasets. */
export function datasetsCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.HF_DATASETS_CACHE) return env.HF_DATASETS_CACHE;
  return path.join(env.HF_HOME ?? path.join(os.homedir(), ".cache", "huggingface"), "datasets");
}

/** The data files of `split` of the dataset `repo` (config `name`, or the default one): the hub cache's, else the `datasets` cache's. */
export async function cachedSplitFiles(repo: string, name: string | undefined, split: string): Promise<HubSplit> {
  checkNames(repo, name);
  try {
    return await hubSplitFiles(repo, name, split);
  } catch (hubError) {
    if (!(hubError instanceof HubDataNotFound)) throw hubError;
    const arrow = await arrowCacheSplitFiles(repo, name, split);
    if (arrow) return arrow;
    throw new HubDataNotFound(`${hubError.message}, nor in the \`datasets\` cache`, `${hubError.looked} and ${arrowCacheDir(repo, name)}`);
  }
}

/** Where the `datasets` library keeps a dataset config's prepared splits. */
function arrowCacheDir(repo: string, name: string | undefined): string {
  return path.join(datasetsCacheDir(), repo.split("/").join("___"), name ?? "default");
}

/** The Arrow files of `split` in the newest prepared copy of the config that has them; undefined when none does. */
async function arrowCacheSplitFiles(repo: string, name: string | undefined, split: string): Promise<HubSplit | undefined> {
  const configDir = arrowCacheDir(repo, name);
  const candidates: { dir: string; files: string[]; time: number }[] = [];
  const splitFile = new RegExp(`-${escapeRegExp(split)}(-\\d{5}-of-\\d{5})?\\.arrow$`);
  for (const version of await fs.readdir(configDir).catch(() => [] as string[])) {
    for (const hash of await fs.readdir(path.join(configDir, version)).catch(() => [] as string[])) {
      const dir = path.join(configDir, version, hash);
      const files = (await fs.readdir(dir).catch(() => [] as string[])).filter((f) => splitFile.test(f)).sort();
      const time = (await fs.stat(dir).catch(() => undefined))?.mtimeMs;
      if (files.length > 0 && time !== undefined) candidates.push({ dir, files, time });
    }
  }
  const newest = candidates.sort((a, b) => b.time - a.time)[0];
  return newest && { files: newest.files.map((f) => path.join(newest.dir, f)), snapshot: newest.dir };
}

/** The data files of `split` of the dataset `repo` (config `name`, or the default one) in the hub cache. */
export async function hubSplitFiles(repo: string, name: string | undefined, split: string, cacheDir = hubCacheDir()): Promise<HubSplit> {
  checkNames(repo, name);
  const repoDir = path.join(cacheDir, `datasets--${repo.split("/").join("--")}`);
  const snapshot = await snapshotDir(repoDir);
  if (!snapshot) throw new HubDataNotFound(`the Hugging Face dataset ${repo} is not in the hub cache (nothing is downloaded)`, repoDir);
  const files = await snapshotFiles(snapshot);
  const patterns = (await cardPatterns(snapshot, name, split)) ?? conventionalPatterns(name, split);
  const matched = files.filter((f) => datasetKindOf(f) !== undefined && patterns.some((p) => p.test(f))).sort();
  if (matched.length === 0) {
    throw new HubDataNotFound(`the hub cache has ${repo}${name ? ` (${name})` : ""} but no data files of split \`${split}\``, snapshot);
  }
  return { files: matched.map((f) => path.join(snapshot, f)), snapshot };
}

/** The snapshot `refs/main` names, else the most recently changed one. */
async function snapshotDir(repoDir: string): Promise<string | undefined> {
  const ref = (await fs.readFile(path.join(repoDir, "refs", "main"), "utf8").catch(() => "")).trim();
  if (ref && (await isDirectory(path.join(repoDir, "snapshots", ref)))) return path.join(repoDir, "snapshots", ref);
  const names = await fs.readdir(path.join(repoDir, "snapshots")).catch(() => [] as string[]);
  const dated = await Promise.all(
    names.map(async (n) => ({
      dir: path.join(repoDir, "snapshots", n),
      time: (await fs.stat(path.join(repoDir, "snapshots", n)).catch(() => undefined))?.mtimeMs,
    })),
  );
  return dated.filter((d) => d.time !== undefined).sort((a, b) => b.time! - a.time!)[0]?.dir;
}

/** Every file of the snapshot, as paths relative to it with `/`; at most a few levels deep. */
async function snapshotFiles(snapshot: string, depth = 4): Promise<string[]> {
  const out: string[] = [];
  const walk = async (dir: string, prefix: string, left: number) => {
    for (const entry of await fs.readdir(dir, { withFileTypes: true }).catch(() => [])) {
      const relative = prefix ? `${prefix}/${entry.name}` : entry.name;
      // Snapshot files are links into blobs/: a link to a file is a file.
      if (entry.isDirectory()) {
        if (left > 0) await walk(path.join(dir, entry.name), relative, left - 1);
      } else out.push(relative);
    }
  };
  await walk(snapshot, "", depth);
  return out;
}

/**
 * The patterns of the dataset card's `configs` (README.md's YAML front matter) for the config and
 * split; undefined when the card has no such config.
 */
async function cardPatterns(snapshot: string, name: string | undefined, split: string): Promise<RegExp[] | undefined> {
  const card = await fs.readFile(path.join(snapshot, "README.md"), "utf8").catch(() => undefined);
  const front = card && /^---\r?\n([\s\S]*?)\r?\n---/.exec(card)?.[1];
  let meta: { configs?: { config_name?: string; default?: boolean; data_files?: unknown }[] } | undefined;
  try {
    meta = front ? (parseYaml(front) as typeof meta) : undefined;
  } catch {
    return undefined;
  }
  const configs = Array.isArray(meta?.configs) ? meta.configs : [];
  const config = name
    ? configs.find((c) => c.config_name === name)
    : (configs.find((c) => c.default) ??
      configs.find((c) => c.config_name === "default") ??
      (configs.length === 1 ? configs[0] : undefined));
  if (!config) return undefined;
  const entries = Array.isArray(config.data_files)
    ? config.data_files
    : typeof config.data_files === "string"
      ? [{ split: "train", path: config.data_files }]
      : [];
  const globs = (entries as { split?: string; path?: unknown }[])
    .filter((e) => e.split === split)
    .flatMap((e) => (Array.isArray(e.path) ? e.path : [e.path]).map(String));
  return globs.length > 0 ? globs.map(globPattern) : undefined;
}

/** Where the hub's own conversions put a split when the card says nothing. */
function conventionalPatterns(name: string | undefined, split: string): RegExp[] {
  const prefixes = name ? [`${name}/`] : ["", "data/"];
  return prefixes.flatMap((p) => [`${p}${split}-*`, `${p}${split}.*`, `${p}${split}/*`]).map(globPattern);
}

/** A data_files glob as a pattern over `/`-separated relative paths: `*` within a part, `**` across parts. */
function globPattern(glob: string): RegExp {
  let source = "";
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === "*" && glob[i + 1] === "*") {
      source += ".*";
      i++;
      if (glob[i + 1] === "/") i++;
    } else if (c === "*") source += "[^/]*";
    else if (c === "?") source += "[^/]";
    else source += escapeRegExp(c);
  }
  return new RegExp(`^${source}$`);
}
