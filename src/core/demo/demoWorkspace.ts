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

/** The folder Open Demo makes in the folder the user picks. */
export const DEMO_FOLDER_NAME = "benchmark-profiler-demo";

/**
 * Where Open Demo copies the demo, in the folder the user picked: the picked folder itself when it
 * is a demo already (it holds demo.bprof.yaml), else a `benchmark-profiler-demo` folder in it.
 */
export function demoFolderIn(picked: string): string {
  const resolved = path.resolve(picked);
  return existsSync(path.join(resolved, DEMO_CONFIG)) ? resolved : path.join(resolved, DEMO_FOLDER_NAME);
}

/**
 * How a window shows the demo folder, so the user sees where it is: `inside` a folder the window
 * has open already; `add` it to the window's folders (a trusted window); `open` it in this window
 * (a window with no folder); or in a `newWindow`, where an untrusted window's user is asked to trust
 * the folder they just made (the demo runs the native runner, which Restricted Mode does not).
 */
export function demoPlacement(
  demoFolder: string,
  workspaceFolders: readonly string[],
  trusted: boolean,
): "inside" | "add" | "open" | "newWindow" {
  const folder = path.resolve(demoFolder);
  const inside = workspaceFolders.some((w) => {
    const relative = path.relative(path.resolve(w), folder);
    return relative === "" || (!relative.startsWith("..") && !path.isAbsolute(relative));
  });
  if (inside && trusted) return "inside";
  if (workspaceFolders.length === 0) return "open";
  return trusted ? "add" : "newWindow";
}
