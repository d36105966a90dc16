import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { commandWords, INSTALL_HINT, Probes, resolveServerCommand, splitCommand, which } from '../../src/serverCommand';

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

function probes(over: Partial<Probes> & { onPath?: string[] }): Probes {
  return {
    which: (n) => (over.onPath?.includes(n) ? `/bin/${n}` : undefined),
    pythonInterpreter: over.pythonInterpreter ?? (async () => undefined),
    canImportHloLsp: over.canImportHloLsp ?? (async () => false),
  };
}

test('the default uses hlo-lsp from PATH first', async () => {
  const r = await resolveServerCommand('hlo-lsp', probes({ onPath: ['hlo-lsp'] }));
  assert.deepEqual(r, { kind: 'ok', command: '/bin/hlo-lsp', args: [], source: 'path' });
});

test('without hlo-lsp on PATH the Python extension interpreter runs the module', async () => {
  const r = await resolveServerCommand(undefined, probes({
    pythonInterpreter: async () => '/venv/bin/python',
    canImportHloLsp: async (p) => p === '/venv/bin/python',
  }));
  assert.deepEqual(r, { kind: 'ok', command: '/venv/bin/python', args: ['-m', 'hlo_lsp'], source: 'python' });
});

test('a missing server gives the install command', async () => {
  const r = await resolveServerCommand('hlo-lsp', probes({ pythonInterpreter: async () => '/usr/bin/python3' }));
  assert.equal(r.kind, 'missing');
  assert.ok(r.kind === 'missing' && r.message.includes(INSTALL_HINT) && r.message.includes('/usr/bin/python3'));
  assert.ok(INSTALL_HINT.includes('pip install hlo-lsp') && INSTALL_HINT.includes('pip install -e'));
});

test('an explicit command is used as given, or reported when absent', async () => {
  const ok = await resolveServerCommand(['python3', '-m', 'hlo_lsp'], probes({ onPath: ['python3'] }));
  assert.deepEqual(ok, { kind: 'ok', command: 'python3', args: ['-m', 'hlo_lsp'], source: 'setting' });
  const missing = await resolveServerCommand('/nowhere/hlo-lsp --stdio', probes({}));
  assert.ok(missing.kind === 'missing' && missing.message.includes('/nowhere/hlo-lsp'));
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
