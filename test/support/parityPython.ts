// The parity suite's Python: lm-eval and transformers themselves, installed by
// scripts/parity-env.sh (run by `npm test`'s setup) into .venv-parity/. Where it is absent the
// parity tests skip and say why.
import { existsSync } from "node:fs";
import * as path from "node:path";
import { repoRoot } from "./cli";

export const parityPython = path.join(repoRoot, ".venv-parity", "bin", "python");

/** False when the environment is there; else why the parity tests skip. */
export const paritySkip: string | false = existsSync(path.join(repoRoot, ".venv-parity", ".bprof-parity"))
  ? false
  : "lm-eval and transformers are not installed in .venv-parity/ (scripts/parity-env.sh makes it where pip reaches them; see .venv-parity.log)";

/** ../shared's benchmark files and lm-eval's task files, read in place; false when they are here. */
export const sharedDir = path.resolve(repoRoot, "..", "shared");
export const sharedSkip: string | false =
  existsSync(path.join(sharedDir, "lm-eval-tasks")) && existsSync(path.join(sharedDir, "benchmarks"))
    ? false
    : "../shared (lm-eval's task files and the benchmark files, read in place) is not here";
