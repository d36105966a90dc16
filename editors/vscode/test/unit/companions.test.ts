// The `hlo-dump-info` language's file name patterns (package.json) against the real dump folders in
// tests/data/producers: every thunk sequence and config file XLA wrote there gets the language (so the server
// can say what it is), and no HLO or buffer file does. Expected kinds come from each file's name suffix.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

const ext = path.resolve(__dirname, '../../..');
const repo = path.resolve(ext, '../..');
const producers = path.join(repo, 'tests/data/producers');
const pkg = JSON.parse(fs.readFileSync(path.join(ext, 'package.json'), 'utf8'));

function patterns(id: string): RegExp[] {
  const lang = pkg.contributes.languages.find((l: { id: string }) => l.id === id);
  return (lang?.filenamePatterns ?? []).map(
    (g: string) => new RegExp('^' + g.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*') + '$'),
  );
}

function files(dir: string): string[] {
  const out: string[] = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...files(p));
    else out.push(p);
  }
  return out;
}

const COMPANION = /(thunk_sequence\w*\.txt|thunk_metadata\.txt|\.pbtxt|\.debug_options|(execution_options|hlo_module_config|target_arguments|transfer_stats|basic_compiler_metadata)\.txt)$/;

test('companion files of the producers get hlo-dump-info, dumps do not', () => {
  const info = patterns('hlo-dump-info');
  assert.ok(info.length >= 10);
  let companions = 0;
  for (const f of files(producers)) {
    const base = path.basename(f);
    if (!/^module_/.test(base)) continue;
    const want = COMPANION.test(base);
    assert.equal(info.some((r) => r.test(base)), want, base);
    companions += Number(want);
  }
  assert.ok(companions >= 10, `found ${companions} companion files under ${producers}`);
});
