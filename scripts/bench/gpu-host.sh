#!/usr/bin/env bash
# The GPU half of `npm run bench`, for a machine with CUDA and PyTorch but no Node (a GPU host, a
# cluster node): builds bprof-runner against the libtorch inside PyTorch and runs `bprof-runner
# bench` with scripts/bench/gpu-job.json. Bring OUT back and join it to a record made here:
#
#   scripts/bench/gpu-host.sh OUT [--rows ROW,ROW...] [--test]     (on the GPU machine)
#   npm run bench -- --gpu-bench OUT                               (here; repeat for more folders)
#
# --rows  the job's rows to run (matmul, scoring, importance, profile; default all). A long row can
#         run in a call of its own, into its own OUT; scoring and importance need matmul beside
#         them for their MFU.
# --test  also build and run the runner's tests (ctest) against this libtorch, first: among them
#         tests/test_gpu.cpp, the GPU's scores, generations, importance and ablation against the
#         CPU's, which CI (no GPU) skips.
#
# OUT gets bench.json (the runner's figures), host.json (date, GPUs, driver, PyTorch), events.jsonl
# (the runner's events, each with "t", seconds since the start: kept when the run is cut short),
# build.log, and with --test ctest.log.
# Environment, where the machine lacks a Debian package:
#   BPROF_TORCH_PREFIX         libtorch's CMake prefix (default: python3's torch.utils.cmake_prefix_path)
#   NLOHMANN_JSON_INCLUDE_DIR  a folder holding nlohmann/json.hpp (nlohmann-json3-dev)
#   GOOGLETEST_SOURCE_DIR      GoogleTest sources, for --test (Debian's /usr/src/googletest)
#   BPROF_GPU_BUILD            the build folder (default native-runner/build-torch)
#   BPROF_GPU_JOB              the job (default scripts/bench/gpu-job.json)
#   BPROF_GPU_BEFORE_BENCH     a command run after the build, before the bench (gpu-8b.sh waits
#                              there for the model it makes while the runner builds)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
usage() { echo "usage: scripts/bench/gpu-host.sh OUT [--rows matmul,scoring,importance,profile] [--test]" >&2; exit 2; }

[[ $# -ge 1 && $1 != -* ]] || usage
OUT="$(mkdir -p "$1" && cd "$1" && pwd)"
shift
ROWS="" TEST=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --rows) ROWS="${2:?--rows needs a list}"; shift 2 ;;
    --test) TEST=1; shift ;;
    *) usage ;;
  esac
done
BUILD="${BPROF_GPU_BUILD:-$ROOT/native-runner/build-torch}"
JOB="${BPROF_GPU_JOB:-$ROOT/scripts/bench/gpu-job.json}"
say() { echo "gpu-host: $*" >&2; }

if [[ -n ${BPROF_TORCH_PREFIX:-} ]]; then
  PREFIX="$BPROF_TORCH_PREFIX"
elif ! PREFIX="$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)' 2>/dev/null)"; then
  say "python3 cannot import torch: install PyTorch, or set BPROF_TORCH_PREFIX to libtorch's CMake prefix"
  exit 1
fi
say "libtorch from $PREFIX"

# The machine's facts first: a run cut short still says where it ran.
python3 - "$OUT/host.json" <<'PY'
import datetime, json, os, platform, socket, subprocess, sys
def nvidia_smi():
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=name,memory.total,driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, check=True).stdout
        return [line.strip() for line in out.splitlines() if line.strip()]
    except (OSError, subprocess.CalledProcessError):
        return []
def cpu():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"
try:
    import torch
    torch_version = torch.__version__
except ImportError:
    torch_version = None
host = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"), "hostname": socket.gethostname(),
        "gpus": nvidia_smi(), "python_torch": torch_version, "cpu": cpu(), "cores": os.cpu_count()}
tmp = sys.argv[1] + ".tmp"
with open(tmp, "w") as f:
    json.dump(host, f, indent=2)
os.replace(tmp, sys.argv[1])
PY

cmake_args=(-S "$ROOT/native-runner" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$PREFIX"
            -DBUILD_TESTING="$([[ $TEST == 1 ]] && echo ON || echo OFF)")
command -v ninja >/dev/null && cmake_args+=(-G Ninja)
[[ -n ${NLOHMANN_JSON_INCLUDE_DIR:-} ]] && cmake_args+=(-DNLOHMANN_JSON_INCLUDE_DIR="$NLOHMANN_JSON_INCLUDE_DIR")
[[ -n ${GOOGLETEST_SOURCE_DIR:-} ]] && cmake_args+=(-DGOOGLETEST_SOURCE_DIR="$GOOGLETEST_SOURCE_DIR")
say "building bprof-runner in $BUILD (log: $OUT/build.log)"
if ! { cmake "${cmake_args[@]}" && cmake --build "$BUILD" -j"$(nproc)"; } >"$OUT/build.log" 2>&1; then
  tail -n 40 "$OUT/build.log" >&2
  say "the build failed; the whole log is $OUT/build.log"
  exit 1
fi
RUNNER="$BUILD/bprof-runner"
"$RUNNER" --version >&2

if [[ $TEST == 1 ]]; then
  say "ctest (log: $OUT/ctest.log)"
  # the tests' own exit status is reported, not fatal: the bench still runs after a failing test
  ctest --test-dir "$BUILD" -j"$(nproc)" --output-on-failure >"$OUT/ctest.log" 2>&1 || say "ctest failed: see $OUT/ctest.log"
  tail -n 3 "$OUT/ctest.log" >&2
fi

if [[ -n ${BPROF_GPU_BEFORE_BENCH:-} ]]; then
  bash -c "$BPROF_GPU_BEFORE_BENCH"
fi

# the job, with --rows when given; the run's scratch (models, the original pipeline's checkpoints)
# on the build folder's disk, not a /tmp that may be memory
RUN="$(mktemp -d "$BUILD/bench.XXXXXX")"
trap 'rm -rf "$RUN"' EXIT
python3 - "$JOB" "$RUN/job.json" "$ROWS" <<'PY'
import json, sys
job = json.load(open(sys.argv[1]))
if sys.argv[3]:
    job["rows"] = sys.argv[3].split(",")
json.dump(job, open(sys.argv[2], "w"), indent=2)
PY
say "bprof-runner bench with $JOB${ROWS:+ (rows $ROWS)}"
# each event stamped with the seconds since the start ("t"), so that a run cut short still shows its
# pace, and with the clock's time ("wall"), to match samples of nvidia-smi taken beside it
"$RUNNER" bench --job "$RUN/job.json" --out "$RUN/out" --threads "$(nproc)" | python3 -u -c '
import json, sys, time
t0 = time.monotonic()
for line in sys.stdin:
    event = json.loads(line)
    event["t"] = round(time.monotonic() - t0, 3)
    event["wall"] = round(time.time(), 3)
    print(json.dumps(event), flush=True)
' >"$OUT/events.jsonl"
cp "$RUN/out/bench.json" "$OUT/bench.json.tmp" && mv "$OUT/bench.json.tmp" "$OUT/bench.json"
say "wrote $OUT/bench.json; here: npm run bench -- --gpu-bench <this folder>"
