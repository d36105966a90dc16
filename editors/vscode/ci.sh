#!/usr/bin/env bash
# Builds the VS Code extension from a clean checkout and runs its offline tests:
#   npm ci (from the committed package-lock.json), type check + esbuild bundle, unit tests (node:test),
#   TextMate grammar tests (vscode-tmgrammar-test over real dump lines), grammar coverage over tests/data,
#   then packages hlo-lsp.vsix with vsce (no network).
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
echo "== package"
npm run --silent package
ls -l hlo-lsp.vsix
npx --no-install vsce ls --no-dependencies >/dev/null
echo "vscode extension: ok"
