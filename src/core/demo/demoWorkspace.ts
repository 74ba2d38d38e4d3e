// The built-in demo workspace (media/demo) as users get it: copied out of the extension or the
// package before a run. What it holds and how it is made: scripts/lib/demoAuthoring.ts.
import { existsSync, promises as fs } from "node:fs";
import * as path from "node:path";

/** The config at the root of the demo workspace. */
export const DEMO_CONFIG = "demo.bprof.yaml";

/**
 * Copies a demo workspace (`source`, e.g. media/demo) into `target` (its config, datasets,
 * benchmarks and model; runs already in `target` stay), so runs never land in the sources or in
 * an installed extension. Returns the config to run there.
 */
export async function copyDemoWorkspace(source: string, target: string): Promise<string> {
  if (!existsSync(path.join(source, DEMO_CONFIG))) throw new Error(`the demo workspace is missing: no ${path.join(source, DEMO_CONFIG)}`);
  if (!existsSync(path.join(source, "model", "model.safetensors"))) {
    throw new Error(`the demo model is missing from ${path.join(source, "model")}: train it with \`npm run demo:train\``);
  }
  await fs.mkdir(target, { recursive: true });
  await fs.cp(source, target, {
    recursive: true,
    force: true,
    filter: (from) => path.basename(from) !== ".bprof" && !from.endsWith(".tmp"),
  });
  return path.join(target, DEMO_CONFIG);
}
