#!/usr/bin/env bash
# An 8B model on one GPU (docs/performance.md, "An 8B model"): a random Llama of Llama-3.1-8B's shape
# (scripts/bench/llama-3.1-8b-shape.json) made in bfloat16 by PyTorch on this host while the runner
# builds, then `bprof-runner bench` on it twice through gpu-host.sh:
#   before/  the importance pass as it was: gradient sums made in bfloat16 and added
#            (BPROF_PLAIN_GRADIENT_SUMS), the old default batch of 8 sequences
#   after/   the importance pass at several batch sizes, scoring with the KV cache, and the
#            profile row's runner way (importance, ranking, ablate, score, restore per variant)
# with nvidia-smi's memory and utilisation sampled every 250 ms beside both (smi.csv).
# BPROF_8B_MODEL, BPROF_8B_JOB and BPROF_8B_SHAPE change the model folder, the job and the shape (a
# trial at toy size on a CPU first). OUT gets gpu-8b.tar.gz (everything) and the two bench.json files, for a device call's 8-file limit.
#
#   scripts/bench/gpu-8b.sh OUT [--after-only] [--test]
#
# --after-only  the second bench alone (a re-measurement after a change); BPROF_8B_AFTER, a Python
#               dict of job fields ("profile.abilities": 1), shrinks it to fit a short device call
# --test        the runner's tests too (ctest), test_gpu.cpp among them: the GPU against the CPU
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
[[ $# -ge 1 && $1 != -* ]] || { echo "usage: scripts/bench/gpu-8b.sh OUT [--test]" >&2; exit 2; }
OUT="$(mkdir -p "$1" && cd "$1" && pwd)"
shift
BEFORE=1
if [[ ${1:-} == --after-only ]]; then
  BEFORE=0
  shift
fi
MODEL="${BPROF_8B_MODEL:-/tmp/bprof-8b}"
WORK="$(mktemp -d)"
JOB="${BPROF_8B_JOB:-$ROOT/scripts/bench/gpu-8b-job.json}"
SHAPE="${BPROF_8B_SHAPE:-$ROOT/scripts/bench/llama-3.1-8b-shape.json}"

nvidia-smi --query-gpu=timestamp,memory.used,utilization.gpu --format=csv,noheader,nounits -lms 250 >"$OUT/smi.csv" 2>/dev/null &
SMI=$!
trap 'kill $SMI 2>/dev/null || true; rm -rf "$WORK"' EXIT

# the model, made while the runner builds; the bench waits for it
if [[ ! -f $MODEL/config.json ]]; then
  (python3 "$ROOT/scripts/bench/make_random_model.py" "$MODEL" "$SHAPE" >"$OUT/model.json" 2>"$OUT/model.log" \
    || echo failed >"$OUT/model.failed") &
fi
WAIT="while [[ ! -f '$MODEL/config.json' && ! -f '$OUT/model.failed' ]]; do sleep 1; done; [[ -f '$MODEL/config.json' ]] || { cat '$OUT/model.log' >&2; exit 1; }"

job_with() {  # JOB with the model folder filled in and the given overrides: job_with OUT_FILE PYTHON_DICT
  python3 - "$JOB" "$1" "$MODEL" "$2" <<'PY'
import ast, json, sys
job = json.load(open(sys.argv[1]))
job["scoring_model"] = job["profile_model"] = sys.argv[3]
for key, value in ast.literal_eval(sys.argv[4]).items():
    section, _, field = key.partition(".")
    if field:
        job[section][field] = value
    else:
        job[section] = value
json.dump(job, open(sys.argv[2], "w"), indent=2)
PY
}

AFTER="${BPROF_8B_AFTER:-}"
[[ -n $AFTER ]] || AFTER="{}"
if [[ $BEFORE == 1 ]]; then
  job_with "$WORK/before.json" "{'rows': ['matmul', 'importance'], 'importance.batch_size': 8}"
  BPROF_PLAIN_GRADIENT_SUMS=1 BPROF_GPU_JOB="$WORK/before.json" BPROF_GPU_BEFORE_BENCH="$WAIT" \
    "$ROOT/scripts/bench/gpu-host.sh" "$OUT/before" "$@"
  job_with "$WORK/after.json" "$AFTER"
  BPROF_GPU_JOB="$WORK/after.json" "$ROOT/scripts/bench/gpu-host.sh" "$OUT/after"
else
  job_with "$WORK/after.json" "$AFTER"
  BPROF_GPU_JOB="$WORK/after.json" BPROF_GPU_BEFORE_BENCH="$WAIT" "$ROOT/scripts/bench/gpu-host.sh" "$OUT/after" "$@"
fi

kill $SMI 2>/dev/null || true
[[ $BEFORE == 1 ]] && cp "$OUT/before/bench.json" "$OUT/before.bench.json"
cp "$OUT/after/bench.json" "$OUT/after.bench.json"
parts=()
for part in before after smi.csv model.json model.log; do [[ -e $OUT/$part ]] && parts+=("$part"); done
tar -C "$OUT" -czf "$OUT/gpu-8b.tar.gz.tmp" "${parts[@]}"
mv "$OUT/gpu-8b.tar.gz.tmp" "$OUT/gpu-8b.tar.gz"
rm -rf "$OUT/before" "$OUT/after" "$OUT/smi.csv" "$OUT/model.log"
echo "gpu-8b: wrote $OUT" >&2
