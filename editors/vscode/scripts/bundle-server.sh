#!/usr/bin/env bash
# Bundles the language server into the extension: the hlo-lsp package of this clone and its pure-Python
# dependencies (pygls, lsprotocol, lark, cattrs, attrs, ...) under bundled/libs, as Microsoft's Python tools
# extension template does, so the .vsix works with nothing pip-installed (bundled/tool/hlo_lsp_server.py puts
# bundled/libs first on sys.path and runs the server with any Python 3.10+). Run by `npm run bundle-server` and
# by vsce before packaging (vscode:prepublish). bundled/libs is made here, never committed.
#   PYTHON=...   the Python whose pip builds the bundle (default python3; 3.10+ with pip)
set -euo pipefail
cd "$(dirname "$0")/.."
REPO="$(cd ../.. && pwd)"
PY="${PYTHON:-python3}"
if ! "$PY" -c 'import sys; sys.exit(sys.version_info < (3, 10))' 2>/dev/null || ! "$PY" -m pip --version >/dev/null 2>&1; then
  echo "bundle-server: needs Python 3.10+ with pip as \$PYTHON or python3 (apt-get install python3-pip)" >&2
  exit 1
fi
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
export PIP_DISABLE_PIP_VERSION_CHECK=1
"$PY" -m pip wheel -q --no-deps -w "$TMP/wheel" "$REPO"
# Wheels for the oldest Python the server supports and any platform: every dependency is pure Python, so the
# bundle runs on every 3.10+ interpreter. pip evaluates markers for the building interpreter, not for
# --python-version, so what 3.10 alone needs is named here: cattrs imports exceptiongroup below 3.11.
rm -rf bundled/libs
"$PY" -m pip install -q --target bundled/libs --no-compile --only-binary=:all: --implementation py \
  --python-version 3.10 --abi none --platform any "$TMP"/wheel/hlo_lsp-*.whl 'exceptiongroup>=1.1.1'
rm -rf bundled/libs/bin # console scripts name the building interpreter; the launcher is bundled/tool
test -f bundled/libs/hlo_lsp/_grammar/hlo.lark
echo "bundle-server: $(ls bundled/libs | grep -c dist-info) packages in bundled/libs ($(du -sh bundled/libs | cut -f1))"
