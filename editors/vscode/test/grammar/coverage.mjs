// Tokenizes every real dump under tests/data/{seeds,jax-cpu} with the extension's TextMate grammars (vscode-textmate, the engine
// VS Code uses) and checks what a reader sees:
//   - every non-blank line of a buffer-assignment file starts with a scoped token (no line falls through as
//     plain text), and the size/name tokens of value lines carry their scopes;
//   - in HLO files every instruction's defining name, opcode and element type carry their scopes;
//   - no line takes longer than 200 ms to tokenize (a guard against runaway regexes on long lines).
// Expected tokens are found with independent regexes over the raw text, never from a previous run.
// Usage: node test/grammar/coverage.mjs            (check; exit 1 on a failure)
//        node test/grammar/coverage.mjs FILE N [M] (print the tokens of lines N..M, 1-based)
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const vsctm = require('vscode-textmate');
const oniguruma = require('vscode-oniguruma');
const here = path.dirname(fileURLToPath(import.meta.url));
const ext = path.resolve(here, '../..');
const repo = path.resolve(ext, '../..');

const wasm = fs.readFileSync(require.resolve('vscode-oniguruma/release/onig.wasm')).buffer;
await oniguruma.loadWASM(wasm);
const files = {
  'source.hlo': path.join(ext, 'syntaxes/hlo.tmLanguage.json'),
  'source.hlo-buffers': path.join(ext, 'syntaxes/hlo-buffers.tmLanguage.json'),
};
const registry = new vsctm.Registry({
  onigLib: Promise.resolve({
    createOnigScanner: (p) => new oniguruma.OnigScanner(p),
    createOnigString: (s) => new oniguruma.OnigString(s),
  }),
  loadGrammar: async (scope) =>
    files[scope] ? vsctm.parseRawGrammar(fs.readFileSync(files[scope], 'utf8'), files[scope]) : null,
});
const grammars = {
  hlo: await registry.loadGrammar('source.hlo'),
  buffers: await registry.loadGrammar('source.hlo-buffers'),
};

function kindOf(file, text) {
  const base = path.basename(file);
  if (/-(buffer-assignment|buffer-assignment-values|live-range|memory-usage-report)\.txt$/.test(base)) return 'buffers';
  const first = text.split('\n').find((l) => l.trim() !== '') ?? '';
  if (first.startsWith('HloModule ')) return 'hlo';
  if (/^(BufferAssignment:|HloLiveRange|Total bytes used:|Memory Space:)/.test(first)) return 'buffers';
  return undefined;
}

function* tokenize(grammar, text) {
  let stack = vsctm.INITIAL;
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const t0 = performance.now();
    const r = grammar.tokenizeLine(lines[i], stack, 5000);
    const ms = performance.now() - t0;
    stack = r.ruleStack;
    const tokens = r.tokens.map((t, k) => ({
      text: lines[i].slice(t.startIndex, k + 1 < r.tokens.length ? r.tokens[k + 1].startIndex : lines[i].length),
      start: t.startIndex,
      scopes: t.scopes,
    }));
    yield { n: i + 1, line: lines[i], tokens, ms, stopped: r.stoppedEarly };
  }
}

const scopeAt = (tokens, col) => tokens.find((t) => t.start <= col && col < t.start + t.text.length)?.scopes ?? [];
const has = (tokens, col, prefix) => scopeAt(tokens, col).some((s) => s.startsWith(prefix));

if (process.argv.length > 3) {
  const file = process.argv[2];
  const text = fs.readFileSync(file, 'utf8');
  const from = Number(process.argv[3]);
  const to = Number(process.argv[4] ?? from);
  for (const l of tokenize(grammars[kindOf(file, text) ?? 'hlo'], text)) {
    if (l.n < from || l.n > to) continue;
    console.log(`${l.n}: ${l.line}`);
    for (const t of l.tokens) console.log(`   ${JSON.stringify(t.text).padEnd(40)} ${t.scopes.slice(1).join(' ')}`);
  }
  process.exit(0);
}

// Only real dumps: other folders under tests/data hold hand-made and deliberately broken files.
const dataDirs = ['seeds', 'jax-cpu'].map((d) => path.join(repo, 'tests/data', d));
const all = [];
function walk(d) {
  for (const e of fs.readdirSync(d, { withFileTypes: true })) {
    const p = path.join(d, e.name);
    if (e.isDirectory()) walk(p);
    else if (e.name.endsWith('.txt')) all.push(p);
  }
}
for (const d of dataDirs) if (fs.existsSync(d)) walk(d);

const failures = [];
let passed = 0;
const checks = { lines: 0, values: 0, instructions: 0 };
function check(ok, what) {
  if (ok) passed++;
  else if (failures.push(what) <= 20) console.log(`not ok: ${what}`);
}

const valueRe = /^\s+value: <\d+ ([A-Za-z_][\w.\-]*)[^>]*> \(size=(\d+),offset=\d+\)/;
const instrRe = /^\s*(?:ROOT\s+)?(%?[A-Za-z_][\w.\-]*) = (?:.*?[\]})] )?([a-z][a-z0-9]*(?:-[a-z0-9]+)*)\(/;
for (const file of all.sort()) {
  const text = fs.readFileSync(file, 'utf8');
  const kind = kindOf(file, text);
  if (!kind) continue;
  const rel = path.relative(repo, file);
  for (const l of tokenize(grammars[kind], text)) {
    check(l.ms < 200 && !l.stopped, `${rel}:${l.n} tokenized in ${l.ms.toFixed(0)} ms`);
    if (l.line.trim() === '') continue;
    if (kind === 'buffers') {
      checks.lines++;
      const col = l.line.search(/\S/);
      check(scopeAt(l.tokens, col).length > 1, `${rel}:${l.n} first token unscoped: ${l.line.slice(0, 80)}`);
      const m = valueRe.exec(l.line);
      if (m) {
        checks.values++;
        const nameCol = l.line.indexOf(' ' + m[1]) + 1;
        const sizeCol = l.line.indexOf('size=' + m[2]) + 5;
        check(has(l.tokens, nameCol, 'variable.other.value'), `${rel}:${l.n} value name ${m[1]}`);
        check(has(l.tokens, sizeCol, 'constant.numeric.bytes'), `${rel}:${l.n} value size ${m[2]}`);
      }
    } else {
      const m = instrRe.exec(l.line);
      if (m && !l.line.startsWith('HloModule')) {
        checks.instructions++;
        check(has(l.tokens, l.line.indexOf(m[1]), 'entity.name.variable.instruction'), `${rel}:${l.n} name ${m[1]}`);
        const opCol = l.line.indexOf(m[2] + '(', l.line.indexOf(' = '));
        check(has(l.tokens, opCol, 'support.function.opcode'), `${rel}:${l.n} opcode ${m[2]}`);
      }
    }
  }
}
console.log(`grammar coverage: ${all.length} files, ${checks.lines} buffer lines, ${checks.values} value lines, ` +
  `${checks.instructions} instructions`);
if (checks.values === 0 || checks.instructions === 0) failures.push('found no real dumps to check');
console.log(`${passed} passed, ${failures.length} failed`);
process.exit(failures.length ? 1 : 0);
