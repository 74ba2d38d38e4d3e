// The e2e tests' install: code-server and Node 24, installed offline into .vscode-test/ by
// scripts/e2e-install.sh, Debian's Chromium, and what the tests load into them (the packaged
// .vsix, the native runner). Each path is checked where it is used, with a message that says how to
// install what is missing.
import * as fs from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
export const CACHE_DIR = path.join(REPO_ROOT, ".vscode-test");
export const RESULTS_DIR = path.join(REPO_ROOT, "test-results");
export const CHROMIUM_PATH = process.env.BPROF_E2E_CHROMIUM ?? "/usr/bin/chromium";
export const INSTALL_HINT = "run `bash scripts/e2e-install.sh` first (it installs Node 24 and code-server into .vscode-test/)";
export const VSIX = path.join(REPO_ROOT, "dist", "benchmark-profiler.vsix");
export const RUNNER = path.join(REPO_ROOT, "native-runner", "build", "bprof-runner");

export interface E2EInstall {
  codeServerVersion: string;
  nodeVersion: string;
  /** code-server's entry script (absolute). */
  codeServer: string;
  /** Folder of Node 24's `node` (absolute); put first on PATH when launching code-server. */
  nodeBin: string;
  node: string;
}

/** Reads .vscode-test/e2e.json; throws an error that says how to install when it is missing. */
export function loadInstall(): E2EInstall {
  const manifest = path.join(CACHE_DIR, "e2e.json");
  if (!fs.existsSync(manifest)) {
    throw new Error(`code-server for the e2e tests is not installed (${manifest} is missing): ${INSTALL_HINT}`);
  }
  const raw = JSON.parse(fs.readFileSync(manifest, "utf8")) as Record<string, string>;
  const abs = (p: string | undefined) => path.resolve(CACHE_DIR, p ?? "");
  const install: E2EInstall = {
    codeServerVersion: raw.codeServerVersion ?? "?",
    nodeVersion: raw.nodeVersion ?? "?",
    codeServer: abs(raw.codeServer),
    nodeBin: abs(raw.nodeBin),
    node: path.join(abs(raw.nodeBin), "node"),
  };
  for (const p of [install.codeServer, install.node]) {
    if (!fs.existsSync(p)) throw new Error(`the e2e install in ${CACHE_DIR} is incomplete (${p} is missing): ${INSTALL_HINT}`);
  }
  return install;
}
