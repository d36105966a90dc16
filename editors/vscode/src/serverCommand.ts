/**
 * Resolving the command that starts the language server.
 *
 * Order: an explicit `hlo.server.command` (array, or string split like a shell would, without expansion), a
 * server of the user's own; else the server bundled in the extension (`bundled/tool/hlo_lsp_server.py` with its
 * pure-Python dependencies in `bundled/libs`, made by `npm run bundle-server`), run by the Python extension's
 * interpreter or `python3` on PATH, whichever is Python 3.10+ first. An extension built without the bundle (a
 * development build) falls back to `hlo-lsp` on PATH, then `<python> -m hlo_lsp`. Pure apart from the injected
 * probes, so the unit tests run under plain node.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

export const DEFAULT_COMMAND = 'hlo-lsp';
/** hlo-lsp is on no package index: a server of one's own is installed from a clone. */
export const INSTALL_HINT = 'pipx install . (or pip install .) in a clone of hlo-lsp';
export const PYTHON_HINT =
  'Install Python 3.10 or later (python3 on PATH), or select a Python 3.10+ interpreter in the Python extension';

export type Resolved =
  | { kind: 'ok'; command: string; args: string[]; source: 'setting' | 'bundled' | 'path' | 'python' }
  | { kind: 'missing'; message: string };

export interface Probes {
  /** Full path of an executable named `name` on PATH, or undefined. */
  which(name: string): string | undefined;
  /** The Python extension's interpreter for the workspace, or undefined without the extension. */
  pythonInterpreter(): Promise<string | undefined>;
  /** True when `python -c "import hlo_lsp"` succeeds. */
  canImportHloLsp(python: string): Promise<boolean>;
  /** True when `python` runs and is Python 3.10 or later. */
  isPython310(python: string): Promise<boolean>;
  /** The bundled server's launcher script when the extension carries it (with bundled/libs), else undefined. */
  bundledServer(): string | undefined;
}

/**
 * Splits a command string into words: whitespace separates, single and double quotes group, a backslash
 * escapes the next character outside single quotes. Returns [] for a blank string.
 */
export function splitCommand(text: string): string[] {
  const words: string[] = [];
  let word = '';
  let inWord = false;
  let quote: '"' | "'" | undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quote) {
      if (c === quote) quote = undefined;
      else if (c === '\\' && quote === '"' && i + 1 < text.length) word += text[++i];
      else word += c;
    } else if (c === '"' || c === "'") {
      quote = c;
      inWord = true;
    } else if (c === '\\' && i + 1 < text.length) {
      word += text[++i];
      inWord = true;
    } else if (/\s/.test(c)) {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
    } else {
      word += c;
      inWord = true;
    }
  }
  if (inWord) words.push(word);
  return words;
}

/** The setting as a word list: an array is taken as is (blank entries dropped), a string is split. */
export function commandWords(setting: unknown): string[] {
  if (Array.isArray(setting)) return setting.filter((w): w is string => typeof w === 'string' && w !== '');
  if (typeof setting === 'string') return splitCommand(setting);
  return [];
}

/** Searches PATH (and PATHEXT on Windows) for an executable; returns its full path or undefined. */
export function which(name: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (name.includes('/') || name.includes('\\')) return isExecutable(name) ? name : undefined;
  const exts = process.platform === 'win32' ? (env.PATHEXT ?? '.EXE;.CMD;.BAT').split(';') : [''];
  for (const dir of (env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    for (const ext of exts) {
      const candidate = path.join(dir, name + ext);
      if (isExecutable(candidate)) return candidate;
    }
  }
  return undefined;
}

function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

/** Resolves the server command from the setting; never throws. */
export async function resolveServerCommand(setting: unknown, probes: Probes): Promise<Resolved> {
  const words = commandWords(setting);
  if (words.length > 0) {
    const [command, ...args] = words;
    if (probes.which(command)) return { kind: 'ok', command, args, source: 'setting' };
    return {
      kind: 'missing',
      message: `The HLO language server command from the setting hlo.server.command was not found: ${command}. ` +
        'Fix the setting, or clear it to use the server bundled with the extension.',
    };
  }
  const python = await probes.pythonInterpreter();
  const launcher = probes.bundledServer();
  if (launcher) {
    const tried: string[] = [];
    for (const candidate of [python, probes.which('python3'), probes.which('python')]) {
      if (!candidate || tried.includes(candidate)) continue;
      tried.push(candidate);
      if (await probes.isPython310(candidate)) {
        return { kind: 'ok', command: candidate, args: [launcher], source: 'bundled' };
      }
    }
    const seen = tried.length ? ` (found only older or broken ones: ${tried.join(', ')})` : ' (none found)';
    return {
      kind: 'missing',
      message: `The HLO language server bundled with the extension needs Python 3.10 or later${seen}. ` +
        `${PYTHON_HINT}, then run "HLO: Restart Server"; or set hlo.server.command to a server of your own ` +
        `(${INSTALL_HINT}).`,
    };
  }
  const onPath = probes.which(DEFAULT_COMMAND);
  if (onPath) return { kind: 'ok', command: onPath, args: [], source: 'path' };
  if (python && (await probes.canImportHloLsp(python))) {
    return { kind: 'ok', command: python, args: ['-m', 'hlo_lsp'], source: 'python' };
  }
  const where = python ? ` nor in the selected Python interpreter (${python})` : '';
  return {
    kind: 'missing',
    message: `This build of the extension has no bundled server (npm run bundle-server makes it), and no ` +
      `${DEFAULT_COMMAND} is on PATH${where}. Install one with: ${INSTALL_HINT}, then run "HLO: Restart Server", ` +
      'or set hlo.server.command.',
  };
}
