// The runner's sources as bprof carries them (in the .vsix, in the npm package, in a checkout):
// the CMake project without its tests and fuzz corpus, and build-runner.sh, which builds it on the
// machine that will run it. Their hash is part of every build's cache key, so a new version of
// bprof builds a new runner.
import { createHash } from "node:crypto";
import { promises as fs } from "node:fs";
import * as path from "node:path";

export interface RunnerSources {
  /** The folder (native-runner/). */
  dir: string;
  /** What a build reads, relative to `dir`, sorted. */
  files: string[];
  /** sha256 of the files' names and bytes, hex. */
  hash: string;
}

export const BUILD_SCRIPT = "build-runner.sh";

/** The sources next to a bundle: dist/ -> native-runner/. */
export function bundledSourcesDir(bundleDir: string): string {
  return path.resolve(bundleDir, "..", "native-runner");
}

/** The sources in `dir`, hashed; undefined when `dir` holds none (a broken install). */
export async function runnerSources(dir: string): Promise<RunnerSources | undefined> {
  const src = await fs.readdir(path.join(dir, "src")).catch(() => undefined);
  if (!src) return undefined;
  const files = ["CMakeLists.txt", BUILD_SCRIPT, ...src.filter((f) => /\.(cpp|h)$/.test(f)).map((f) => `src/${f}`)].sort();
  const hash = createHash("sha256");
  for (const file of files) {
    const bytes = await fs.readFile(path.join(dir, file)).catch(() => undefined);
    if (!bytes) return undefined;
    hash.update(`${file}\0${bytes.length}\0`).update(bytes);
  }
  return { dir, files, hash: hash.digest("hex") };
}
