// `bprof demo`: the built-in demo workspace (media/demo), copied to a folder of its own so runs
// never land in the sources, ready for `bprof run`.
import * as path from "node:path";
import { copyDemoWorkspace } from "../core/demo/demoWorkspace";

export const DEMO_USAGE = `  demo [--dir DIR]               profile the built-in demo: a small Llama trained on the ten
                                 ability generators, on held-out benchmarks (media/demo), copied
                                 to DIR (default ./.bprof/demo); prints the AIS tables and writes
                                 the HTML report
`;

/** Copies the demo workspace shipped next to the bundle in dist/ into `dir`; returns its config. */
export async function prepareDemo(bundleDir: string, dir: string): Promise<string> {
  return copyDemoWorkspace(path.resolve(bundleDir, "..", "media", "demo"), path.resolve(dir));
}
