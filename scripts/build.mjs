// Bundles with esbuild: the extension (CommonJS, for VS Code's extension host) and its workspace
// worker (a worker thread of the extension host, where checks and hovers run), the bprof CLI,
// the webview scripts (browser), and the script of the HTML report (dist/report.js, next to
// dist/bprof.cjs, which inlines it into every page it writes: minified and without a source map,
// because the page must stand alone); copies the config schema next to them.
import * as esbuild from "esbuild";
import { copyFile, mkdir } from "node:fs/promises";

const production = process.argv.includes("--production");
const common = { bundle: true, sourcemap: !production, minify: production, logLevel: "warning" };
// Node bundles take ESM entry points first: some packages' "main" is a UMD build whose dynamic
// require()s of its own files esbuild cannot follow (jsonc-parser), while "module" bundles cleanly.
const node = { platform: "node", format: "cjs", target: "node20", mainFields: ["module", "main"] };

await mkdir("dist", { recursive: true });
await Promise.all([
  esbuild.build({
    ...common,
    entryPoints: ["src/extension/main.ts"],
    outfile: "dist/extension.cjs",
    ...node,
    external: ["vscode"],
  }),
  esbuild.build({
    ...common,
    entryPoints: ["src/core/workspace/worker.ts"],
    outfile: "dist/workspaceWorker.cjs",
    ...node,
  }),
  esbuild.build({
    ...common,
    entryPoints: ["src/cli/main.ts"],
    outfile: "dist/bprof.cjs",
    ...node,
    banner: { js: "#!/usr/bin/env node" },
  }),
  esbuild.build({
    ...common,
    entryPoints: ["webview/results.ts"],
    outfile: "dist/webview/results.js",
    platform: "browser",
    format: "iife",
    target: "es2022",
  }),
  esbuild.build({
    ...common,
    entryPoints: ["webview/review.ts"],
    outfile: "dist/webview/review.js",
    platform: "browser",
    format: "iife",
    target: "es2022",
  }),
  esbuild.build({
    ...common,
    entryPoints: ["webview/report.ts"],
    outfile: "dist/report.js",
    platform: "browser",
    format: "iife",
    target: "es2022",
    sourcemap: false,
    minify: true,
    legalComments: "inline",
  }),
  copyFile("src/core/config/schema.json", "dist/bprof.schema.json"),
]);
