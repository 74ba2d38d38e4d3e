// The two packages made from this repository, each from its own list: the .vsix (.vscodeignore)
// and the npm package of the bprof CLI (.npmignore). Each must carry what it runs on a user's
// machine, and neither anything of the tests, the runner's build or a demo run.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import * as path from "node:path";
import { test } from "node:test";
import { execa } from "execa";

const ROOT = path.join(import.meta.dirname, "..", "..");
/** vsce walks the whole tree (node_modules and the parity environment included) before its list applies. */
const VSCE_TIMEOUT_MS = 300_000;

/** What the npm package would hold, as `npm pack` lists it. */
async function npmPackageFiles(): Promise<string[]> {
  const { stdout } = await execa("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], { cwd: ROOT });
  const [tarball] = JSON.parse(stdout) as { files: { path: string }[] }[];
  return tarball!.files.map((f) => f.path);
}

/** What the .vsix would hold, as vsce lists it. */
async function vsixFiles(): Promise<string[]> {
  const { stdout } = await execa("npx", ["vsce", "ls", "--no-dependencies"], { cwd: ROOT });
  return stdout.split("\n").filter((line) => line.length > 0);
}

/** The README's relative images (the Marketplace's and npm's pages show them from the package). */
function readmeImages(): string[] {
  const readme = readFileSync(path.join(ROOT, "README.md"), "utf8");
  return [...readme.matchAll(/!\[[^\]]*\]\(([^)\s:]+)\)/g)].map((m) => path.posix.normalize(m[1]!));
}

/** README images, the runner's sources and the demo: what both packages need. */
function sharedNeeds(): string[] {
  return [
    ...readmeImages(),
    "README.md",
    "LICENSE",
    "CHANGELOG.md",
    "package.json",
    "dist/bprof.cjs",
    "dist/report.js",
    "dist/bprof.schema.json",
    "media/demo/demo.bprof.yaml",
    "media/demo/model/model.safetensors",
    "media/demo/model/tokenizer.json",
    "media/demo/diagnostic/temporal.diag.jsonl",
    "media/demo/benchmarks/demo_mixed.yaml",
    "media/demo/benchmarks/data/demo_mixed.jsonl",
    "native-runner/CMakeLists.txt",
    "native-runner/build-runner.sh",
    "native-runner/src/llama.cpp",
    "native-runner/src/main.cpp",
  ];
}

function missing(files: readonly string[], needed: readonly string[]): string[] {
  const have = new Set(files);
  return needed.filter((f) => !have.has(f));
}

/** Files no package may carry: sources, tests, builds, runs, local environments. */
function strays(files: readonly string[]): string[] {
  const forbidden =
    /^(src|test|webview|scripts|docs|node_modules|test-results|\.venv-parity|\.vscode-test|native-runner\/(build|tests|fuzz))\//;
  return files.filter((f) => forbidden.test(f) || f.includes("/.bprof/") || f.endsWith(".map") || f.endsWith(".vsix"));
}

test("the npm package carries the CLI, the demo, the README's images and the runner's sources, and nothing else", async () => {
  const files = await npmPackageFiles();
  assert.deepEqual(missing(files, sharedNeeds()), []);
  assert.deepEqual(strays(files), []);
  // The extension's own bundles and media are the .vsix's business.
  assert.deepEqual(
    files.filter((f) => f === "dist/extension.cjs" || f.startsWith("dist/webview/") || f.startsWith("media/walkthrough/")),
    [],
  );
});

test(
  "the .vsix carries the extension's bundles and media, the demo and the runner's sources, and nothing else",
  { timeout: VSCE_TIMEOUT_MS },
  async () => {
    const files = await vsixFiles();
    const extensionNeeds = [
      "dist/extension.cjs",
      "dist/workspaceWorker.cjs",
      "dist/webview/results.js",
      "media/webview.css",
      "media/activity.svg",
      "media/snippets/bprof.json",
      "media/walkthrough/demo.md",
    ];
    assert.deepEqual(missing(files, [...sharedNeeds(), ...extensionNeeds]), []);
    assert.deepEqual(strays(files), []);
  },
);

test("the package lists' checks find a stray and a missing file", () => {
  assert.deepEqual(
    strays(["dist/bprof.cjs", "test/unit/x.test.ts", "native-runner/build/bprof-runner", "media/demo/.bprof/runs/a/results.json"]),
    ["test/unit/x.test.ts", "native-runner/build/bprof-runner", "media/demo/.bprof/runs/a/results.json"],
  );
  assert.deepEqual(missing(["a"], ["a", "b"]), ["b"]);
  assert.ok(readmeImages().length >= 2, `the README's images: ${readmeImages().join(", ")}`);
});
