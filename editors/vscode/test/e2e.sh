#!/usr/bin/env bash
# End-to-end test of the extension in real VS Code: code-server 4.99.4 (VS Code 1.99.3) driven by playwright-core
# with Debian's Chromium, headless. Installs what it needs (apt: chromium; npm: code-server into a cache outside
# the tree, the extension's dev dependencies), builds and installs the .vsix, opens a copy of a real dump folder
# and checks what a user sees (language switching, colouring, hover, F12, squiggles). Screenshots go to
# test/screenshots/. Prints one PASS/FAIL line per step and "N passed, N failed"; exits 1 on any failure.
#   HLO_E2E_CACHE=dir      where code-server is installed (default ~/.cache/hlo-lsp-e2e)
#   HLO_SERVER_COMMAND=... server command as a JSON array for hlo.server.command (default: the extension's own
#                          resolution: hlo-lsp on PATH)
#   HLO_E2E_KEEP=1         keep the temporary workspace and logs
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

# 4. The server: the extension finds hlo-lsp on PATH; install the repo's package if it is not there.
if [ -z "${HLO_SERVER_COMMAND:-}" ] && ! command -v hlo-lsp >/dev/null; then
  log "pip install -e $REPO (hlo-lsp is not on PATH)"
  python3 -m pip install -q -e "$REPO" >&2 || true
fi

# 5. A scratch workspace: a copy of a real dump folder, a seed with a plain name, a broken hand-written module.
WORK="$(mktemp -d /tmp/hlo-e2e.XXXXXX)"
WS="$WORK/cond_switch"
cp -r "$REPO/tests/data/jax-cpu/cond_switch" "$WS"
cp "$REPO/tests/data/seeds/000_45ad91e6d67cdb55.txt" "$WS/"
cp "$HERE/e2e-data/broken_by_hand.hlo" "$WS/"
mkdir -p "$WORK/data/User" "$WORK/extensions"
mkdir -p "$WS/.vscode" && echo '{}' > "$WS/.vscode/settings.json"
SERVER_SETTING=""
if [ -n "${HLO_SERVER_COMMAND:-}" ]; then SERVER_SETTING="\"hlo.server.command\": $HLO_SERVER_COMMAND,"; fi
cat > "$WORK/data/User/settings.json" <<JSON
{
  $SERVER_SETTING
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
  "editor.minimap.enabled": false,
  "editor.fontSize": 13,
  "chat.commandCenter.enabled": false
}
JSON
CS=(node "$CS_ENTRY" --user-data-dir "$WORK/data" --extensions-dir "$WORK/extensions")
"${CS[@]}" --install-extension "$VSIX" >"$WORK/install.log" 2>&1 || { cat "$WORK/install.log" >&2; exit 1; }

PORT="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
setsid "${CS[@]}" --auth none --bind-addr "127.0.0.1:$PORT" --disable-telemetry --disable-update-check \
  --disable-workspace-trust --disable-getting-started-override "$WS" >"$WORK/code-server.log" 2>&1 &
CS_PID=$!
cleanup() {
  kill -- "-$CS_PID" 2>/dev/null || kill "$CS_PID" 2>/dev/null || true
  wait "$CS_PID" 2>/dev/null || true
  if [ -n "${HLO_E2E_KEEP:-}" ]; then log "kept $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT
for _ in $(seq 1 60); do
  if curl -fs -o /dev/null "http://127.0.0.1:$PORT/healthz"; then break; fi
  sleep 0.5
done
log "code-server on port $PORT (pid $CS_PID), workspace $WS"

set +e
E2E_URL="http://127.0.0.1:$PORT/?folder=$WS" E2E_WORKSPACE="$WS" E2E_CHROMIUM="$CHROMIUM" \
  E2E_SCREENSHOTS="$HERE/screenshots" E2E_LOGS="$WORK" node "$HERE/e2e.mjs"
rc=$?
set -e
if [ $rc -ne 0 ]; then
  log "code-server log tail:"; tail -n 20 "$WORK/code-server.log" >&2
  EXTLOG="$(find "$WORK/data/logs" -name '*HLO Language Server*' 2>/dev/null | head -n 1)"
  if [ -n "$EXTLOG" ]; then log "extension output tail ($EXTLOG):"; tail -n 30 "$EXTLOG" >&2; fi
fi
exit $rc
