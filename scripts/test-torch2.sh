#!/usr/bin/env bash
# The runner's golden tests against the libtorch inside a pip-installed PyTorch 2.x (what GPU hosts
# have), beside CI's Debian libtorch 1.13: builds the runner against .venv-parity's torch into
# native-runner/build-torch2 and runs the tests that compare it with transformers (every family:
# score, profile, generate) and the all-layer and mixture-of-experts runs with that build.
# Not part of `npm test`: a second runner build costs CI about as long as the first.
#   bash scripts/test-torch2.sh [TEST_FILE...]
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/parity-env.sh
python=.venv-parity/bin/python
[ -x "$python" ] || { echo "test-torch2: no .venv-parity (scripts/parity-env.sh could not make it): nothing to test" >&2; exit 1; }
prefix=$("$python" -c 'import torch; print(torch.utils.cmake_prefix_path)')
build=native-runner/build-torch2

cmake -S native-runner -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$build" --target bprof-runner -j"$(nproc)"
"$build/bprof-runner" --version

tests=("$@")
[ ${#tests[@]} -gt 0 ] || tests=(test/integration/transformersParity.test.ts test/integration/allLayerParity.test.ts test/integration/moeTrainProfile.test.ts)
BPROF_TEST_RUNNER="$PWD/$build/bprof-runner" node --import tsx --test "${tests[@]}"
