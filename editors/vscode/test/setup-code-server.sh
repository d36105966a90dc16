#!/usr/bin/env bash
# Installs code-server 4.99.4 (VS Code 1.99.3, the last line that runs on node 20) from the npm registry into a
# cache directory outside the work tree, without its postinstall (which downloads ripgrep from the internet).
# Idempotent: a marker file records a finished install. Prints the install directory on the last line.
# The recipe was found by trying each step offline: see EDITOR-TESTING.md (shared notes).
set -euo pipefail
CACHE="${HLO_E2E_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hlo-lsp-e2e}"
VERSION=4.99.4
DIR="$CACHE/code-server-$VERSION"
MARKER="$DIR/.hlo-e2e-ready"
log() { echo "[setup] $*" >&2; }

need_apt=()
command -v rg >/dev/null || need_apt+=(ripgrep)
command -v g++ >/dev/null || need_apt+=(g++)
command -v make >/dev/null || need_apt+=(make)
[ -e /usr/include/krb5.h ] || [ -e /usr/include/gssapi/gssapi.h ] || need_apt+=(libkrb5-dev)
if [ ${#need_apt[@]} -gt 0 ]; then
  log "apt-get install ${need_apt[*]}"
  apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >&2
fi

if [ -f "$MARKER" ]; then echo "$DIR"; exit 0; fi
log "installing code-server $VERSION into $DIR (about a minute with a warm npm cache)"
rm -rf "$DIR" && mkdir -p "$DIR"
cd "$DIR"
echo '{"name":"hlo-e2e-code-server","private":true}' > package.json
npm install --no-audit --no-fund --ignore-scripts "code-server@$VERSION" >&2
npm rebuild argon2 >&2
CS="$DIR/node_modules/code-server"
(cd "$CS/lib/vscode" && npm install --no-audit --no-fund --omit=dev --ignore-scripts >&2)
mkdir -p "$CS/lib/vscode/node_modules/@vscode/ripgrep/bin"
ln -sf "$(command -v rg)" "$CS/lib/vscode/node_modules/@vscode/ripgrep/bin/rg"
(cd "$CS/lib/vscode" && npm_config_yes=true npm rebuild >&2)
(cd "$CS/lib/vscode" && ln -sfn node_modules node_modules.asar)
(cd "$CS/lib/vscode/bin/remote-cli" && ln -sf code-linux.sh code-server)
(cd "$CS/lib/vscode/bin/helpers" && ln -sf browser-linux.sh browser.sh)
(cd "$CS/lib/vscode/extensions" && npm install --no-audit --no-fund --omit=dev >&2)
touch "$MARKER"
log "code-server ready"
echo "$DIR"
