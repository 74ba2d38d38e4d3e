#!/usr/bin/env bash
# Every test layer, fastest first; stops at the first layer that fails. The last lines printed
# are the test runners' own summaries.
set -euo pipefail
shopt -s globstar
cd "$(dirname "$0")/.."

echo "== lint, types and formatting"
npx eslint .
npx tsc --noEmit -p .
bash scripts/format-check.sh

log_dir=$(mktemp -d)
trap 'rm -rf "$log_dir"' EXIT

# One compiler cache for every build of the runner's sources the tests make (build-runner.sh), also
# in the sessions that move XDG_CACHE_HOME (code-server's, the SSH host's): ccache's own default
# folder, named so that it stays the same.
export CCACHE_DIR="${CCACHE_DIR:-$HOME/.cache/ccache}"

echo "== runner (ctest)"
ctest --test-dir native-runner/build --output-on-failure | tee "$log_dir/ctest.log"

echo "== unit, integration and end-to-end (node:test)"
node --import tsx --test --test-reporter=spec \
  test/unit/**/*.test.ts test/integration/*.test.ts test/e2e/*.test.ts | tee "$log_dir/node.log"

# The spec reporter lists failing `todo` tests (known gaps, reported but not failing) after its
# summary; close with one line that counts both runners, so the output ends with the totals.
ctest_total=$(sed -nE 's/.* tests passed, ([0-9]+) tests failed out of ([0-9]+).*/\2/p' "$log_dir/ctest.log")
ctest_failed=$(sed -nE 's/.* tests passed, ([0-9]+) tests failed out of ([0-9]+).*/\1/p' "$log_dir/ctest.log")
node_passed=$(sed -nE 's/^ℹ pass ([0-9]+)$/\1/p' "$log_dir/node.log")
node_failed=$(sed -nE 's/^ℹ fail ([0-9]+)$/\1/p' "$log_dir/node.log")
node_todo=$(sed -nE 's/^ℹ todo ([0-9]+)$/\1/p' "$log_dir/node.log")
echo "ctest and node:test together (${node_todo:-0} todo not counted):"
echo "tests: $((ctest_total - ctest_failed + node_passed)) passed, $((ctest_failed + node_failed)) failed"
