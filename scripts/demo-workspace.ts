// Writes the demo workspace (media/demo) from the generators' fixed seeds: the config, the ten
// diagnostic datasets and the held-out benchmarks. The model is trained by demo-train.ts.
//   npm run demo:workspace
import * as path from "node:path";
import { writeDemoWorkspace } from "./lib/demoAuthoring";

const dir = path.resolve(import.meta.dirname, "..", "media", "demo");
const files = await writeDemoWorkspace(dir);
console.log(`${files.length} files written under ${dir}`);
