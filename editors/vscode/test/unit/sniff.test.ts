// First-line sniffing over every real dump in tests/data/{seeds,jax-cpu}: the expected language comes from the file's name
// (the corpus suffixes) or from what the body holds (seeds), never from the sniffer itself.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { sniffLanguage, sniffOom, SNIFF_LINES } from '../../src/sniff';

const repo = path.resolve(__dirname, '../../../../..');
const data = path.join(repo, 'tests/data');

function expectedFromName(file: string, text: string): string | undefined {
  const base = path.basename(file);
  if (/-(buffer-assignment|buffer-assignment-values|live-range|memory-usage-report)\.txt$/.test(base)) return 'hlo-buffers';
  if (/(before|after)_optimizations\.txt$/.test(base)) return 'hlo';
  if (/^\s*allocation \d+: /m.test(text)) return 'hlo-buffers';
  if (/^\s*ROOT %?[\w.\-]+ = /m.test(text)) return 'hlo';
  return undefined;
}

function realDumps(): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.txt')) out.push(p);
    }
  };
  // Only real dumps: other folders under tests/data hold hand-made and deliberately broken files.
  for (const d of ['seeds', 'jax-cpu']) if (fs.existsSync(path.join(data, d))) walk(path.join(data, d));
  return out.sort();
}

test('every real dump in tests/data is sniffed as its kind', () => {
  const files = realDumps();
  assert.ok(files.length >= 100, `expected the corpus copy in ${data}, found ${files.length} files`);
  let checked = 0;
  for (const file of files) {
    const text = fs.readFileSync(file, 'utf8');
    const want = expectedFromName(file, text);
    if (!want) continue;
    assert.equal(sniffLanguage(text.split('\n').slice(0, SNIFF_LINES)), want, path.relative(repo, file));
    checked++;
  }
  assert.ok(checked >= 100, `checked ${checked}`);
});

test('the values file starts with a blank line and is still recognised', () => {
  assert.equal(sniffLanguage(['', 'Total bytes used: 65669 (64.1KiB)', '']), 'hlo-buffers');
  assert.equal(sniffLanguage(['\uFEFFHloModule m, is_scheduled=true']), 'hlo');
});

test('text that is not a dump is left alone', () => {
  assert.equal(sniffLanguage([]), undefined);
  assert.equal(sniffLanguage(['', '', '']), undefined);
  assert.equal(sniffLanguage(['Some notes about HloModule ', 'BufferAssignment:']), undefined);
  assert.equal(sniffLanguage(['HloModuleX']), undefined);
  assert.equal(sniffLanguage(['', '', '', '', '', 'HloModule late']), undefined);
});

test('a real out-of-memory report is found anywhere in a log, and no real dump is taken for one', () => {
  const oom = path.join(data, 'oom');
  const logs = fs.existsSync(oom)
    ? fs.readdirSync(oom, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.log') || f.endsWith('oom_top_memory_consuming_instructions'))
    : [];
  assert.ok(logs.length >= 4, `expected the OOM reports of tests/data/oom, found ${logs.length}`);
  for (const f of logs) {
    const text = fs.readFileSync(path.join(oom, f), 'utf8');
    assert.ok(sniffOom(text), f);
    const noise = Array.from({ length: 80 }, (_, i) => `I1124 07:00:00 trainer.py:${i}] step ${i} loss 0.5`).join('\n');
    // the message is what gets pasted into a log; the dump's own copy (oom_top_...) is a file of its own
    if (f.endsWith('.log')) assert.ok(sniffOom(`${noise}\n${text}\n${noise}`), `${f} inside a log`);
    assert.equal(sniffLanguage(`${noise}\n${text}`.split('\n').slice(0, SNIFF_LINES)), undefined);
  }
  for (const file of realDumps()) assert.equal(sniffOom(fs.readFileSync(file, 'utf8')), false, path.relative(repo, file));
  assert.equal(sniffOom('Ran out of memory'), false);
  // prose that quotes the messages without their numbers (our own docs) is not a report
  for (const doc of ['README.md', 'editors/vscode/README.md', 'editors/nvim/doc/hlo.txt']) {
    assert.equal(sniffOom(fs.readFileSync(path.join(repo, doc), 'utf8')), false, doc);
  }
});
