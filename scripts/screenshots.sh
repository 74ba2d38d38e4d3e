#!/usr/bin/env bash
# Remakes the README's pictures from the end-to-end test that profiles the demo in code-server
# (test/e2e/runs.test.ts), so they show the product as it is:
#   media/screenshot-results.png  the results view of a demo run, its AIS heatmap in full
#   media/screenshot-case.png     a benchmark's data file with the documents behind a negative AIS
#                                 marked, one case's hover open
# Both are the test's light-theme shots, the theme a Marketplace page is shown in. The copies are
# shrunk with pngquant and optipng when those are installed (Debian packages of the same names);
# without them the test's PNGs are copied as they are.
#   bash scripts/screenshots.sh          (npm run screenshots; about 12 minutes on 2 cores)
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf 'screenshots: %s\n' "$*"; }

# code-server and Chromium (installed when missing), the bundles and the .vsix the test installs.
# The runner is setup.sh's (npm run setup); the test says so when it is missing.
bash scripts/e2e-install.sh >/dev/null
node scripts/build.mjs
npm run --silent package >/dev/null

say "running test/e2e/runs.test.ts (the demo in code-server; several minutes)"
node --import tsx --test test/e2e/runs.test.ts

shots=(
  "test-results/e2e-runs-heatmap-light.png:media/screenshot-results.png"
  "test-results/e2e-runs-case-light.png:media/screenshot-case.png"
)
for pair in "${shots[@]}"; do
  from="${pair%%:*}"
  to="${pair#*:}"
  test -f "$from" || { echo "screenshots: $from is missing after the test" >&2; exit 1; }
  cp "$from" "$to"
  # pngquant's palette keeps a UI's few colours without a visible difference, at a third to half the size.
  if command -v pngquant >/dev/null; then
    pngquant --force --skip-if-larger --strip --quality 80-100 --output "$to" "$to" || true
  fi
  if command -v optipng >/dev/null; then
    optipng -quiet -o2 -strip all "$to"
  fi
  say "$to ($(du -k "$to" | cut -f1) KB)"
done
