// Test stub for the Python extension's public API (the subset hlo-lsp uses): environments.getActiveEnvironmentPath
// and environments.resolveEnvironment, as documented for @vscode/python-extension. The interpreter is the one
// e2e.sh found; it is written into interpreter.txt beside this file before packaging.
const fs = require('fs');
const path = require('path');
const vscode = require('vscode');

function activate() {
  const python = fs.readFileSync(path.join(__dirname, 'interpreter.txt'), 'utf8').trim();
  return {
    environments: {
      getActiveEnvironmentPath: () => ({ id: python, path: python }),
      resolveEnvironment: async () => ({ id: python, path: python, executable: { uri: vscode.Uri.file(python) } }),
    },
  };
}
module.exports = { activate, deactivate() {} };
