// A new profiling config, written for the user (the editor's New Profiling Config): a model folder
// and the lm-eval task files to score, with comments that say what each key does and what comes
// next (abilities and their diagnostic datasets, the ablation). It validates as written: abilities
// and ablation stay commented out until the user has a diagnostic dataset.
import { constants, promises as fs } from "node:fs";
import * as path from "node:path";
import { createTemporarySibling } from "../base/fsutil";

export interface NewConfigInput {
  /** Where the config will be written (absolute): the paths in it are relative to its folder. */
  configFile: string;
  /** The model folder (absolute): config.json, *.safetensors, tokenizer.json. */
  modelDir: string;
  /** lm-eval task files (absolute), one benchmark each. */
  taskFiles: readonly string[];
}

/**
 * Whether a YAML file's text is an lm-eval task, to offer as a benchmark (the workspace model's
 * test, kept here so the extension need not bundle that model): `task:` and one of
 * `dataset_path:`, `include:`, `output_type:`.
 */
export function isTaskText(text: string): boolean {
  return /^task\s*:/m.test(text) && /^(dataset_path|include|output_type)\s*:/m.test(text);
}

/** `./model`, `../tasks/x.yaml`: a path relative to the config's folder, with forward slashes. */
function relativeTo(dir: string, file: string): string {
  const relative = path.relative(dir, file).split(path.sep).join("/");
  if (relative === "") return ".";
  return relative.startsWith("../") || path.isAbsolute(relative) ? relative : `./${relative}`;
}

/** A YAML scalar that reads back as `value`: plain when it is safe, else double-quoted JSON. */
function yamlString(value: string): string {
  return /^[\w./-][\w ./-]*$/.test(value) && !/\s$/.test(value) && !/^(true|false|null|yes|no|~)$/i.test(value)
    ? value
    : JSON.stringify(value);
}

/** The text of a new config; `newConfigText(...)` parses and validates against the schema. */
export function newConfigText(input: NewConfigInput): string {
  const dir = path.dirname(input.configFile);
  const model = relativeTo(dir, input.modelDir);
  const lines = [
    "# A Benchmark Profiler config: which model to profile, on which benchmarks, by which abilities.",
    "# Profile it with the play button above, or `bprof run " + path.basename(input.configFile) + "`.",
    "models:",
    "  # A Hugging Face model folder: config.json, *.safetensors and tokenizer.json.",
    `  - path: ${yamlString(model)}`,
    "    # dtype: bfloat16 # half the memory of float32, the default",
    "benchmarks:",
    "  # lm-eval task files with local data (or a Hugging Face dataset in this machine's cache).",
    ...(input.taskFiles.length > 0
      ? input.taskFiles.map((t) => `  - task: ${yamlString(relativeTo(dir, t))}\n    # limit: 100 # score only the first 100 documents`)
      : ["  - task: ./tasks/my_task.yaml # replace with your task file"]),
    "",
    "# Next: the abilities to profile, each with a diagnostic dataset (*.diag.jsonl; make one with",
    '# "Benchmark Profiler: Create Diagnostic Dataset"). Uncomment both sections once it exists.',
    "# abilities:",
    "#   - name: Quantitative Reasoning",
    "#     data: ./diagnostic/quantitative.diag.jsonl",
    "# ablation:",
    "#   k: [0.00256, 0.01024] # fractions of the parameters zeroed; the paper swept 0.00001 to 0.01024",
    "#   selections: [top, random]",
    "",
  ];
  return lines.join("\n");
}

/** The first of `<base>.bprof.yaml`, `<base>-2.bprof.yaml`, ... in `dir` that `taken` says is free. */
export function freeConfigFile(dir: string, base: string, taken: (file: string) => boolean): string {
  const safe = base.replace(/[^\w.-]+/g, "-").replace(/^[-.]+|[-.]+$/g, "") || "profile";
  for (let i = 1; ; i++) {
    const file = path.join(dir, `${safe}${i === 1 ? "" : `-${i}`}.bprof.yaml`);
    if (!taken(file)) return file;
  }
}

/**
 * Writes a new file whole or not at all, and never over an existing one: the text goes to a
 * temporary sibling, which is then linked to `file` (a link fails where `file` exists, where a
 * rename would replace it). Throws EEXIST when `file` exists.
 */
export async function writeNewFileAtomic(file: string, text: string): Promise<void> {
  const { path: tmp, handle } = await createTemporarySibling(file);
  try {
    try {
      await handle.writeFile(text);
    } finally {
      await handle.close();
    }
    await fs.link(tmp, file).catch(async (e: NodeJS.ErrnoException) => {
      // A file system without hard links: an exclusive copy, which fails too where `file` exists.
      if (e.code !== "EPERM" && e.code !== "ENOTSUP" && e.code !== "ENOSYS") throw e;
      await fs.copyFile(tmp, file, constants.COPYFILE_EXCL);
    });
  } finally {
    await fs.rm(tmp, { force: true }).catch(() => undefined);
  }
}
