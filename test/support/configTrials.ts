// A tiny project (tinyProject.ts) shared by the tests of one file that each try other text in its
// config: made before them, removed after them, its config's own text kept to put back.
import { promises as fs } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, before } from "node:test";
import { loadProfile } from "../../src/core/config/load";
import type { Problem } from "../../src/core/base/problems";
import { makeTinyProject, type TinyProject } from "./tinyProject";

export class ConfigTrials {
  /** Set before the file's tests run. */
  project!: TinyProject;
  /** The config's own text. */
  config!: string;

  /** The problems of the config with `text` in its place; the config's own text is put back after. */
  async problemsOf(text: string): Promise<Problem[]> {
    await fs.writeFile(this.project.configPath, text);
    try {
      return (await loadProfile(this.project.configPath)).problems;
    } finally {
      await fs.writeFile(this.project.configPath, this.config);
    }
  }
}

/** Registers the file's before and after hooks; `prefix` names its temporary folder. */
export function configTrials(prefix: string): ConfigTrials {
  const trials = new ConfigTrials();
  before(async () => {
    trials.project = await makeTinyProject(await fs.mkdtemp(path.join(os.tmpdir(), prefix)));
    trials.config = await fs.readFile(trials.project.configPath, "utf8");
  });
  after(() => fs.rm(trials.project.root, { recursive: true, force: true }));
  return trials;
}
