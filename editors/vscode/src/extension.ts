/**
 * The VS Code side of hlo-lsp: language switching for plainly named dumps, and a language client that starts
 * the Python server (the one bundled in the extension, or the user's own from `hlo.server.command`) when the
 * first HLO or buffer-assignment document opens.
 *
 * The extension activates on `plaintext` too (real dumps are often `<hash>.txt`, and VS Code ranks the `.txt`
 * extension above `firstLine`), but it starts no server for a text file that is not a dump.
 */
import * as cp from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import {
  CodeLensRequest,
  ExecuteCommandRequest,
  InlayHintRequest,
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
  State,
  TransportKind,
} from 'vscode-languageclient/node';
import { INSTALL_HINT, Probes, resolveServerCommand, which } from './serverCommand';
import { SNIFF_LINES, sniffLanguage, sniffOom } from './sniff';

// hlo-dump-info: the other files of a dump folder (thunk sequences, config protos); the server says what each is.
const LANGUAGES = ['hlo', 'hlo-buffers', 'hlo-dump-info', 'hlo-oom'];
/** Commands the extension registers itself; the client must not register them again from the server's list. */
const OWN_COMMANDS = new Set([
  'hlo.restartServer',
  'hlo.showMemoryTimeline',
  'hlo.showHeapMap',
  'hlo.peakGroups',
  'hlo.comparePeaks',
  'hlo.rankFolder',
  'hlo.passDiff',
  'hlo.passTrace',
]);
const SNIFF_SCHEMES = new Set(['file', 'untitled', 'vscode-remote']);

let client: LanguageClient | undefined;
let starting: Promise<void> | undefined;
let output: vscode.LogOutputChannel;
let status: vscode.LanguageStatusItem;
/** Documents switched once already: if the user sets them back to plain text, leave them so. */
const switched = new Set<string>();

export function activate(context: vscode.ExtensionContext): void {
  extensionPath = context.extensionPath;
  output = vscode.window.createOutputChannel('HLO Language Server', { log: true });
  status = vscode.languages.createLanguageStatusItem('hlo.server', LANGUAGES.map((language) => ({ language })));
  status.name = 'HLO language server';
  status.command = { title: 'Restart', command: 'hlo.restartServer' };
  setStatus('idle');
  // a workspace-level item beside it: this folder's modules ranked by peak (hlo-lsp peak DIR)
  const rank = vscode.languages.createLanguageStatusItem('hlo.rank', LANGUAGES.map((language) => ({ language })));
  rank.name = 'HLO modules by peak';
  rank.text = 'Modules by peak';
  rank.command = { title: 'Rank', command: 'hlo.rankFolder' };
  context.subscriptions.push(rank);
  context.subscriptions.push(
    output,
    status,
    vscode.workspace.onDidOpenTextDocument((doc) => onDocument(doc)),
    vscode.workspace.onDidChangeTextDocument((e) => {
      if (e.document.isUntitled && e.document.languageId === 'plaintext') sniff(e.document);
    }),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration('hlo.server.command')) void restart();
      else if (e.affectsConfiguration('hlo.inlayHints.enabled') || e.affectsConfiguration('hlo.codeLens.enabled')) {
        refreshHintsAndLenses();
      }
    }),
    vscode.commands.registerCommand('hlo.restartServer', () => restart()),
    vscode.commands.registerCommand('hlo.showMemoryTimeline', (arg?: unknown) => showChart(arg, TIMELINE)),
    vscode.commands.registerCommand('hlo.showHeapMap', (arg?: unknown) => showChart(arg, HEAP_MAP)),
    vscode.commands.registerCommand('hlo.peakGroups', (arg?: unknown) => peakGroups(arg)),
    vscode.commands.registerCommand('hlo.comparePeaks', (arg?: unknown, all?: unknown) => comparePeaks(arg, all)),
    vscode.commands.registerCommand('hlo.rankFolder', (arg?: unknown) => rankFolder(arg)),
    vscode.commands.registerCommand('hlo.passDiff', (arg?: unknown) => passDiff(arg)),
    vscode.commands.registerCommand('hlo.passTrace', () => passTrace()),
    vscode.commands.registerCommand('hlo.compareWithPreviousPass', (arg?: unknown) => compareWithPreviousPass(arg)),
    vscode.commands.registerCommand('hlo.previousVersion', () => stepVersion('previous')),
    vscode.commands.registerCommand('hlo.nextVersion', () => stepVersion('next')),
    vscode.workspace.registerTextDocumentContentProvider(REPORT_SCHEME, reports),
  );
  for (const doc of vscode.workspace.textDocuments) onDocument(doc);
}

export async function deactivate(): Promise<void> {
  await stopClient();
}

function onDocument(doc: vscode.TextDocument): void {
  if (doc.languageId === 'plaintext' || doc.languageId === 'log') sniff(doc);
  else if (LANGUAGES.includes(doc.languageId)) void ensureClient();
}

/** Switches a plain-text document whose first non-blank line is a dump header, or a plain-text or Log document
 * that holds an out-of-memory report anywhere, to our language. */
function sniff(doc: vscode.TextDocument): void {
  const key = doc.uri.toString();
  if (!SNIFF_SCHEMES.has(doc.uri.scheme) || switched.has(key)) return;
  const lines: string[] = [];
  for (let i = 0; i < Math.min(doc.lineCount, SNIFF_LINES); i++) lines.push(doc.lineAt(i).text);
  // a .log file opens as VS Code's "Log": only an out-of-memory report inside it switches it
  const first = doc.languageId === 'plaintext' ? sniffLanguage(lines) : undefined;
  const language = first ?? (sniffOom(doc.getText()) ? 'hlo-oom' : undefined);
  if (!language) return;
  switched.add(key);
  const why = first ? `first line says ${language}` : 'it holds an XLA out-of-memory report';
  output.appendLine(`${path.basename(doc.uri.path)}: ${why}; switching language`);
  vscode.languages.setTextDocumentLanguage(doc, language).then(undefined, (e) => {
    output.appendLine(`could not switch ${key} to ${language}: ${String(e)}`);
  });
}

function ensureClient(): Promise<void> {
  if (client) return Promise.resolve();
  if (!starting) starting = startClient().finally(() => (starting = undefined));
  return starting;
}

function settings(): Record<string, unknown> {
  const config = vscode.workspace.getConfiguration('hlo');
  return {
    server: { command: config.get('server.command') },
    inlayHints: { enabled: config.get<boolean>('inlayHints.enabled', true) },
    codeLens: { enabled: config.get<boolean>('codeLens.enabled', true) },
    oom: { dumpFolder: config.get<string>('oom.dumpFolder', '') },
  };
}

function enabled(feature: 'inlayHints' | 'codeLens'): boolean {
  return vscode.workspace.getConfiguration('hlo').get<boolean>(`${feature}.enabled`, true);
}

let extensionPath = '';

const probes: Probes = {
  which: (name) => which(name),
  pythonInterpreter,
  canImportHloLsp: (python) =>
    new Promise((resolve) => {
      cp.execFile(python, ['-c', 'import hlo_lsp'], { timeout: 20000 }, (err) => resolve(!err));
    }),
  isPython310: (python) =>
    new Promise((resolve) => {
      cp.execFile(python, ['-c', 'import sys; sys.exit(sys.version_info < (3, 10))'], { timeout: 20000 }, (err) =>
        resolve(!err));
    }),
  bundledServer: () => {
    const launcher = path.join(extensionPath, 'bundled', 'tool', 'hlo_lsp_server.py');
    const libs = path.join(extensionPath, 'bundled', 'libs', 'hlo_lsp');
    return fs.existsSync(launcher) && fs.existsSync(libs) ? launcher : undefined;
  },
};

/** The Python extension's interpreter for the first workspace folder, or undefined without the extension. */
async function pythonInterpreter(): Promise<string | undefined> {
  const ext = vscode.extensions.getExtension('ms-python.python');
  if (!ext) return undefined;
  try {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const api: any = ext.isActive ? ext.exports : await ext.activate();
    const resource = vscode.workspace.workspaceFolders?.[0]?.uri;
    const active = api?.environments?.getActiveEnvironmentPath?.(resource);
    if (active?.path) {
      const env = await api.environments.resolveEnvironment?.(active);
      return env?.executable?.uri?.fsPath ?? active.path;
    }
    const exec: string[] | undefined = api?.settings?.getExecutionDetails?.(resource)?.execCommand;
    return exec?.[0];
  } catch (e) {
    output.appendLine(`could not ask the Python extension for its interpreter: ${String(e)}`);
    return undefined;
  }
}

async function startClient(): Promise<void> {
  const resolved = await resolveServerCommand(vscode.workspace.getConfiguration('hlo').get('server.command'), probes);
  if (resolved.kind === 'missing') {
    setStatus('missing');
    output.appendLine(resolved.message);
    void showMissing(resolved.message);
    return;
  }
  output.appendLine(`starting: ${[resolved.command, ...resolved.args].join(' ')} (from ${resolved.source})`);
  const serverOptions: ServerOptions = {
    command: resolved.command,
    args: resolved.args,
    transport: TransportKind.stdio,
  };
  const clientOptions: LanguageClientOptions = {
    documentSelector: LANGUAGES.map((language) => ({ language })),
    outputChannel: output,
    initializationOptions: settings(),
    synchronize: {
      configurationSection: 'hlo',
      fileEvents: vscode.workspace.createFileSystemWatcher('**/*.{txt,hlo}'),
    },
    middleware: {
      provideInlayHints: (doc, range, token, next) => (enabled('inlayHints') ? next(doc, range, token) : []),
      provideCodeLenses: (doc, token, next) => (enabled('codeLens') ? next(doc, token) : []),
    },
  };
  const next = new LanguageClient('hlo', 'HLO Language Server', serverOptions, clientOptions);
  skipOwnCommands(next);
  next.onDidChangeState((e) => setStatus(e.newState === State.Running ? 'running' : 'stopped'));
  client = next;
  try {
    await next.start();
  } catch (e) {
    client = undefined;
    setStatus('failed');
    const own = resolved.source === 'setting' || resolved.source === 'path';
    const message = `The HLO language server (${[resolved.command, ...resolved.args].join(' ')}) did not start: ` +
      `${errorText(e)}. ` + (own ? `Install or update it with: ${INSTALL_HINT}, or clear hlo.server.command to ` +
        'use the server bundled with the extension.' : 'See the "HLO Language Server" output for its log.');
    output.appendLine(message);
    void showMissing(message);
  }
}

/** Makes VS Code ask again for inlay hints and code lenses, so a toggled setting shows at once. */
function refreshHintsAndLenses(): void {
  if (!client || client.state !== State.Running) return;
  const hints = client.getFeature(InlayHintRequest.method);
  const lenses = client.getFeature(CodeLensRequest.method);
  for (const doc of vscode.workspace.textDocuments) {
    if (!LANGUAGES.includes(doc.languageId)) continue;
    hints?.getProvider(doc)?.onDidChangeInlayHints.fire();
    lenses?.getProvider(doc)?.onDidChangeCodeLensEmitter.fire();
  }
}

/**
 * The client registers a VS Code command for each command the server lists in `executeCommandProvider`; the
 * extension registers `hlo.showMemoryTimeline` itself (it shows the result), so a duplicate would throw.
 */
function skipOwnCommands(lc: LanguageClient): void {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const feature = (lc as any).getFeature?.(ExecuteCommandRequest.method);
  if (!feature || typeof feature.register !== 'function') return;
  const register = feature.register.bind(feature);
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  feature.register = (data: any) => {
    const commands: string[] = data?.registerOptions?.commands ?? [];
    register({ ...data, registerOptions: { ...data.registerOptions, commands: commands.filter((c) => !OWN_COMMANDS.has(c)) } });
  };
}

async function stopClient(): Promise<void> {
  const old = client;
  client = undefined;
  if (!old) return;
  try {
    if (old.state === State.Running) await old.stop(5000);
    await old.dispose();
  } catch (e) {
    output.appendLine(`stopping the server: ${errorText(e)}`);
  }
}

async function restart(): Promise<void> {
  if (starting) await starting;
  await stopClient();
  setStatus('idle');
  const open = vscode.workspace.textDocuments.some((d) => LANGUAGES.includes(d.languageId));
  if (open) await ensureClient();
  if (client) vscode.window.setStatusBarMessage('HLO language server restarted', 3000);
}

async function showMissing(message: string): Promise<void> {
  const log = 'Show log';
  const open = 'Open settings';
  const choice = await vscode.window.showErrorMessage(message, log, open);
  if (choice === log) output.show();
  else if (choice === open) await vscode.commands.executeCommand('workbench.action.openSettings', 'hlo.server.command');
}

/**
 * The document a timeline is for: the command's argument (a URI string, a file path as the server's code lenses
 * pass it, or a `vscode.Uri` from a menu), else the active editor's document when it is one of ours.
 */
function timelineTarget(arg: unknown): vscode.Uri | undefined {
  if (arg instanceof vscode.Uri) return arg;
  if (typeof arg === 'string' && arg !== '') {
    return /^[a-zA-Z][\w+.-]+:/.test(arg) && !/^[a-zA-Z]:[\\/]/.test(arg) ? vscode.Uri.parse(arg) : vscode.Uri.file(arg);
  }
  const doc = vscode.window.activeTextEditor?.document;
  return doc && LANGUAGES.includes(doc.languageId) && doc.languageId !== 'hlo-dump-info' ? doc.uri : undefined;
}

/** A chart the server writes: its command, the webview's type and title, and what to call it in messages. */
interface Chart {
  command: string;
  viewType: string;
  title: string;
  what: string;
}
const TIMELINE: Chart = { command: 'hlo.showMemoryTimeline', viewType: 'hloMemoryTimeline', title: 'Memory', what: 'memory timeline' };
const HEAP_MAP: Chart = { command: 'hlo.showHeapMap', viewType: 'hloHeapMap', title: 'Heap map', what: 'heap map' };

/** One chart panel per document and chart, reused when the command runs again. */
const chartPanels = new Map<string, vscode.WebviewPanel>();

/**
 * Asks the server (`workspace/executeCommand` `hlo.showMemoryTimeline` or `hlo.showHeapMap`, argument: the
 * document URI) for an HTML chart and shows the file it names in a webview. A null answer or an error becomes a
 * message, never a throw.
 */
async function showChart(arg: unknown, chart: Chart): Promise<void> {
  const target = timelineTarget(arg);
  if (!target) {
    void vscode.window.showInformationMessage('Open an HLO module or a buffer-assignment dump first.');
    return;
  }
  const name = path.basename(target.path);
  await ensureClient();
  if (!client || client.state !== State.Running) {
    void vscode.window.showWarningMessage(`The HLO language server is not running, so it cannot draw a ${chart.what}.`);
    return;
  }
  let answer: unknown;
  try {
    answer = await client.sendRequest(ExecuteCommandRequest.type, { command: chart.command, arguments: [target.toString()] });
  } catch (e) {
    void vscode.window.showWarningMessage(`The server could not draw a ${chart.what} for ${name}: ${errorText(e)}`);
    return;
  }
  const file = typeof answer === 'string' ? answer : (answer as { uri?: unknown } | null)?.uri;
  if (typeof file !== 'string' || file === '') {
    void vscode.window.showInformationMessage(`No ${chart.what} for ${name}: the server found no buffer assignment for it.`);
    return;
  }
  try {
    const uri = vscode.Uri.parse(file);
    const html = new TextDecoder().decode(await vscode.workspace.fs.readFile(uri));
    const key = `${chart.viewType} ${target.toString()}`;
    let panel = chartPanels.get(key);
    if (panel) {
      panel.reveal();
    } else {
      // The active column, full width: the charts are wide (a side panel of peak buffers, a step axis).
      panel = vscode.window.createWebviewPanel(chart.viewType, `${chart.title}: ${name}`, vscode.ViewColumn.Active, {
        enableScripts: true,
        retainContextWhenHidden: true,
        localResourceRoots: [vscode.Uri.joinPath(uri, '..')],
      });
      chartPanels.set(key, panel);
      panel.onDidDispose(() => chartPanels.delete(key));
    }
    panel.webview.html = html;
  } catch (e) {
    void vscode.window.showWarningMessage(`Could not open the ${chart.what} ${file}: ${errorText(e)}`);
  }
}

/** The values live at XLA's peak grouped by source line, op_name, dtype, category and argument (a lens or the
 * palette on the active dump), as a read-only document. */
async function peakGroups(arg?: unknown): Promise<void> {
  const target = timelineTarget(arg);
  if (!target) {
    void vscode.window.showInformationMessage('Open an HLO module or a buffer-assignment dump first.');
    return;
  }
  await showReport('hlo.peakGroups', [target.toString()], 'group the peak');
}

function setStatus(state: 'idle' | 'running' | 'stopped' | 'missing' | 'failed'): void {
  const text: Record<typeof state, string> = {
    idle: 'hlo-lsp: not started',
    running: 'hlo-lsp: running',
    stopped: 'hlo-lsp: stopped',
    missing: 'hlo-lsp: not installed',
    failed: 'hlo-lsp: failed to start',
  };
  status.text = text[state];
  status.severity = state === 'missing' || state === 'failed'
    ? vscode.LanguageStatusSeverity.Error
    : vscode.LanguageStatusSeverity.Information;
  status.detail = state === 'missing' || state === 'failed' ? INSTALL_HINT : undefined;
}

/** Read-only documents made by the server (a peak diff, a folder's ranking): text kept here by URI. */
const REPORT_SCHEME = 'hlo-report';
class Reports implements vscode.TextDocumentContentProvider {
  private texts = new Map<string, string>();
  private seq = 0;
  add(title: string, text: string): vscode.Uri {
    const uri = vscode.Uri.from({ scheme: REPORT_SCHEME, path: `/${++this.seq}/${title.replace(/[\\/]/g, '_')}.txt` });
    this.texts.set(uri.toString(), text);
    return uri;
  }
  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.texts.get(uri.toString()) ?? '';
  }
}
const reports = new Reports();

/** Runs a server command that answers `{title, text}` and shows the text as a read-only document. */
async function showReport(command: string, args: unknown[], what: string): Promise<void> {
  await ensureClient();
  if (!client || client.state !== State.Running) {
    void vscode.window.showWarningMessage(`The HLO language server is not running, so it cannot ${what}.`);
    return;
  }
  let answer: unknown;
  try {
    answer = await client.sendRequest(ExecuteCommandRequest.type, { command, arguments: args });
  } catch (e) {
    void vscode.window.showWarningMessage(`Could not ${what}: ${errorText(e)}`);
    return;
  }
  const { title, text } = (answer ?? {}) as { title?: unknown; text?: unknown };
  if (typeof text !== 'string') return;
  const doc = await vscode.workspace.openTextDocument(reports.add(String(title ?? 'hlo-lsp'), text));
  await vscode.window.showTextDocument(doc, { preview: false });
}

function uriArg(arg: unknown): vscode.Uri | undefined {
  return arg instanceof vscode.Uri ? arg : undefined;
}

/** Two dumps chosen in the explorer (or in a file dialog), or the two newest modules of a folder: their peak diff. */
async function comparePeaks(arg?: unknown, all?: unknown): Promise<void> {
  let chosen = Array.isArray(all) ? all.filter((x): x is vscode.Uri => x instanceof vscode.Uri) : [];
  const one = uriArg(arg);
  if (chosen.length !== 2 && one) chosen = [one];
  if (chosen.length === 0) {
    const picked = await vscode.window.showOpenDialog({
      canSelectMany: true,
      canSelectFolders: false,
      openLabel: 'Compare (old first)',
      title: 'Two files of two dumps (old, new), or one: compare with the newest other module of its folder',
    });
    if (!picked || picked.length === 0) return;
    chosen = picked.slice(0, 2);
  }
  const args = chosen.length === 2 ? chosen.map((u) => u.toString()) : [await folderOf(chosen[0])];
  await showReport('hlo.peakDiff', args, 'compare the peaks');
}

async function folderOf(uri: vscode.Uri): Promise<string> {
  try {
    const stat = await vscode.workspace.fs.stat(uri);
    if (stat.type & vscode.FileType.Directory) return uri.toString();
  } catch {
    /* not there: its folder */
  }
  return vscode.Uri.joinPath(uri, '..').toString();
}

/** The modules of a folder (the explorer's, the active file's, else the first workspace folder) ranked by peak. */
async function rankFolder(arg?: unknown): Promise<void> {
  const start = uriArg(arg) ?? vscode.window.activeTextEditor?.document.uri ?? vscode.workspace.workspaceFolders?.[0]?.uri;
  if (!start || start.scheme !== 'file') {
    void vscode.window.showInformationMessage('Open a file of a dump folder (or a workspace) first.');
    return;
  }
  await showReport('hlo.rankModules', [await folderOf(start)], 'rank the modules by peak');
}

// -- pass-by-pass dumps (--xla_dump_hlo_pass_re=.*) ---------------------------------------------------------

/** The document a pass command is about: the lens's URI argument, the explorer's file, else the active editor's. */
function passDocument(arg?: unknown): vscode.Uri | undefined {
  if (typeof arg === 'string') return vscode.Uri.parse(arg);
  return uriArg(arg) ?? vscode.window.activeTextEditor?.document.uri;
}

async function askServer(command: string, args: unknown[], what: string): Promise<unknown> {
  await ensureClient();
  if (!client || client.state !== State.Running) {
    void vscode.window.showWarningMessage(`The HLO language server is not running, so it cannot ${what}.`);
    return undefined;
  }
  try {
    return await client.sendRequest(ExecuteCommandRequest.type, { command, arguments: args });
  } catch (e) {
    void vscode.window.showWarningMessage(`Could not ${what}: ${errorText(e)}`);
    return undefined;
  }
}

/** What the pass of this file did, against the file before it, as a read-only document. */
async function passDiff(arg?: unknown): Promise<void> {
  const uri = passDocument(arg);
  if (!uri) return;
  await showReport('hlo.passDiff', [uri.toString()], 'show what this pass did');
}

/** The history of the instruction under the cursor through every pass file, as a read-only document. */
async function passTrace(): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  if (!editor) return;
  await showReport('hlo.passTrace', [editor.document.uri.toString(), editor.selection.active.line], 'trace it');
}

/** This pass file and the one before it, in VS Code's diff editor. */
async function compareWithPreviousPass(arg?: unknown): Promise<void> {
  const uri = passDocument(arg);
  if (!uri) return;
  const answer = (await askServer('hlo.passFiles', [uri.toString()], 'list the pass files')) as
    | { index?: number; files?: { uri: string; label: string }[] }
    | undefined;
  const files = answer?.files ?? [];
  const i = answer?.index ?? -1;
  if (i < 1 || i >= files.length) {
    void vscode.window.showInformationMessage('This is the first file of its pass history: nothing before it.');
    return;
  }
  const title = `${files[i - 1].label} ↔ ${files[i].label}`;
  await vscode.commands.executeCommand('vscode.diff', vscode.Uri.parse(files[i - 1].uri), vscode.Uri.parse(files[i].uri), title);
}

/** The previous or next version of the instruction under the cursor (the file where a pass changed it). */
async function stepVersion(direction: 'previous' | 'next'): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  if (!editor) return;
  const args = [editor.document.uri.toString(), editor.selection.active.line, direction];
  const got = (await askServer('hlo.passNeighbor', args, `find the ${direction} version`)) as
    | { uri: string; line: number | null; label: string; change: string }
    | null
    | undefined;
  if (got === undefined) return;
  if (got === null) {
    void vscode.window.showInformationMessage(`No ${direction} version of this instruction.`);
    return;
  }
  const doc = await vscode.workspace.openTextDocument(vscode.Uri.parse(got.uri));
  const at = new vscode.Position(got.line ?? 0, 0);
  await vscode.window.showTextDocument(doc, { selection: new vscode.Range(at, at), preview: false });
  if (got.change === 'removed') void vscode.window.showInformationMessage(`Removed in ${got.label}.`);
}

function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
