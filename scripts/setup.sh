#!/usr/bin/env bash
# Idempotent set-up, run before `npm run demo` and `npm test`: Debian packages, npm packages,
# the runner build and the bundles. Each step is skipped when its result is already there.
#   scripts/setup.sh          what the demo needs
#   scripts/setup.sh --test   also what the tests need (Chromium, code-server and its build deps,
#                             sshd, Slurm, Python for task helpers)
#   scripts/setup.sh --bench  also what `npm run bench` needs (Debian's python3-torch, the Python reference)
set -euo pipefail
cd "$(dirname "$0")/.."

for_tests=false
for_bench=false
[ "${1:-}" = "--test" ] && for_tests=true
[ "${1:-}" = "--bench" ] && for_bench=true

say() { printf 'setup: %s\n' "$*"; }

# 1. Debian packages. The runner builds against Debian's libtorch (CPU); the E2E tests drive
#    Debian's Chromium and build code-server's native modules.
#    libopenblas0-openmp: Debian's libtorch does its matrix products through the libblas.so.3
#    alternative, which is the netlib reference BLAS unless an optimized one is installed; OpenBLAS
#    (its OpenMP build, the threading libtorch itself uses) is over ten times faster here.
packages=(cmake ninja-build g++ libtorch-dev nlohmann-json3-dev libgtest-dev libopenblas0-openmp)
#    The remote-target tests run a real sshd on 127.0.0.1 and real Slurm daemons (with munge) on
#    this machine.
#    python3 runs the `!function` helpers of lm-eval task files; python3-numpy is what
#    truthfulqa's process_results computes with; python3-venv holds the parity suite's lm-eval and
#    transformers (step 6). clang-format checks the runner's formatting. ccache: the tests build the
#    runner from its bundled sources as a user's machine, an SSH host and a Slurm node each do
#    (build-runner.sh uses ccache where it is installed), so the compile is paid once per run.
$for_tests && packages+=(chromium libkrb5-dev libx11-dev libxkbfile-dev libsecret-1-dev openssh-client openssh-server slurm-wlm munge python3 python3-numpy python3-venv clang-format ccache)
$for_bench && packages+=(python3-torch python3-numpy)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  say "installing Debian packages: ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# 2. npm packages, reinstalled when package-lock.json changed since the last install.
lock_hash=$(sha256sum package-lock.json | cut -d' ' -f1)
stamp=node_modules/.bprof-lock-sha256
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$lock_hash" ]; then
  say "installing npm packages (npm ci)"
  npm ci --no-audit --no-fund --loglevel=error
  echo "$lock_hash" > "$stamp"
fi

# 3. The runner (incremental: ninja rebuilds only what changed). Through ccache where it is
#    installed (the tests install it), with the command lines build-runner.sh compiles, so that
#    the tests' builds of the bundled sources find every file compiled already.
launcher=()
if command -v ccache >/dev/null 2>&1; then
  export CCACHE_DIR="${CCACHE_DIR:-$HOME/.cache/ccache}" CCACHE_BASEDIR="$PWD/native-runner"
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
if [ ! -f native-runner/build/build.ninja ]; then
  say "configuring bprof-runner"
  cmake -S native-runner -B native-runner/build -G Ninja -DCMAKE_BUILD_TYPE=Release "${launcher[@]}" >/dev/null
fi
say "building bprof-runner"
cmake --build native-runner/build -j "$(nproc)" | grep -vE '^\[[0-9]+/[0-9]+\]' || true
test -x native-runner/build/bprof-runner || { echo "setup: the runner build failed" >&2; exit 1; }

# 4. Bundles.
node scripts/build.mjs

# 5. For the E2E tests: code-server and Node 24 in .vscode-test/, the extension packaged.
if $for_tests; then
  bash scripts/e2e-install.sh
  npx vsce package --no-dependencies --no-rewrite-relative-links --allow-missing-repository --out dist/benchmark-profiler.vsix < /dev/null >/dev/null
fi
# 6. For the parity tests: lm-eval and transformers themselves, in .venv-parity/ (skipped, with
#    the reason, where pip cannot reach them).
$for_tests && bash scripts/parity-env.sh
say "ready"
