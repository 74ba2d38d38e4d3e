#!/usr/bin/env bash
# The parity suite's Python: lm-eval and transformers themselves (and scipy and statsmodels, the
# statistics' references), in a virtual environment under
# .venv-parity/ (git-ignored), so the tests compare the project's figures with the real packages
# rather than with a reading of their source. Tests only: the product needs none of these.
#
# Idempotent (a stamp holds the pinned list it was made from). Where pip cannot reach the packages
# (no index configured, no network), it says so and leaves no environment: the parity tests then
# skip, naming the reason (test/support/parityPython.ts).
set -uo pipefail
cd "$(dirname "$0")/.."

venv=.venv-parity
# torch is the CPU wheel: unpinned, pip prefers a CUDA build with gigabytes of NVIDIA wheels.
# lm_eval goes in without its dependencies: one of them (evaluate) has no wheel here, and
# lm-eval's loading and scoring, which the suite drives through simple_evaluate, do not need it.
packages=(torch==2.13.0+cpu transformers==5.18.0 datasets==5.0.1 safetensors==0.8.0 accelerate==1.15.0 sacrebleu==2.6.0 scipy==1.17.1 statsmodels==0.15.0)
lmeval=lm_eval==0.4.13
stamp="$venv/.bprof-parity"
wanted="${packages[*]} $lmeval"

say() { printf 'parity-env: %s\n' "$*"; }

[ -f "$stamp" ] && [ "$(cat "$stamp")" = "$wanted" ] && exit 0
command -v python3 >/dev/null || { say "no python3: the parity tests will skip"; exit 0; }

rm -rf "$venv"
if ! python3 -m venv "$venv" >/dev/null 2>&1; then
  say "python3 cannot make a virtual environment (python3-venv missing?): the parity tests will skip"
  rm -rf "$venv"
  exit 0
fi
log="$venv.log"
say "installing ${packages[*]} and $lmeval into $venv (log: $log)"
# PIP_RETRIES=0: an index that cannot be reached fails at once instead of waiting.
if PIP_RETRIES=0 "$venv/bin/pip" install --disable-pip-version-check -q "${packages[@]}" >"$log" 2>&1 &&
  PIP_RETRIES=0 "$venv/bin/pip" install --disable-pip-version-check -q --no-deps "$lmeval" >>"$log" 2>&1; then
  echo "$wanted" >"$stamp"
  say "ready"
else
  say "pip could not install them (see $log): the parity tests will skip"
  rm -rf "$venv"
fi
exit 0
