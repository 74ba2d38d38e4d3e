// What the profiler needs from a Hugging Face model folder, checked before any job is written.
import { promises as fs } from "node:fs";
import * as path from "node:path";
import { isDirectory, isFile } from "../fsutil";

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
      if (typeof config.model_type !== "string") problems.push({ file: configFile, message: `config.json has no model_type: ${configFile}` });
    } catch (e) {
      problems.push({ file: configFile, message: `config.json is not valid JSON (${(e as Error).message}): ${configFile}` });
    }
  }
  const entries = await fs.readdir(dir);
  if (options.weights && !entries.some((e) => e.endsWith(".safetensors"))) problems.push({ file: dir, message: `the model folder has no *.safetensors weights: ${dir}` });
  if (!entries.includes("tokenizer.json")) problems.push({ file: dir, message: `the model folder has no tokenizer.json: ${dir}` });
  return problems;
}
