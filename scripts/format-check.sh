#!/usr/bin/env bash
# `npm run format:check`: Prettier (.prettierrc.json) and clang-format (native-runner/.clang-format)
# over the files listed here, which already follow them. The list is not the whole codebase on
# purpose: reformatting every file at once would conflict with every branch in flight. Add a file
# once it is formatted (`npx prettier --write FILE`, `clang-format -i FILE`), e.g. when it is
# rewritten anyway; the list can become the whole tree once no long-lived branch is open.
set -euo pipefail
cd "$(dirname "$0")/.."

PRETTIER_FILES=(
  .prettierrc.json
  eslint.config.js
  src/core/config/nearest.ts
  src/core/datasets/jsonl.ts
  src/core/datasets/nearDuplicates.ts
  src/core/datasets/wordHashes.ts
  src/core/launch/targetTypes.ts
  src/core/report/types.ts
  src/extension/extensionId.ts
  test/e2e/install.ts
  test/support/safetensorsWriter.ts
  test/unit/jsonl.test.ts
)

CLANG_FORMAT_FILES=(
  native-runner/src/bench.h
  native-runner/src/cli.h
  native-runner/src/cmd_score.cpp
  native-runner/src/files.h
  native-runner/src/json_util.h
  native-runner/src/main.cpp
)

npx prettier --check "${PRETTIER_FILES[@]}"
if ! command -v clang-format >/dev/null; then
  echo "format:check: clang-format is not installed (Debian: apt-get install clang-format)" >&2
  exit 1
fi
clang-format --dry-run --Werror "${CLANG_FORMAT_FILES[@]}"
echo "format:check: ${#PRETTIER_FILES[@]} files follow Prettier, ${#CLANG_FORMAT_FILES[@]} follow clang-format"
