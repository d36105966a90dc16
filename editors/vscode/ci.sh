#!/usr/bin/env bash
# Builds the VS Code extension from a clean checkout and runs its offline tests:
#   npm ci (from the committed package-lock.json), type check + esbuild bundle, unit tests (node:test),
#   TextMate grammar tests (vscode-tmgrammar-test over real dump lines), grammar coverage over tests/data,
#   then packages hlo-lsp.vsix with vsce, which bundles the server and its pure-Python dependencies into
#   bundled/libs first (scripts/bundle-server.sh, pip install --target; needs python3 3.10+ with pip).
# The code-server end-to-end test is separate: test/e2e.sh.
set -euo pipefail
cd "$(dirname "$0")"
export npm_config_audit=false npm_config_fund=false npm_config_update_notifier=false
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "node and npm are needed (apt-get install nodejs npm)" >&2
  exit 1
fi
echo "== npm ci"
npm ci --no-audit --no-fund
echo "== build"
npm run --silent compile
echo "== unit tests"
npm run --silent test:unit
echo "== grammar tests"
npm run --silent test:grammar
echo "== grammar coverage over tests/data"
node test/grammar/coverage.mjs
echo "== package (bundles the server: scripts/bundle-server.sh)"
npm run --silent package
ls -l hlo-lsp.vsix
# the .vsix carries the launcher, the server with its grammar, and every dependency it imports
listing="$(npx --no-install vsce ls --no-dependencies)"
for f in bundled/tool/hlo_lsp_server.py bundled/libs/hlo_lsp/__main__.py bundled/libs/hlo_lsp/_grammar/hlo.lark \
         bundled/libs/pygls/__init__.py bundled/libs/lsprotocol/types.py bundled/libs/lark/__init__.py \
         bundled/libs/cattrs/__init__.py bundled/libs/attrs/__init__.py bundled/libs/typing_extensions.py \
         bundled/libs/exceptiongroup/__init__.py; do
  grep -qx "$f" <<<"$listing" || { echo "hlo-lsp.vsix lacks $f" >&2; exit 1; }
done
if grep -q "__pycache__\|^bundled/libs/bin/" <<<"$listing"; then echo "hlo-lsp.vsix carries caches or scripts" >&2; exit 1; fi
# the bundled server answers initialize with no hlo-lsp installed: python3 -I ignores user site-packages
python3 - <<'PY'
import json, subprocess
msgs = [{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}},
        {"jsonrpc": "2.0", "method": "exit"}]
payload = "".join(f"Content-Length: {len(m)}\r\n\r\n{m}" for m in map(json.dumps, msgs))
r = subprocess.run(["python3", "-I", "-S", "-B", "bundled/tool/hlo_lsp_server.py"], input=payload, capture_output=True,
                   text=True, timeout=120)
assert '"hoverProvider":true' in r.stdout.replace(" ", ""), (r.stdout[:300], r.stderr[-800:])
print("bundled server (python3 -I -S -B: no site-packages at all) answers initialize")
PY
echo "vscode extension: ok"
