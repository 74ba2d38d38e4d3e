// What the profiler needs from a Hugging Face model folder, checked before any job is written.
import { promises as fs } from "node:fs";
import * as path from "node:path";
import { isDirectory, isFile } from "../base/fsutil";
import { readSafetensorsHeader } from "./safetensors";

/** The model_type values of config.json that the runner implements (native-runner/src/config.cpp). */
export const RUNNER_MODEL_TYPES = ["llama", "mistral", "qwen2", "qwen3"];

export interface ModelFolderProblem {
  /** The file the problem is about (config.json, the folder itself, ...). */
  file: string;
  message: string;
}

/**
 * What is missing or broken in a model folder. Without `weights` (the runner reads them on another
 * machine), the folder needs only what prompts and the k check are made from.
 */
export async function modelFolderProblems(dir: string, options: { weights: boolean } = { weights: true }): Promise<ModelFolderProblem[]> {
  if (!(await isDirectory(dir))) return [{ file: dir, message: `model folder not found: ${dir}` }];
  const problems: ModelFolderProblem[] = [];
  const configFile = path.join(dir, "config.json");
  if (!(await isFile(configFile))) {
    problems.push({ file: configFile, message: `the model folder has no config.json: ${dir}` });
  } else {
    try {
      const config = JSON.parse(await fs.readFile(configFile, "utf8")) as { model_type?: unknown };
      if (typeof config.model_type !== "string")
        problems.push({ file: configFile, message: `config.json has no model_type: ${configFile}` });
      else if (!RUNNER_MODEL_TYPES.includes(config.model_type)) {
        problems.push({
          file: configFile,
          message: `config.json's model_type \`${config.model_type}\` is not one the runner implements (${RUNNER_MODEL_TYPES.join(", ")}): ${configFile}`,
        });
      }
    } catch (e) {
      problems.push({ file: configFile, message: `config.json is not valid JSON (${(e as Error).message}): ${configFile}` });
    }
  }
  const entries = await fs.readdir(dir);
  const weights = entries.filter((e) => e.endsWith(".safetensors")).sort();
  if (options.weights && weights.length === 0)
    problems.push({ file: dir, message: `the model folder has no *.safetensors weights: ${dir}` });
  if (options.weights) for (const name of weights) problems.push(...(await safetensorsProblems(path.join(dir, name))));
  if (!entries.includes("tokenizer.json")) problems.push({ file: dir, message: `the model folder has no tokenizer.json: ${dir}` });
  return problems;
}

/** Headers already read, by file, size and modification time: the editor checks on every edit. */
const checkedHeaders = new Map<string, { stamp: string; problems: ModelFolderProblem[] }>();

/**
 * A weights file cut short (an interrupted download, a full disk) or not safetensors at all, from
 * its header alone: the tensors it lists must lie inside the file.
 */
async function safetensorsProblems(file: string): Promise<ModelFolderProblem[]> {
  const stat = await fs.stat(file).catch(() => undefined);
  if (!stat) return [{ file, message: `cannot read ${file}` }];
  const stamp = `${stat.size}:${stat.mtimeMs}`;
  const known = checkedHeaders.get(file);
  if (known?.stamp === stamp) return known.problems;
  let problems: ModelFolderProblem[] = [];
  try {
    readSafetensorsHeader(file);
  } catch (e) {
    problems = [
      {
        file,
        message: `the weights are not a complete safetensors file (${(e as Error).message.replace(`${file}: `, "")}); download or copy them again: ${file}`,
      },
    ];
  }
  checkedHeaders.set(file, { stamp, problems });
  return problems;
}
