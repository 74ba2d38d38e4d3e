#!/bin/sh
# Builds bprof-runner from these sources on the machine that will run it, into a cache keyed by
# the sources, the libtorch and the compiler, so that a later run finds it at once. bprof and the
# VS Code extension send this script to the host (this machine, an SSH host, a Slurm login node or
# a Slurm job) and read the `@@bprof <fact> <value>` lines it prints; the build's own output goes
# between them, and to the log kept in the cache.
#
#   sh build-runner.sh where          what the build needs and finds; the cached runner, if any
#   sh build-runner.sh build          the same, then build unless cached (exit 3: something is missing)
#   sh build-runner.sh exec ARGS...   build unless cached, then run the runner with ARGS
#
# Environment:
#   BPROF_SOURCES        the runner's sources (default: this script's folder)
#   BPROF_SOURCES_HASH   their hash, computed by bprof (part of the cache key)
#   BPROF_RUNNER_CACHE   the cache (default: ${XDG_CACHE_HOME:-$HOME/.cache}/bprof/runner)
#   BPROF_TORCH_PREFIX   a libtorch to build against: its CMake prefix, or the folder holding
#                        TorchConfig.cmake; when unset it is looked for (see find_torch)
#   BPROF_PYTHON         the Python whose PyTorch comes first (default: python3)
#   BPROF_JOBS           parallel compile jobs (default: the cores)
#   CXX                  the C++ compiler (default: c++, g++ or clang++, the first found)
#   CCACHE_DIR, ...      ccache's own settings, where ccache is installed (BPROF_CCACHE=0: not used)
set -u

mode="${1:-where}"
[ $# -gt 0 ] && shift
here=$(cd "$(dirname "$0")" 2>/dev/null && pwd)
sources="${BPROF_SOURCES:-$here}"
sources_hash="${BPROF_SOURCES_HASH:-unknown}"
cache="${BPROF_RUNNER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/bprof/runner}"
python="${BPROF_PYTHON:-python3}"

# In exec mode stdout belongs to the runner (its events): facts and build output go to stderr.
if [ "$mode" = exec ]; then exec 3>&2; else exec 3>&1; fi
fact() { printf '@@bprof %s %s\n' "$1" "$2" >&3; }
missing=""
need() { missing="${missing:+$missing;}$1"; fact missing "$1"; }

# --- what this machine is, for the install commands bprof suggests ----------------------------
if [ -r /etc/os-release ]; then
  fact os "$(. /etc/os-release; printf '%s %s %s' "${ID:-linux}" "$(printf '%s' "${ID_LIKE:-}" | tr ' ' ',')" "${VERSION_ID:-}")"
else
  fact os "$(uname -s | tr 'A-Z' 'a-z')"
fi
fact arch "$(uname -m)"
fact uid "$(id -u)"
[ -n "${CONDA_PREFIX:-}" ] && fact conda "$CONDA_PREFIX"
fact cache "$cache"

# --- tools --------------------------------------------------------------------------------------
cmake_version=""
if command -v cmake >/dev/null 2>&1; then
  cmake_version=$(cmake --version 2>/dev/null | sed -n '1s/^cmake version //p')
  fact cmake "$(command -v cmake) $cmake_version"
  # find_package(Torch) and the project need CMake 3.18.
  if [ "$(printf '%s\n%s\n' 3.18 "$cmake_version" | sort -t. -k1,1n -k2,2n -k3,3n | head -n 1)" != 3.18 ]; then
    need "cmake>=3.18 (found $cmake_version)"
  fi
else
  need cmake
fi

cxx=""
for c in ${CXX:-} c++ g++ clang++; do
  if command -v "$c" >/dev/null 2>&1; then cxx=$(command -v "$c"); break; fi
done
if [ -n "$cxx" ]; then
  cxx_version=$("$cxx" --version 2>/dev/null | head -n 1)
  fact cxx "$cxx $cxx_version"
else
  cxx_version=""
  need c++
fi

if command -v ninja >/dev/null 2>&1; then
  generator=Ninja
elif command -v make >/dev/null 2>&1; then
  generator="Unix Makefiles"
else
  generator=""
  need make
fi
[ -n "$generator" ] && fact generator "$generator"

jobs="${BPROF_JOBS:-$(nproc 2>/dev/null || getconf _NPROCESSORS_ONLN 2>/dev/null || sysctl -n hw.ncpu 2>/dev/null || echo 2)}"
fact jobs "$jobs"

# --- libtorch -----------------------------------------------------------------------------------
# The folder holding TorchConfig.cmake under a prefix, a libtorch folder or a PyTorch package.
torch_config_in() {
  for d in "$1" "$1/share/cmake/Torch" "$1/lib/cmake/Torch" "$1"/lib/*/cmake/Torch; do
    if [ -f "$d/TorchConfig.cmake" ]; then (cd "$d" && pwd); return 0; fi
  done
  return 1
}

torch_dir=""
torch_from=""
find_torch() {
  if [ -n "${BPROF_TORCH_PREFIX:-}" ]; then
    # Named by the user: that one or none.
    torch_dir=$(torch_config_in "$BPROF_TORCH_PREFIX") && torch_from=BPROF_TORCH_PREFIX
    return
  fi
  # The PyTorch of the user's Python; the package's location is found without importing it.
  # `python -c` puts the working folder first on sys.path, and bprof starts in the user's
  # workspace: a torch/ folder there would be taken, and its CMake code run by the build. So
  # Python runs isolated (-I: no working folder, no PYTHON* variables, no user site), and gets
  # back what the user set up: PYTHONPATH's absolute folders outside the working folder, and the
  # user site (pip install --user); its own environment (a venv the user activated) it keeps. A
  # libtorch in the working folder itself is used when BPROF_TORCH_PREFIX names it.
  if command -v "$python" >/dev/null 2>&1; then
    package=$("$python" -I -c '
import importlib.util as u, os, site, sys
here = os.path.realpath(os.getcwd())
inside = lambda p: (os.path.realpath(p) + os.sep).startswith(here + os.sep)
named = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if os.path.isabs(p) and not inside(p)]
sys.path[:0] = named
user = site.getusersitepackages()
if isinstance(user, str) and user not in sys.path: sys.path.append(user)
s = u.find_spec("torch")
print(s.submodule_search_locations[0] if s and s.submodule_search_locations else "")' 2>/dev/null)
    if [ -n "$package" ] && torch_dir=$(torch_config_in "$package"); then torch_from="python $python"; return; fi
  fi
  # Conda environments: PyTorch's package, or conda-forge's libtorch in the environment itself.
  for root in "${CONDA_PREFIX:-}" "$HOME/miniconda3" "$HOME/anaconda3" "$HOME/miniforge3" "$HOME/mambaforge" /opt/conda; do
    [ -n "$root" ] && [ -d "$root" ] || continue
    for env in "$root" "$root"/envs/*; do
      [ -d "$env" ] || continue
      for candidate in "$env" "$env"/lib/python3*/site-packages/torch; do
        if [ -d "$candidate" ] && torch_dir=$(torch_config_in "$candidate"); then torch_from="conda $env"; return; fi
      done
    done
  done
  # The system's: Debian and Ubuntu's libtorch-dev, an unpacked libtorch, Homebrew's pytorch.
  for prefix in /usr /usr/local /opt/libtorch /usr/local/libtorch /opt/homebrew; do
    if torch_dir=$(torch_config_in "$prefix"); then torch_from=system; return; fi
  done
  torch_dir=""
}
find_torch

torch_version=""
if [ -n "$torch_dir" ]; then
  torch_version=$(sed -n 's/^ *set(PACKAGE_VERSION "\([^"]*\)").*/\1/p' "$torch_dir/TorchConfigVersion.cmake" 2>/dev/null | head -n 1)
  # The libraries sit two levels up (Debian: lib/<triplet>/cmake/Torch) or three (share/cmake/Torch).
  torch_cuda=no
  for lib in "$torch_dir/../.." "$torch_dir/../../../lib"; do
    ls "$lib"/libtorch_cuda.* >/dev/null 2>&1 && torch_cuda=yes
  done
  fact torch "$torch_dir"
  fact torch_version "${torch_version:-unknown}"
  fact torch_from "$torch_from"
  fact torch_cuda "$torch_cuda"
  if [ "$torch_cuda" = yes ]; then
    # A CUDA libtorch's CMake files look for the CUDA toolkit.
    if ! command -v nvcc >/dev/null 2>&1 && [ ! -x "${CUDA_HOME:-/usr/local/cuda}/bin/nvcc" ]; then need cuda-toolkit; fi
  fi
elif [ -n "${BPROF_TORCH_PREFIX:-}" ]; then
  need "libtorch (none at $BPROF_TORCH_PREFIX)"
else
  need libtorch
fi

# --- nlohmann-json (a header) -------------------------------------------------------------------
json_dir=""
for prefix in /usr /usr/local "${CONDA_PREFIX:-/nonexistent}" /opt/homebrew "${torch_dir:-/nonexistent}/../../.."; do
  if [ -f "$prefix/include/nlohmann/json.hpp" ]; then json_dir=$(cd "$prefix/include" && pwd); break; fi
done
if [ -n "$json_dir" ]; then fact json "$json_dir"; else need nlohmann-json; fi

# --- the cache key ------------------------------------------------------------------------------
sha256() { if command -v sha256sum >/dev/null 2>&1; then sha256sum; else shasum -a 256; fi; }
key=$(printf 'sources=%s\ntorch=%s %s\ncxx=%s %s\n' "$sources_hash" "$torch_dir" "$torch_version" "$cxx" "$cxx_version" | sha256 | cut -c1-16)
fact key "$key"
runner="$cache/$key/bprof-runner"
if [ -x "$runner" ]; then fact cached "$runner"; fi
last=$(ls -t "$cache"/*/info 2>/dev/null | head -n 1)
[ -n "$last" ] && fact last_seconds "$(sed -n 's/^seconds=//p' "$last")"

[ "$mode" = where ] && exit 0

# --- the build ----------------------------------------------------------------------------------
if [ ! -x "$runner" ]; then
  if [ -n "$missing" ]; then
    printf 'bprof: cannot build bprof-runner on %s: missing %s\n' "$(uname -n)" "$missing" >&2
    exit 3
  fi
  mkdir -p "$cache" || exit 5
  work="$cache/$key.build-$$"
  log="$work/build.log"
  rm -rf "$work" && mkdir -p "$work" || exit 5
  fact work "$work"
  started=$(date +%s)
  step=""
  # Runs one step into the log and onto the output; a failed step keeps the log and says which.
  run_step() {
    step="$1"
    shift
    fact step "$step"
    { "$@" 2>&1; echo "$?" >"$work/status"; } | tee -a "$log" >&3
    if [ "$(cat "$work/status")" != 0 ]; then
      kept="$cache/failed-$key.log"
      mv -f "$log" "$kept"
      rm -rf "$work"
      fact failed "$step"
      fact log "$kept"
      exit 4
    fi
  }
  # The sources are copied into the work folder, the build beside them in build/, so that every
  # build compiles the same command lines wherever the sources came from (a checkout's
  # native-runner/build too). With ccache (when installed) relative to the work folder, a build of
  # other sources then recompiles only the files that changed: a new version of bprof, or the same
  # sources built again under another cache, takes seconds instead of minutes.
  cp -R "$sources/CMakeLists.txt" "$sources/src" "$work/" || exit 5
  launcher=""
  if [ "${BPROF_CCACHE:-1}" != 0 ] && command -v ccache >/dev/null 2>&1; then
    launcher="-DCMAKE_CXX_COMPILER_LAUNCHER=ccache"
    export CCACHE_BASEDIR="$work"
    fact ccache "$(command -v ccache)"
  fi
  run_step configure cmake -S "$work" -B "$work/build" -G "$generator" -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF \
    -DTorch_DIR="$torch_dir" -DNLOHMANN_JSON_INCLUDE_DIR="$json_dir" -DCMAKE_CXX_COMPILER="$cxx" $launcher
  run_step compile cmake --build "$work/build" --target bprof-runner -j "$jobs"
  run_step check "$work/build/bprof-runner" --version
  mkdir -p "$cache/$key" &&
    cp "$work/build/bprof-runner" "$runner.$$" &&
    mv -f "$runner.$$" "$runner" &&
    printf 'sources=%s\ntorch=%s %s\ncxx=%s %s\nseconds=%s\nbuilt=%s\n' "$sources_hash" "$torch_dir" "$torch_version" "$cxx" "$cxx_version" \
      "$(($(date +%s) - started))" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" >"$cache/$key/info" &&
    mv -f "$log" "$cache/$key/build.log" || exit 5
  rm -rf "$work" "$cache/failed-$key.log"
  # Builds of other sources are of other versions of bprof: gone. Builds abandoned a day ago too.
  for info in "$cache"/*/info; do
    [ -f "$info" ] || continue
    grep -qx "sources=$sources_hash" "$info" || rm -rf "$(dirname "$info")"
  done
  find "$cache" -maxdepth 1 -name '*.build-*' -mmin +1440 -exec rm -rf {} + 2>/dev/null
  fact built "$runner"
  fact seconds "$(($(date +%s) - started))"
fi

fact runner "$runner"
[ "$mode" = exec ] && exec "$runner" "$@"
exit 0
