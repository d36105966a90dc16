// Playwright driver for test/e2e.sh: a user's session in code-server (real VS Code 1.99.3) with the built .vsix.
// Every expected value (a value's size, the line of its defining instruction) is read from the dump text here,
// with regexes independent of the extension and the server. Prints PASS/FAIL per step, then "N passed, N failed".
import fs from 'node:fs';
import path from 'node:path';
import { chromium } from 'playwright-core';

const URL = process.env.E2E_URL;
const WS = process.env.E2E_WORKSPACE;
const SHOTS = process.env.E2E_SCREENSHOTS;
const USER_DATA = process.env.E2E_USER_DATA;
const ONLY = process.env.E2E_ONLY ?? '';
const SERVER_WAIT = Number(process.env.E2E_SERVER_WAIT_MS ?? 45000);

const results = [];
function record(name, ok, detail) {
  results.push({ name, ok });
  console.log(`${ok ? 'PASS' : 'FAIL'} ${name}${detail ? ` - ${detail}` : ''}`);
}
async function step(name, fn) {
  const t0 = Date.now();
  try {
    const detail = await fn();
    record(name, true, `${detail ? `${detail}; ` : ''}${((Date.now() - t0) / 1000).toFixed(1)}s`);
    return true;
  } catch (e) {
    const file = `failed-${results.length + 1}.png`;
    await shot(file).catch(() => {});
    record(name, false, `${(e && e.message ? e.message : String(e)).split('\n')[0]} (screenshot ${file})`);
    return false;
  }
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const escapeRe = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

// ---- expectations from the dump text ----
const BA = 'module_0000.jit_piecewise.cpu_after_optimizations-buffer-assignment.txt';
const HLO = 'module_0000.jit_piecewise.cpu_after_optimizations.txt';
const SEED = '000_45ad91e6d67cdb55.txt';
const BROKEN = 'broken_by_hand.hlo';
const read = (name) => fs.readFileSync(path.join(WS, name), 'utf8');

/** The first ` value: <id name @pos> (size=S,...)` line: its name and size. */
function firstValue(text) {
  const m = /^ value: <\d+ ([A-Za-z_][\w.\-]*) @\d+> \(size=(\d+),offset=\d+\)/m.exec(text);
  if (!m) throw new Error('no value line');
  return { name: m[1], size: m[2] };
}
/** 1-based line and the 1-based columns of `%name` and `name` where the instruction `name` is defined. */
function definitionOf(text, name) {
  const lines = text.split('\n');
  const re = new RegExp(`^(\\s*(?:ROOT\\s+)?)(%?)${escapeRe(name)} = `);
  for (let i = 0; i < lines.length; i++) {
    const m = re.exec(lines[i]);
    if (m) return { line: i + 1, cols: [m[1].length + 1, m[1].length + 1 + m[2].length] };
  }
  throw new Error(`no definition of ${name}`);
}
/** Digits of a size as the hover may print them: 32768, 32,768 or 32 768. */
const bytesIn = (text, size) => text.replace(/(\d)[,\s\u202f\u2009\u00a0](?=\d{3}\b)/g, '$1').includes(`${size} bytes`);

// ---- the workbench ----
const browser = await chromium.launch({
  executablePath: process.env.E2E_CHROMIUM || '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-dev-shm-usage'],
});
const page = await browser.newPage({ viewport: { width: 1280, height: 800 }, deviceScaleFactor: 1 });
page.setDefaultTimeout(15000);
const consoleErrors = [];
page.on('console', (m) => { if (m.type() === 'error') consoleErrors.push(m.text()); });

const EDITOR = '.part.editor .editor-group-container.active .monaco-editor';
const statusText = async (id) => (await page.locator(`.statusbar-item[id="${id}"]`).first().innerText()).trim();
const activeTab = async () => (await page.locator('.part.editor .tab.active .label-name').first().innerText()).trim();

async function shot(name, clip) {
  fs.mkdirSync(SHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SHOTS, name), clip });
  return path.join(SHOTS, name);
}

/** Opens a file by double-clicking its row in the explorer, scrolling the list until the row shows. */
async function openFile(name) {
  const row = page.locator('.explorer-folders-view .monaco-list-row').filter({
    has: page.locator('.label-name', { hasText: new RegExp(`^${escapeRe(name)}$`) }),
  });
  const list = page.locator('.explorer-folders-view .monaco-list').first();
  for (let i = 0; i < 30 && (await row.count()) === 0; i++) {
    await list.hover();
    await page.mouse.wheel(0, i < 15 ? 200 : -200);
    await sleep(150);
  }
  // a row can be in the list's DOM below (or above) what it shows: scroll until the whole row is inside the list
  for (let i = 0; i < 10; i++) {
    const [r, l] = [await row.first().boundingBox(), await list.boundingBox()];
    if (!r || !l || (r.y >= l.y && r.y + r.height <= l.y + l.height)) break;
    await list.hover();
    await page.mouse.wheel(0, r.y < l.y ? r.y - l.y - 40 : r.y + r.height - (l.y + l.height) + 40);
    await sleep(200);
  }
  await row.first().dblclick();
  await page.waitForFunction(
    (n) => [...document.querySelectorAll('.part.editor .tab.active .label-name')].some((e) => e.textContent.trim() === n),
    name,
  );
  await page.locator(`${EDITOR} .view-line`).first().waitFor();
  await page.keyboard.press('Control+Home'); // the double-click leaves the focus in the editor: show line 1
  await sleep(500);
}

/** Puts the cursor on line `n` (1-based) of the active editor (the command palette's ":n"). */
async function goToLine(n) {
  const input = page.locator('.quick-input-widget .quick-input-box input').first();
  await page.keyboard.press('F1');
  await input.waitFor({ state: 'visible' });
  await input.fill(`:${n}`);
  await sleep(300);
  await page.keyboard.press('Enter');
  await sleep(800);
}

/** Expands a folder of the explorer (a single click on its row) unless it is open already. */
async function expandFolder(name) {
  const row = page.locator('.explorer-folders-view .monaco-list-row').filter({
    has: page.locator('.label-name', { hasText: new RegExp(`^${escapeRe(name)}$`) }),
  }).first();
  await row.waitFor();
  if ((await row.getAttribute('aria-expanded')) !== 'true') await row.click();
  await sleep(500);
}

/** Runs a command by its title through the command palette (F1). */
async function runCommand(title) {
  const input = page.locator('.quick-input-widget .quick-input-box input').first();
  await page.keyboard.press('F1');
  try {
    await input.waitFor({ state: 'visible', timeout: 3000 });
  } catch {
    // The focus was somewhere F1 does not reach (a webview): give it back to the workbench and retry.
    await page.locator('.part.editor .tabs-container').first().click({ position: { x: 2, y: 2 } }).catch(() => {});
    await page.keyboard.press('F1');
    await input.waitFor({ state: 'visible' });
  }
  await input.fill(`>${title}`);
  const row = page.locator('.quick-input-list .monaco-list-row', { hasText: title }).first();
  await row.waitFor({ state: 'visible' });
  await row.click();
  await sleep(500);
}

/** Runs a command that opens a read-only report, waits for its tab (a title starting with `title`) and returns its text. */
async function commandReport(command, title) {
  await runCommand(command);
  await page.waitForFunction(
    (t) => [...document.querySelectorAll('.part.editor .tab.active .label-name')].some((e) => e.textContent.startsWith(t)),
    title,
    { timeout: SERVER_WAIT },
  );
  return (await page.locator(`${EDITOR} .view-lines`).first().innerText()).replace(/\u00a0/g, ' ');
}

/** Waits until the language status shows `want` (the workbench may learn the extension's languages a moment after load). */
async function waitForMode(want, timeout = 15000) {
  const deadline = Date.now() + timeout;
  let mode = '';
  while (Date.now() < deadline) {
    mode = await statusText('status.editor.mode').catch(() => '');
    if (mode === want) return;
    await sleep(300);
  }
  throw new Error(`language status says "${mode}"`);
}

const toastTexts = () => page.locator('.notifications-toasts .notification-toast').allInnerTexts();

/** Screen point at the middle of the first occurrence of `text` on a rendered line of the active editor. */
async function pointOf(text, lineHint) {
  const p = await page.evaluate(([text, hint]) => {
    const editor = document.querySelector('.part.editor .editor-group-container.active .monaco-editor');
    if (!editor) return null;
    const lines = [...editor.querySelectorAll('.view-lines .view-line')]
      .sort((a, b) => a.getBoundingClientRect().top - b.getBoundingClientRect().top);
    for (const line of lines) {
      const flat = line.textContent.replace(/\u00a0/g, ' ');
      if (hint && !flat.includes(hint)) continue;
      // the text may span several rendered pieces (VS Code cuts long runs into parts): find it in the whole line,
      // then the text nodes where it starts and ends
      const at = flat.indexOf(text);
      if (at < 0) continue;
      const walker = document.createTreeWalker(line, NodeFilter.SHOW_TEXT);
      let seen = 0;
      let start = null;
      let end = null;
      for (let node = walker.nextNode(); node && !end; node = walker.nextNode()) {
        const n = node.textContent.length;
        if (!start && at < seen + n) start = [node, at - seen];
        if (start && at + text.length <= seen + n) end = [node, at + text.length - seen];
        seen += n;
      }
      if (!start || !end) continue;
      const range = document.createRange();
      range.setStart(start[0], start[1]);
      range.setEnd(end[0], end[1]);
      const r = range.getBoundingClientRect();
      const color = getComputedStyle(start[0].parentElement).color;
      const plain = getComputedStyle(line).color;
      return { x: r.left + r.width / 2, y: r.top + r.height / 2, color, plain, tokenText: start[0].textContent };
    }
    return null;
  }, [text, lineHint ?? null]);
  if (!p) throw new Error(`"${text}" is not on screen`);
  return p;
}

/** Hovers `text` until a hover shows text matching `want`, re-hovering while the server starts; returns it. */
async function hoverUntil(text, lineHint, want, timeout = SERVER_WAIT) {
  const deadline = Date.now() + timeout;
  let last = '';
  while (Date.now() < deadline) {
    // a hover left on screen is not asked for again: dismiss it (Escape, the mouse away from its widget, which a
    // long hover can reach 200 px below the line) so that each try is a new request to the server
    await page.keyboard.press('Escape');
    await page.mouse.move(5, 5);
    await page.locator('.monaco-hover:not(.hidden)').first().waitFor({ state: 'hidden', timeout: 2000 }).catch(() => {});
    const p = await pointOf(text, lineHint);
    await page.mouse.move(p.x - 40, p.y + 200);
    await sleep(200);
    await page.mouse.move(p.x, p.y);
    await page.mouse.move(p.x + 1, p.y);
    const hover = page.locator('.monaco-hover:not(.hidden) .monaco-hover-content, .monaco-hover:not(.hidden) .hover-contents');
    try {
      await hover.first().waitFor({ state: 'visible', timeout: 4000 });
      last = (await hover.allInnerTexts()).join('\n');
      if (want(last)) return last;
    } catch {
      /* no hover yet: the server may still be starting */
    }
    await sleep(1000);
  }
  throw new Error(`no matching hover over "${text}" within ${timeout / 1000}s${last ? `; last hover: ${JSON.stringify(last.slice(0, 160))}` : ''}`);
}

/** Fails when the extension host logged a duplicate command, a failed activation or a missing module. */
async function checkExtensionLogs() {
  await step('no "command already exists" or activation error in the extension host', async () => {
    const found = [];
    for (const p of logFiles().filter((f) => /exthost|HLO/i.test(f))) {
      for (const l of fs.readFileSync(p, 'utf8').split('\n')) {
        if (/already exists|Activating extension .*hlo-lsp.* failed|Cannot find module/i.test(l)) found.push(l.trim());
      }
    }
    if (found.length) throw new Error(found[0].slice(0, 200));
  });
}

/** The server's own log lines from the extension's output channel. */
function extensionOutput() {
  return logFiles()
    .filter((f) => path.basename(f) === 'HLO Language Server.log')
    .map((f) => fs.readFileSync(f, 'utf8'))
    .join('\n');
}

/** Every file under the workbench's logs folder (none when it does not exist yet). */
function logFiles(d = path.join(USER_DATA, 'logs')) {
  if (!fs.existsSync(d)) return [];
  return fs.readdirSync(d, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(d, e.name);
    return e.isDirectory() ? logFiles(p) : [p];
  });
}

let ready = false;
try {
  await page.goto(URL, { waitUntil: 'domcontentloaded', timeout: 60000 });
  await page.locator('.explorer-folders-view .monaco-list-row').first().waitFor({ timeout: 90000 });
  ready = true;
} catch (e) {
  record('workbench loads with the dump folder in the explorer', false, String(e.message).split('\n')[0]);
}

if (ready && ONLY === 'python-fallback') {
  record('workbench loads (no hlo-lsp on PATH, Python extension stub installed)', true);
  const value = firstValue(read(BA));
  const python = process.env.E2E_PYTHON;
  await step(`hover over ${value.name} shows "${value.size} bytes" with the bundled server run by the Python extension's interpreter (a bare venv)`, async () => {
    await openFile(BA);
    await waitForMode('HLO Buffer Assignment');
    await hoverUntil(value.name, 'value: <', (t) => bytesIn(t, value.size));
    const started = /starting: (.*) \(from (\w+)\)/.exec(extensionOutput());
    if (!started || started[2] !== 'bundled' || !started[1].startsWith(`${python} `) ||
        !started[1].endsWith('bundled/tool/hlo_lsp_server.py')) {
      throw new Error(`extension log says ${started ? started[0] : 'nothing about starting'}`);
    }
    return started[1];
  });
  await checkExtensionLogs();
} else if (ready && ONLY === 'large') {
  // Generated by benchmarks/synth_buffers.py (e2e.sh): a module over 20 MB and its values file over 10 MB.
  record('workbench loads with the large generated dump set in the explorer', true);
  const names = fs.readdirSync(WS);
  const MOD = names.find((n) => n.endsWith('after_optimizations.txt'));
  const VALS = names.find((n) => n.endsWith('-buffer-assignment-values.txt'));
  const modText = read(MOD);
  const modLines = modText.split('\n');
  const valsText = read(VALS);
  const asgText = read(names.find((n) => n.endsWith('-buffer-assignment.txt')));
  const DEF = /^\s*(?:ROOT\s+)?%([\w.\-]+) = /;
  // a use late in the module (an operand defined on an earlier line) and the line of that definition
  let use;
  for (let i = Math.floor(modLines.length * 0.9); i < modLines.length && !use; i++) {
    const m = DEF.exec(modLines[i]);
    const op = m && /\(%([\w.\-]+)[,)]/.exec(modLines[i]);
    if (op) use = { line: i + 1, name: op[1], text: m[1] };
  }
  const useDef = definitionOf(modText, use.name);
  // the ENTRY computation (the outline lists it however many computations there are) and its header line
  const entryLine = modLines.findIndex((l) => l.startsWith('ENTRY '));
  const entryComp = /^ENTRY %?([\w.\-]+)/.exec(modLines[entryLine])[1];
  // a value in the middle of the values file, its size from the assignment file, its instruction in the module
  const valLines = valsText.split('\n');
  const heads = valLines.map((l, i) => [l, i]).filter(([l]) => /^<\d+ [\w.\-]+ @\d+>$/.test(l));
  const [valHead, valLine] = heads[Math.floor(heads.length / 2)];
  const [, valId, valName] = /^<(\d+) ([\w.\-]+) @/.exec(valHead);
  const size = new RegExp(`^ value: <${valId} ${escapeRe(valName)} @\\d+> \\(size=(\\d+),`, 'm').exec(asgText)[1];
  const valDef = definitionOf(modText, valName);
  const firstVal = /^<\d+ ([\w.\-]+) @/.exec(heads[0][0])[1];

  async function where() {
    const m = /Ln (\d+), Col (\d+)/.exec(await statusText('status.editor.selection').catch(() => ''));
    return m ? [Number(m[1]), Number(m[2])] : [0, 0];
  }
  /** The breadcrumbs (drawn from the outline: documentSymbol) at line `n`, once they name `name`. */
  async function breadcrumbsAt(n, name) {
    await goToLine(n);
    const items = page.locator('.part.editor .editor-group-container.active .breadcrumbs-control .monaco-breadcrumb-item');
    const deadline = Date.now() + SERVER_WAIT;
    let texts = [];
    while (Date.now() < deadline) {
      texts = (await items.allInnerTexts()).map((t) => t.trim());
      if (texts.includes(name)) return texts;
      await sleep(500);
    }
    throw new Error(`breadcrumbs at line ${n}: ${JSON.stringify(texts)}`);
  }
  /** Waits until `name` on the line holding `hint` is drawn in a colour other than the line's own. */
  async function coloured(name, hint) {
    const deadline = Date.now() + SERVER_WAIT;
    let p;
    while (Date.now() < deadline) {
      p = await pointOf(name, hint).catch(() => null);
      if (p && p.tokenText.trim() === name && p.color !== p.plain) return `${name} in ${p.color}, plain text ${p.plain}`;
      await sleep(500);
    }
    throw new Error(`token "${p?.tokenText}" in ${p?.color} (plain ${p?.plain})`);
  }

  await step(`${MOD} (${(modText.length / 1e6).toFixed(1)} MB) opens as "HLO"`, async () => {
    if (modText.length < 20e6) throw new Error('the generated module is under 20 MB');
    await openFile(MOD);
    await waitForMode('HLO');
  });
  await step(`the definition of ${useDef.name ?? use.name} (line ${useDef.line}) is coloured by the server's semantic tokens (VS Code's own colouring is off above 20 MB)`, async () => {
    await goToLine(useDef.line);
    return coloured(use.name, `%${use.name} = `);
  });
  await step(`hover over the use of ${use.name} on line ${use.line} names it`, async () => {
    await goToLine(use.line);
    const text = await hoverUntil(`%${use.name}`, `%${use.text} = `, (t) => t.includes(use.name));
    await shot('large-module-hover.png');
    return JSON.stringify(text.split('\n')[0].slice(0, 80));
  });
  await step(`F12 on that use lands on line ${useDef.line}`, async () => {
    await page.mouse.move(5, 5);
    await page.keyboard.press('Escape');
    const p = await pointOf(`%${use.name}`, `%${use.text} = `);
    await page.mouse.click(p.x, p.y);
    await page.keyboard.press('F12');
    const deadline = Date.now() + SERVER_WAIT;
    let at = [0, 0];
    while (Date.now() < deadline) {
      await sleep(500);
      at = await where();
      if (at[0] === useDef.line && useDef.cols.includes(at[1])) return `Ln ${at[0]}, Col ${at[1]}`;
    }
    throw new Error(`at Ln ${at[0]}, Col ${at[1]}`);
  });
  await step(`the outline names the entry computation ${entryComp} in the breadcrumbs at its line ${entryLine + 2}`, async () => {
    const crumbs = await breadcrumbsAt(entryLine + 2, entryComp);
    await shot('large-module-outline.png');
    return crumbs.join(' › ');
  });

  await step(`${VALS} (${(valsText.length / 1e6).toFixed(1)} MB) opens as "HLO Buffer Assignment"`, async () => {
    if (valsText.length < 10e6) throw new Error('the generated values file is under 10 MB');
    await runCommand('View: Close All Editor Groups');
    await openFile(VALS);
    await waitForMode('HLO Buffer Assignment');
  });
  await step(`value ${valName} (line ${valLine + 1}) is coloured by the server's semantic tokens`, async () => {
    await goToLine(valLine + 1);
    return coloured(valName, `<${valId} `);
  });
  // VS Code sends the module's didClose after this file opened and its siblings were joined: the close drops
  // that join and the server joins them again in the background (tests/session/test_sibling_closed_late.py)
  await step(`hover over value ${valName} shows "${size} bytes" (from the assignment file beside it)`, async () => {
    const text = await hoverUntil(valName, `<${valId} `, (t) => bytesIn(t, size));
    await shot('large-values-hover.png');
    return JSON.stringify(text.split('\n')[0].slice(0, 80));
  });
  await step(`F12 on ${valName} lands on its instruction (${MOD}:${valDef.line})`, async () => {
    await page.mouse.move(5, 5);
    await page.keyboard.press('Escape');
    const p = await pointOf(valName, `<${valId} `);
    await page.mouse.click(p.x, p.y);
    await page.keyboard.press('F12');
    const deadline = Date.now() + SERVER_WAIT;
    let tab = '';
    let at = [0, 0];
    while (Date.now() < deadline) {
      await sleep(500);
      tab = await activeTab();
      at = await where();
      if (tab === MOD && at[0] === valDef.line && valDef.cols.includes(at[1])) return `${tab} Ln ${at[0]}`;
    }
    throw new Error(`tab ${tab} at Ln ${at[0]}, Col ${at[1]}`);
  });
  await step(`the outline of ${VALS} names its first value ${firstVal} in the breadcrumbs at line ${heads[0][1] + 1}`, async () => {
    await runCommand('View: Close All Editor Groups');
    await openFile(VALS);
    const crumbs = await breadcrumbsAt(heads[0][1] + 1, firstVal);
    if (!crumbs.includes('Used values')) throw new Error(`breadcrumbs ${JSON.stringify(crumbs)}`);
    return crumbs.join(' › ');
  });
  await checkExtensionLogs();
} else if (ready) {
  record('workbench loads with the dump folder in the explorer', true);
  const ba = read(BA);
  const value = firstValue(ba);
  const def = definitionOf(read(HLO), value.name);

  await step(`${BA} opens as "HLO Buffer Assignment" (filename pattern)`, async () => {
    await openFile(BA);
    await waitForMode('HLO Buffer Assignment');
  });

  await step('the server is the one bundled in the .vsix, run by python3 on PATH (no hlo-lsp there)', async () => {
    const deadline = Date.now() + SERVER_WAIT;
    let started;
    while (Date.now() < deadline && !(started = /starting: (.*) \(from (\w+)\)/.exec(extensionOutput()))) await sleep(500);
    if (!process.env.HLO_SERVER_COMMAND && (!started || started[2] !== 'bundled' ||
        !started[1].endsWith('bundled/tool/hlo_lsp_server.py'))) {
      throw new Error(`extension log says ${started ? started[0] : 'nothing about starting'}`);
    }
    return started ? started[1] : '';
  });

  await step('the TextMate grammar colours a value name', async () => {
    // The first render is plain text; the TextMate tokens arrive from a worker a moment later.
    const deadline = Date.now() + 15000;
    let p;
    while (Date.now() < deadline) {
      p = await pointOf(value.name, 'value: <');
      if (p.tokenText.trim() === value.name && p.color !== p.plain) {
        return `${value.name} in ${p.color}, plain text ${p.plain}`;
      }
      await sleep(300);
    }
    throw new Error(`token "${p?.tokenText}" in ${p?.color} (plain ${p?.plain}): the grammar did not colour the name`);
  });

  await step(`hover over value ${value.name} shows "${value.size} bytes"`, async () => {
    const text = await hoverUntil(value.name, 'value: <', (t) => bytesIn(t, value.size));
    await sleep(800); // let the hover finish fading in
    const editor = await page.locator('.part.editor').boundingBox();
    const box = await page.locator('.monaco-hover:not(.hidden)').first().boundingBox();
    const bottom = box ? box.y + box.height + 8 : editor.y + 300;
    const file = await shot('hover.png', {
      x: editor.x, y: editor.y, width: Math.min(editor.width, 900), height: Math.min(editor.height, bottom - editor.y),
    });
    return `${JSON.stringify(text.split('\n')[0].slice(0, 80))}; screenshot ${path.relative(process.cwd(), file)}`;
  });

  await step(`F12 on ${value.name} lands on its instruction (${HLO}:${def.line})`, async () => {
    await page.mouse.move(5, 5);
    await page.keyboard.press('Escape');
    const p = await pointOf(value.name, 'value: <');
    await page.mouse.click(p.x, p.y);
    const deadline = Date.now() + SERVER_WAIT;
    let where = '';
    let tab = '';
    while (Date.now() < deadline) {
      await page.keyboard.press('F12');
      await sleep(1500);
      tab = await activeTab();
      where = await statusText('status.editor.selection').catch(() => '');
      const m = /Ln (\d+), Col (\d+)/.exec(where);
      if (tab === HLO && m && Number(m[1]) === def.line && def.cols.includes(Number(m[2]))) {
        await shot('definition.png');
        return `${tab} ${where}`;
      }
      if (tab !== BA) break;
      await page.mouse.click(p.x, p.y);
    }
    throw new Error(`active tab "${tab}", "${where}"; expected ${HLO} Ln ${def.line}, Col ${def.cols.join(' or ')}`);
  });

  await step(`${HLO} opens as "HLO"`, async () => {
    await openFile(HLO);
    await waitForMode('HLO');
  });

  const seed = firstValue(read(SEED));
  await step(`seed ${SEED} is switched from plain text to "HLO Buffer Assignment" (first line)`, async () => {
    await openFile(SEED);
    await waitForMode('HLO Buffer Assignment');
  });

  await step(`hover over ${seed.name} in the seed shows "${seed.size} bytes"`, async () => {
    const text = await hoverUntil(seed.name, 'value: <', (t) => bytesIn(t, seed.size));
    return JSON.stringify(text.split('\n')[0].slice(0, 80));
  });

  const OOMLOG = 'train-oom.log';
  const oomLabel = 'convolution_select_fusion.1';
  await step(`${OOMLOG} (a plain .log holding a TPU out-of-memory report) switches to "XLA out-of-memory report"`, async () => {
    await openFile(OOMLOG);
    await waitForMode('XLA out-of-memory report');
  });

  await step(`hover over ${oomLabel} in the report shows its allocation and live range from the dump beside it`, async () => {
    const text = await hoverUntil(oomLabel, 'XLA label: ', (t) => /Allocation\s*\d+/.test(t) && t.includes('Live range'));
    await shot('oom-hover.png');
    return JSON.stringify(text.split('\n')[0].slice(0, 80));
  });

  await step('"HLO: Rank Modules by Peak" opens the folder\'s modules ranked by peak, the OOM dump among them', async () => {
    await openFile(OOMLOG);
    const text = await commandReport('HLO: Rank Modules by Peak', 'Modules by peak');
    if (!/\d+ modules under /.test(text) || !text.includes('jit_train_step.cl_933746096')) {
      throw new Error(`report reads ${JSON.stringify(text.slice(0, 200))}`);
    }
    return JSON.stringify(text.split('\n')[0].slice(0, 80));
  });

  // a pass-by-pass dump (--xla_dump_hlo_pass_re=.*) in the folder passes/: the final module's place in the history
  const PASSFILE = 'module_0000.jit_train_step.cpu_after_optimizations.txt';
  const fused = 'multiply_subtract_fusion.1';
  await step(`${PASSFILE} of a pass-by-pass dump shows its place in the history (lens) and a hover names the pass that made ${fused}`, async () => {
    await page.keyboard.press('Escape');
    await expandFolder('passes');
    await openFile(PASSFILE);
    const files = fs.readdirSync(path.join(WS, 'passes')).filter((f) => f.startsWith('module_0000.jit_train_step.')).length;
    await page.locator(`${EDITOR} .codelens-decoration`, { hasText: `pass file ${files} of ${files}` }).first()
      .waitFor({ timeout: SERVER_WAIT });
    const lines = read(path.join('passes', PASSFILE)).split('\n');
    const n = lines.findIndex((l) => l.includes(`%${fused} = `));
    await goToLine(n + 1);
    const made = /^module_0000\.jit_train_step\.(\d{4})\.[^.]+\.after_fusion\./;
    const seq = fs.readdirSync(path.join(WS, 'passes')).map((f) => made.exec(f)).find(Boolean)[1];
    const text = await hoverUntil(fused, `%${fused} = `, (t) => t.includes(`made by fusion (file ${seq})`) && t.includes('Absorbed'));
    const file = await shot('pass-history-hover.png');
    return `${JSON.stringify(text.split('\n').find((l) => l.includes('made by')).slice(0, 100))}; screenshot ${path.relative(process.cwd(), file)}`;
  });

  await step('"HLO: What This Pass Did" opens the diff of the pass before the final file as a read-only document', async () => {
    await page.mouse.move(5, 5);
    await page.keyboard.press('Escape');
    const before = fs.readdirSync(path.join(WS, 'passes')).filter((f) => /\.\d{4}\./.test(f)).sort().pop();
    const text = await commandReport('HLO: What This Pass Did', 'Pass diff');
    if (!text.includes('+0 -0 ~0 instructions') || !text.includes(before)) {
      throw new Error(`report reads ${JSON.stringify(text.slice(0, 300))}`);
    }
    return JSON.stringify(text.split('\n')[0].slice(0, 80));
  });

  await step('"HLO: Compare With the Previous Pass File" opens the final file and the pass file before it in the diff editor', async () => {
    await page.mouse.move(5, 5);
    await page.keyboard.press('Escape');
    await openFile(PASSFILE);
    await runCommand('HLO: Compare With the Previous Pass File');
    await page.locator('.part.editor .editor-group-container.active .monaco-diff-editor').first().waitFor({ timeout: SERVER_WAIT });
    const tab = (await page.locator('.part.editor .tab.active .label-name').first().innerText()).replace(/\u00a0/g, ' ');
    if (!tab.includes('↔ after optimizations')) throw new Error(`the diff editor's tab reads ${JSON.stringify(tab)}`);
    await runCommand('View: Close All Editor Groups');
    return JSON.stringify(tab.slice(0, 100));
  });

  await step(`${BROKEN} shows a squiggle`, async () => {
    await page.mouse.move(5, 5);
    await page.keyboard.press('Escape');
    await openFile(BROKEN);
    const squiggle = page.locator(`${EDITOR} .squiggly-error, ${EDITOR} .squiggly-warning`);
    await squiggle.first().waitFor({ state: 'attached', timeout: SERVER_WAIT });
    await sleep(3000); // a finding both pushed and pulled would be in the Problems count by now
    await shot('diagnostics.png');
    // each finding once (`hlo-lsp check --hints` on the file: one error, one information); the server once both
    // pushed and answered VS Code's pulls, and VS Code, keeping the two apart, counted each twice
    const problems = (await statusText('status.problems')).match(/\d+/g)?.map(Number) ?? [];
    if (problems.length !== 3 || problems[0] !== 1 || problems[2] !== 1) {
      throw new Error(`the status bar counts errors/warnings/infos ${JSON.stringify(problems)}, not [1, 0, 1]`);
    }
    return `${await squiggle.count()} squiggle(s); problems ${problems.join('/')}`;
  });

  await step('"HLO: Show Memory Timeline" shows a chart or says why not (no error dialog)', async () => {
    await openFile(BA);
    await runCommand('HLO: Show Memory Timeline');
    const deadline = Date.now() + SERVER_WAIT;
    while (Date.now() < deadline) {
      const tabs = await page.locator('.part.editor .tab .label-name').allInnerTexts();
      const chart = tabs.find((t) => t.startsWith('Memory: '));
      if (chart) {
        await runCommand('View: Close All Editor Groups');
        return `webview "${chart}"`;
      }
      const toasts = await toastTexts();
      const said = toasts.find((t) => /memory timeline/i.test(t));
      if (said) return `message: ${JSON.stringify(said.split('\n')[0].slice(0, 120))}`;
      const other = toasts.find((t) => /error|not found|failed/i.test(t));
      if (other) throw new Error(`unexpected notification: ${other.split('\n')[0]}`);
      await sleep(500);
    }
    throw new Error('neither a chart nor a message appeared');
  });

  const LIVE = BA.replace('-buffer-assignment.txt', '-live-range.txt');
  await step(`clicking a code lens in ${LIVE} opens its memory chart`, async () => {
    await openFile(LIVE);
    const lens = page.locator(`${EDITOR} .codelens-decoration a`).first();
    await lens.waitFor({ state: 'visible', timeout: SERVER_WAIT });
    const title = (await lens.innerText()).trim();
    await lens.click();
    await page.locator('.part.editor .tab .label-name', { hasText: `Memory: ${LIVE}` }).first()
      .waitFor({ timeout: SERVER_WAIT });
    await sleep(2000); // plotly draws after load
    await shot('memory-timeline.png');
    await runCommand('View: Close All Editor Groups');
    return `lens "${title.slice(0, 60)}"`;
  });

  // the heap map of a TPU dump (the out-of-memory compilation's files in oom_dump/): one panel per memory space
  // (the memory-usage report's names), each value a rectangle whose hover names it; screenshot heap-map.png
  const TPU_LIVE = 'module_0000.jit_train_step.cl_933746096.after_optimizations-live-range.txt';
  const tpuDir = path.join(WS, 'oom_dump');
  const spaces = [...read(path.join('oom_dump', TPU_LIVE.replace('-live-range.txt', '-memory-usage-report.txt')))
    .matchAll(/^Memory Space: (\S+) \(color=(\d+)\)/gm)].map((m) => (m[2] === '0' ? m[1] : `${m[1]} (S(${m[2]}))`));
  const tpuValues = [...read(path.join('oom_dump', TPU_LIVE.replace('-live-range.txt', '-buffer-assignment.txt')))
    .matchAll(/^ value: <\d+ ([^ >]+)(?: @\d+)?> \(size=(\d+),offset=\d+\)/gm)]
    .map((m) => ({ key: /\{[\d,]*\}$/.test(m[1]) ? m[1] : `${m[1]}{}`, size: Number(m[2]) }))
    .sort((a, b) => b.size - a.size);
  await step(`the "heap map" lens of the TPU dump ${TPU_LIVE} opens its heap map: panels ${spaces.join(', ')}, a value's hover`, async () => {
    if (!fs.existsSync(tpuDir)) throw new Error('no oom_dump folder');
    await runCommand('Collapse Folders in Explorer'); // passes/ is open and long: its rows hide oom_dump/
    await page.locator('.explorer-folders-view .monaco-list').first().hover();
    for (let i = 0; i < 5; i++) await page.mouse.wheel(0, -1000); // and the list stays scrolled past it
    await sleep(500);
    await expandFolder('oom_dump');
    await openFile(TPU_LIVE);
    const peakLine = read(path.join('oom_dump', TPU_LIVE)).split('\n').findIndex((l) => l.startsWith('  Live ranges at '));
    await goToLine(peakLine + 1); // lenses are drawn for the lines on screen only
    const anchors = page.locator(`${EDITOR} .codelens-decoration a`);
    let lens;
    let seen = [];
    for (const end = Date.now() + SERVER_WAIT; !lens && Date.now() < end; await sleep(500)) {
      seen = (await anchors.allInnerTexts()).map((t) => t.replace(/\s+/g, ' ').trim());
      const i = seen.indexOf('heap map');
      if (i >= 0) lens = anchors.nth(i);
    }
    if (!lens) throw new Error(`no "heap map" lens among ${JSON.stringify(seen.map((t) => t.slice(0, 40)))}`);
    await lens.click();
    await page.locator('.part.editor .tab .label-name', { hasText: `Heap map: ${TPU_LIVE}` }).first()
      .waitFor({ timeout: SERVER_WAIT });
    let frame;
    const deadline = Date.now() + SERVER_WAIT;
    while (!frame && Date.now() < deadline) {
      for (const f of page.frames()) {
        if ((await f.locator('svg rect[data-tip]').count().catch(() => 0)) > 0) frame = f;
      }
      if (!frame) await sleep(500);
    }
    if (!frame) throw new Error('no heap map rectangles in any webview frame');
    const text = await frame.locator('body').innerText();
    const missing = spaces.filter((s) => !text.includes(`${s}: Total bytes`));
    if (missing.length) throw new Error(`no panel for ${missing.join(', ')}`);
    // hover the largest value that is drawn: its tooltip names it and its live range
    let hovered = '';
    for (const v of tpuValues.slice(0, 20)) {
      const rect = frame.locator(`rect[data-tip^="${v.key}  "]`).first();
      if ((await rect.count()) === 0) continue;
      await rect.hover({ force: true });
      await sleep(400);
      const tip = (await frame.locator('#tip').innerText()).trim();
      if (tip.startsWith(v.key) && /\blive \d+–\d+/.test(tip)) { hovered = tip.split('\n')[0]; break; }
    }
    if (!hovered) throw new Error('no value rectangle showed its hover');
    await runCommand('View: Toggle Primary Side Bar Visibility'); // the chart gets the window's width
    await sleep(800);
    for (const v of tpuValues.slice(0, 20)) { // hover again where the wider chart put the rectangle
      const rect = frame.locator(`rect[data-tip^="${v.key}  "]`).first();
      if ((await rect.count()) === 0) continue;
      await rect.hover({ force: true });
      await sleep(400);
      break;
    }
    await shot('heap-map.png');
    await runCommand('View: Toggle Primary Side Bar Visibility');
    await runCommand('View: Close All Editor Groups');
    return `${JSON.stringify(hovered)}; screenshot heap-map.png`;
  });

  await step('a new untitled file becomes "HLO" once its first line reads "HloModule "', async () => {
    await runCommand('File: New Untitled Text File');
    await page.locator(`${EDITOR} .view-lines`).first().click();
    await page.keyboard.type('HloModule pasted_by_hand, is_scheduled=true');
    await waitForMode('HLO');
    await runCommand('View: Revert and Close Editor');
  });

  // Workspace settings (e2e.sh creates the file empty: VS Code sees an existing file change at once, a new
  // .vscode folder only about 20 s later).
  const wsSettings = path.join(WS, '.vscode', 'settings.json');
  await step('a missing server of the user’s own names the setting and the bundled server', async () => {
    await openFile(BA); // the client starts only while a dump is open
    await runCommand('Notifications: Clear All Notifications');
    fs.writeFileSync(wsSettings, JSON.stringify({ 'hlo.server.command': ['/nonexistent/bin/hlo-lsp'] }));
    const deadline = Date.now() + 20000;
    while (Date.now() < deadline) {
      const said = (await toastTexts()).find((t) => t.includes('/nonexistent/bin/hlo-lsp') &&
        t.includes('hlo.server.command') && t.includes('bundled'));
      if (said) {
        await shot('missing-server.png');
        return JSON.stringify(said.split('\n')[0].slice(0, 140));
      }
      await sleep(500);
    }
    throw new Error(`no install message; notifications: ${JSON.stringify(await toastTexts())}`);
  });
  fs.writeFileSync(wsSettings, '{}\n');

  await step('"HLO: Restart Server" brings the server back (hover works again)', async () => {
    await openFile(BA);
    await runCommand('Notifications: Clear All Notifications');
    await sleep(2000); // the settings change restarts the client once by itself
    await runCommand('HLO: Restart Server');
    await page.locator('.part.statusbar', { hasText: 'HLO language server restarted' }).waitFor({ timeout: 20000 });
    const text = await hoverUntil(value.name, 'value: <', (t) => bytesIn(t, value.size));
    return JSON.stringify(text.split('\n')[0].slice(0, 60));
  });

  await step('hlo.inlayHints.enabled / hlo.codeLens.enabled = false hide hints and lenses at once', async () => {
    await openFile(BA);
    const rawLine = ba.split('\n').find((l) => l.includes(`<${/<(\d+) /.exec(ba.slice(ba.indexOf(' value: <')))[1]} ${value.name} `));
    const state = () => page.evaluate(([raw, name]) => {
      const editor = document.querySelector('.part.editor .editor-group-container.active .monaco-editor');
      const line = [...editor.querySelectorAll('.view-lines .view-line')].find((l) => l.textContent.includes(name));
      return {
        lenses: editor.querySelectorAll('.codelens-decoration').length,
        hinted: !!line && line.textContent.replace(/\u00a0/g, ' ').trimEnd().length > raw.trimEnd().length,
      };
    }, [rawLine, value.name]);
    const until = async (want, what) => {
      const deadline = Date.now() + 20000;
      let st;
      while (Date.now() < deadline) {
        st = await state();
        if (want(st)) return st;
        await sleep(300);
      }
      throw new Error(`${what}: ${JSON.stringify(st)}`);
    };
    const before = await until((st) => st.lenses > 0 && st.hinted, 'the server shows no code lens or inlay hint');
    fs.writeFileSync(wsSettings, JSON.stringify({ 'hlo.inlayHints.enabled': false, 'hlo.codeLens.enabled': false }));
    await until((st) => st.lenses === 0 && !st.hinted, 'still shown after turning both off');
    fs.writeFileSync(wsSettings, '{}\n');
    await until((st) => st.lenses > 0 && st.hinted, 'not back after turning both on');
    return `${before.lenses} lenses and the hint on ${value.name} went and came back`;
  });

  await checkExtensionLogs();
}

await browser.close();
const passed = results.filter((r) => r.ok).length;
const failed = results.length - passed;
console.log(`${ONLY || 'main'}: ${passed} passed, ${failed} failed`);
if (process.env.E2E_RESULTS) fs.writeFileSync(process.env.E2E_RESULTS, JSON.stringify({ passed, failed }));
process.exit(failed ? 1 : 0);
