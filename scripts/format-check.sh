#!/usr/bin/env bash
# `npm run format:check` (and the first layer of `npm test`): every TypeScript and JavaScript file
# follows Prettier (.prettierrc.json) and every C++ file of the runner follows clang-format
# (native-runner/.clang-format). `--write` formats them instead.
set -euo pipefail
cd "$(dirname "$0")/.."

mode=check
[ "${1:-}" = "--write" ] && mode=write

mapfile -t prettier_files < <(git ls-files 'src/*.ts' 'test/*.ts' 'scripts/*.ts' 'scripts/*.mjs' 'webview/*.ts' '*.js' '*.mjs' .prettierrc.json)
mapfile -t cpp_files < <(git ls-files 'native-runner/src/*.cpp' 'native-runner/src/*.h' 'native-runner/tests/*.cpp' 'native-runner/tests/*.h' 'native-runner/fuzz/*.cpp')

if ! command -v clang-format >/dev/null; then
  echo "format: clang-format is not installed (Debian: apt-get install clang-format; scripts/setup.sh --test installs it)" >&2
  exit 1
fi
if [ "$mode" = write ]; then
  npx prettier --log-level warn --write "${prettier_files[@]}"
  clang-format -i "${cpp_files[@]}"
else
  npx prettier --log-level warn --check "${prettier_files[@]}"
  clang-format --dry-run --Werror "${cpp_files[@]}"
fi
echo "format: ${#prettier_files[@]} files follow Prettier, ${#cpp_files[@]} follow clang-format"
