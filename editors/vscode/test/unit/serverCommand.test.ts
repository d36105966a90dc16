import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import {
  commandWords, INSTALL_HINT, Probes, PYTHON_HINT, resolveServerCommand, splitCommand, which,
} from '../../src/serverCommand';

test('splitCommand splits like a shell without expansion', () => {
  assert.deepEqual(splitCommand('hlo-lsp'), ['hlo-lsp']);
  assert.deepEqual(splitCommand('  python3  -m hlo_lsp '), ['python3', '-m', 'hlo_lsp']);
  assert.deepEqual(splitCommand('"/opt/my env/bin/python" -m hlo_lsp'), ['/opt/my env/bin/python', '-m', 'hlo_lsp']);
  assert.deepEqual(splitCommand("a 'b c' d\\ e \"\""), ['a', 'b c', 'd e', '']);
  assert.deepEqual(splitCommand('   '), []);
});

test('commandWords takes arrays as they are and drops blanks', () => {
  assert.deepEqual(commandWords(['/usr/bin/python3', '-m', 'hlo_lsp']), ['/usr/bin/python3', '-m', 'hlo_lsp']);
  assert.deepEqual(commandWords(['x', '', 3]), ['x']);
  assert.deepEqual(commandWords(undefined), []);
});

function probes(over: Partial<Probes> & { onPath?: string[]; python310?: string[] }): Probes {
  return {
    which: (n) => (over.onPath?.includes(n) ? `/bin/${n}` : undefined),
    pythonInterpreter: over.pythonInterpreter ?? (async () => undefined),
    canImportHloLsp: over.canImportHloLsp ?? (async () => false),
    isPython310: over.isPython310 ?? (async (p) => (over.python310 ?? []).includes(p)),
    bundledServer: over.bundledServer ?? (() => undefined),
  };
}

const LAUNCHER = '/ext/bundled/tool/hlo_lsp_server.py';

test('the default runs the bundled server with the Python extension interpreter first', async () => {
  const r = await resolveServerCommand('', probes({
    bundledServer: () => LAUNCHER, onPath: ['python3', 'hlo-lsp'],
    pythonInterpreter: async () => '/venv/bin/python', python310: ['/venv/bin/python', '/bin/python3'],
  }));
  assert.deepEqual(r, { kind: 'ok', command: '/venv/bin/python', args: [LAUNCHER], source: 'bundled' });
});

test('the bundled server runs with python3 on PATH when the selected interpreter is too old', async () => {
  const r = await resolveServerCommand(undefined, probes({
    bundledServer: () => LAUNCHER, onPath: ['python3'],
    pythonInterpreter: async () => '/old/python3.8', python310: ['/bin/python3'],
  }));
  assert.deepEqual(r, { kind: 'ok', command: '/bin/python3', args: [LAUNCHER], source: 'bundled' });
});

test('no Python 3.10+ for the bundled server: the message says what to install, and names the setting', async () => {
  const r = await resolveServerCommand('', probes({ bundledServer: () => LAUNCHER, onPath: ['python3'] }));
  assert.equal(r.kind, 'missing');
  assert.ok(r.kind === 'missing' && r.message.includes('Python 3.10') && r.message.includes('/bin/python3') &&
    r.message.includes(PYTHON_HINT) && r.message.includes('hlo.server.command') && r.message.includes(INSTALL_HINT));
  assert.ok(!r.message.includes('pip install hlo-lsp'));
});

test('a build without the bundle uses hlo-lsp from PATH, else the interpreter that has the module', async () => {
  const onPath = await resolveServerCommand('', probes({ onPath: ['hlo-lsp'] }));
  assert.deepEqual(onPath, { kind: 'ok', command: '/bin/hlo-lsp', args: [], source: 'path' });
  const r = await resolveServerCommand(undefined, probes({
    pythonInterpreter: async () => '/venv/bin/python',
    canImportHloLsp: async (p) => p === '/venv/bin/python',
  }));
  assert.deepEqual(r, { kind: 'ok', command: '/venv/bin/python', args: ['-m', 'hlo_lsp'], source: 'python' });
  const missing = await resolveServerCommand('', probes({ pythonInterpreter: async () => '/usr/bin/python3' }));
  assert.ok(missing.kind === 'missing' && missing.message.includes(INSTALL_HINT) &&
    missing.message.includes('/usr/bin/python3'));
  assert.ok(INSTALL_HINT.includes('pipx install .') && INSTALL_HINT.includes('pip install .'));
});

test("an explicit command is the user's own server: used as given, or reported when absent", async () => {
  const ok = await resolveServerCommand(['python3', '-m', 'hlo_lsp'], probes({ onPath: ['python3'], bundledServer: () => LAUNCHER }));
  assert.deepEqual(ok, { kind: 'ok', command: 'python3', args: ['-m', 'hlo_lsp'], source: 'setting' });
  const own = await resolveServerCommand('hlo-lsp', probes({ onPath: ['hlo-lsp'], bundledServer: () => LAUNCHER }));
  assert.deepEqual(own, { kind: 'ok', command: 'hlo-lsp', args: [], source: 'setting' });
  const missing = await resolveServerCommand('/nowhere/hlo-lsp --stdio', probes({ bundledServer: () => LAUNCHER }));
  assert.ok(missing.kind === 'missing' && missing.message.includes('/nowhere/hlo-lsp') &&
    missing.message.includes('bundled'));
});

test('which finds executables on PATH and ignores plain files', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hlo-which-'));
  try {
    fs.writeFileSync(path.join(dir, 'tool'), '#!/bin/sh\n', { mode: 0o755 });
    fs.writeFileSync(path.join(dir, 'data'), 'x', { mode: 0o644 });
    assert.equal(which('tool', { PATH: dir }), path.join(dir, 'tool'));
    assert.equal(which('data', { PATH: dir }), undefined);
    assert.equal(which('absent', { PATH: dir }), undefined);
    assert.equal(which(path.join(dir, 'tool'), { PATH: '' }), path.join(dir, 'tool'));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
