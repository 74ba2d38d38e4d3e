#!/usr/bin/env bash
# Every test layer, fastest first; stops at the first layer that fails. The last lines printed
# are the test runners' own summaries.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== lint and types"
npx eslint .
npx tsc --noEmit -p .

echo "== runner (ctest)"
ctest --test-dir native-runner/build --output-on-failure

echo "== unit, integration and end-to-end (node:test)"
node --import tsx --test --test-reporter=spec \
  test/unit/*.test.ts test/integration/*.test.ts test/e2e/*.test.ts
