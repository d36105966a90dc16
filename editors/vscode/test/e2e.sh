#!/usr/bin/env bash
# End-to-end test of the extension in real VS Code: code-server 4.99.4 (VS Code 1.99.3) driven by playwright-core
# with Debian's Chromium, headless. Installs what it needs (apt: chromium; npm: code-server into a cache outside
# the tree, the extension's dev dependencies), builds and installs the .vsix (which bundles the server), opens a
# copy of a real dump folder and checks what a user sees (language switching, colouring, hover, F12, squiggles).
# No hlo-lsp is on PATH and nothing is pip-installed: the server is the one in the .vsix. Screenshots go to
# test/screenshots/. Prints one PASS/FAIL line per step and "N passed, N failed"; exits 1 on any failure.
#   HLO_E2E_CACHE=dir      where code-server is installed (default ~/.cache/hlo-lsp-e2e)
#   HLO_SERVER_COMMAND=... server command as a JSON array for hlo.server.command (default: none, the server
#                          bundled in the .vsix, run by python3 on PATH)
#   HLO_E2E_KEEP=1         keep the temporary workspace and logs
#   HLO_E2E_SESSIONS="..." run only these sessions (main, python-fallback, large; default: all)
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
EXT="$(dirname "$HERE")"
REPO="$(cd "$EXT/../.." && pwd)"
log() { echo "[e2e] $*" >&2; }
export npm_config_audit=false npm_config_fund=false npm_config_update_notifier=false

# 1. Browser.
CHROMIUM="${CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}"
if [ -z "$CHROMIUM" ]; then
  log "apt-get install chromium"
  apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium fonts-dejavu-core >&2
  CHROMIUM="$(command -v chromium)"
fi

# 2. code-server.
CS_DIR="$(bash "$HERE/setup-code-server.sh" | tail -n 1)"
CS_ENTRY="$CS_DIR/node_modules/code-server/out/node/entry.js"
[ -f "$CS_ENTRY" ] || { log "code-server missing at $CS_ENTRY"; exit 1; }

# 3. The extension.
cd "$EXT"
if [ ! -d node_modules/playwright-core ] || [ ! -d node_modules/vscode-languageclient ]; then npm ci >&2; fi
npm run --silent compile >&2
npm run --silent package >&2
VSIX="$EXT/hlo-lsp.vsix"

# 4. The server: the one bundled in the .vsix. PATH without any folder that holds hlo-lsp, so that a server
#    installed on this machine cannot stand in for it; python3 there runs it.
BARE_PATH=""
IFS=: read -r -a dirs <<<"$PATH"
for d in "${dirs[@]}"; do
  [ -n "$d" ] && [ ! -x "$d/hlo-lsp" ] && BARE_PATH="${BARE_PATH:+$BARE_PATH:}$d"
done
if ! PATH="$BARE_PATH" python3 -c 'import sys; sys.exit(sys.version_info < (3, 10))'; then
  log "python3 (3.10+) is needed on PATH to run the bundled server"; exit 1
fi

# 5. A scratch workspace: a copy of a real dump folder, a seed with a plain name, a broken hand-written module.
WORK="$(mktemp -d /tmp/hlo-e2e.XXXXXX)"
WS="$WORK/cond_switch"
cp -r "$REPO/tests/data/jax-cpu/cond_switch" "$WS"
cp "$REPO/tests/data/seeds/000_45ad91e6d67cdb55.txt" "$WS/"
cp "$HERE/e2e-data/broken_by_hand.hlo" "$WS/"
# a TPU out-of-memory report saved as a plain .log beside the dump of its compilation (in a folder of its own)
mkdir -p "$WS/oom_dump" && cp "$REPO"/tests/data/oom/long_1dev/*after_optimizations* "$WS/oom_dump/"
cp "$REPO/tests/data/oom/long_1dev/oom-long-1dev.log" "$WS/train-oom.log"
# a pass-by-pass dump (--xla_dump_hlo_pass_re=.*) in a folder of its own
cp -r "$REPO/tests/data/passes/mlp_sgd" "$WS/passes"
mkdir -p "$WS/.vscode" && echo '{}' > "$WS/.vscode/settings.json"

# code-server sessions: one user-data dir and extensions dir each; all killed on exit (process groups we made).
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill -- "-$pid" 2>/dev/null || kill "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  if [ -n "${HLO_E2E_KEEP:-}" ]; then log "kept $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT

# session NAME SERVER_SETTING_JSON PATH VSIX... : installs the extensions, starts code-server, runs e2e.mjs in
# mode NAME ("main" or "python-fallback"), stops code-server. Adds to PASSED/FAILED.
PASSED=0; FAILED=0
session() {
  local name="$1" server_setting="$2" path_env="$3"; shift 3
  if [ -n "${HLO_E2E_SESSIONS:-}" ] && [[ " $HLO_E2E_SESSIONS " != *" $name "* ]]; then log "$name: skipped"; return; fi
  local data="$WORK/$name/data" exts="$WORK/$name/extensions" ws="${SESSION_WS:-$WS}"
  mkdir -p "$data/User" "$exts"
  cat > "$data/User/settings.json" <<JSON
{
  $server_setting
  "workbench.startupEditor": "none",
  "workbench.colorTheme": "Default Dark Modern",
  "workbench.tips.enabled": false,
  "workbench.enableExperiments": false,
  "security.workspace.trust.enabled": false,
  "telemetry.telemetryLevel": "off",
  "update.mode": "none",
  "extensions.autoUpdate": false,
  "extensions.autoCheckUpdates": false,
  "extensions.ignoreRecommendations": true,
  "editor.hover.delay": 300,
  "workbench.editorLargeFileConfirmation": 100,
  "editor.minimap.enabled": false,
  "editor.fontSize": 13,
  "chat.commandCenter.enabled": false
}
JSON
  local cs=(node "$CS_ENTRY" --user-data-dir "$data" --extensions-dir "$exts")
  for vsix in "$@"; do
    "${cs[@]}" --install-extension "$vsix" >>"$WORK/$name/install.log" 2>&1 || { cat "$WORK/$name/install.log" >&2; exit 1; }
  done
  local port
  port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
  mkdir -p "$WORK/$name/tmp" # code-server's sockets (ipc, git) go there, and away with $WORK
  # The extension host takes PATH from a login shell of $HOME (VS Code resolves the user's shell environment):
  # the fallback session gets an empty home, so no shell profile puts hlo-lsp back on PATH.
  local home="$HOME"
  if [ "$name" != main ]; then home="$WORK/$name/home"; mkdir -p "$home"; fi
  HOME="$home" TMPDIR="$WORK/$name/tmp" PATH="$path_env" setsid "${cs[@]}" --auth none --bind-addr "127.0.0.1:$port" --disable-telemetry \
    --disable-update-check --disable-workspace-trust --disable-getting-started-override "$ws" \
    >"$WORK/$name/code-server.log" 2>&1 &
  local pid=$!
  PIDS+=("$pid")
  for _ in $(seq 1 60); do
    if curl -fs -o /dev/null "http://127.0.0.1:$port/healthz"; then break; fi
    sleep 0.5
  done
  log "$name: code-server on port $port (pid $pid)"
  local rc=0
  E2E_PYTHON="${E2E_PYTHON:-}" E2E_ONLY="$([ "$name" = main ] || echo "$name")" E2E_URL="http://127.0.0.1:$port/?folder=$ws" \
    E2E_WORKSPACE="$ws" E2E_CHROMIUM="$CHROMIUM" E2E_SCREENSHOTS="$HERE/screenshots" E2E_USER_DATA="$data" \
    E2E_RESULTS="$WORK/$name/results.json" node "$HERE/e2e.mjs" || rc=$?
  kill -- "-$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  if [ -f "$WORK/$name/results.json" ]; then
    PASSED=$((PASSED + $(node -p "require('$WORK/$name/results.json').passed")))
    FAILED=$((FAILED + $(node -p "require('$WORK/$name/results.json').failed")))
  else
    FAILED=$((FAILED + 1))
  fi
  if [ $rc -ne 0 ]; then
    log "$name: code-server log tail:"; tail -n 20 "$WORK/$name/code-server.log" >&2
    local extlog
    extlog="$(find "$data/logs" -name 'HLO Language Server.log' 2>/dev/null | head -n 1)"
    if [ -n "$extlog" ]; then log "$name: extension output tail:"; tail -n 30 "$extlog" >&2; fi
  fi
}

SERVER_SETTING=""
if [ -n "${HLO_SERVER_COMMAND:-}" ]; then SERVER_SETTING="\"hlo.server.command\": $HLO_SERVER_COMMAND,"; fi
session main "$SERVER_SETTING" "$BARE_PATH" "$VSIX"

# 6. The Python extension's interpreter: a stand-in for the Python extension names a fresh venv's python (no
#    packages, so neither hlo_lsp nor pygls): the extension must run the bundled server with it.
STUB="$WORK/python-stub"
cp -r "$HERE/e2e-data/python-stub" "$STUB"
PATH="$BARE_PATH" python3 -m venv --without-pip "$WORK/bare-venv"
PY="$WORK/bare-venv/bin/python"
if "$PY" -c 'import hlo_lsp' 2>/dev/null || "$PY" -c 'import pygls' 2>/dev/null; then log "$PY is not bare"; exit 1; fi
echo "$PY" > "$STUB/interpreter.txt"
(cd "$STUB" && "$EXT/node_modules/.bin/vsce" package --no-dependencies --allow-missing-repository \
  --skip-license -o "$WORK/python-stub.vsix") >"$WORK/python-stub.log" 2>&1 \
  || { cat "$WORK/python-stub.log" >&2; exit 1; }
E2E_PYTHON="$PY" session python-fallback "" "$BARE_PATH" "$VSIX" "$WORK/python-stub.vsix"

# 7. Large files: a generated module over 20 MB and its values file over 10 MB (benchmarks/synth_buffers.py, from a
#    real dump in tests/data): colouring (the server's semantic tokens), hover, F12 and the outline there. VS Code
#    in a browser asks before it shows a file over 10 MB (F12 into the module too): the settings above raise that
#    limit to 100 MB, as a user who opens such dumps does ("Configure Limit").
LARGE="$WORK/large-set"
PATH="$BARE_PATH" python3 "$REPO/benchmarks/synth_buffers.py" "$LARGE" --size-mb 21 >&2
mkdir -p "$LARGE/.vscode" && echo '{}' > "$LARGE/.vscode/settings.json"
SESSION_WS="$LARGE" E2E_SERVER_WAIT_MS=120000 session large "$SERVER_SETTING" "$BARE_PATH" "$VSIX"

echo "e2e: $PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
