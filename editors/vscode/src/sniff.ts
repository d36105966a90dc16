/**
 * First-line sniffing: which of our languages a document is, from its opening text.
 *
 * VS Code ranks a file's extension above a language's `firstLine` pattern, so real dumps with plain names
 * (`000_45ad91e6d67cdb55.txt`) open as `plaintext`; the extension reads the first non-blank line and switches
 * the document's language. The values file (`*-buffer-assignment-values.txt`) starts with a blank line, hence
 * "first non-blank". Pure: no `vscode` import, so the unit tests run under plain node.
 */

export type HloLanguageId = 'hlo' | 'hlo-buffers' | 'hlo-oom';

/** How many leading lines are read before giving up (blank lines before the header are rare and short). */
export const SNIFF_LINES = 5;

const HEADERS: ReadonlyArray<[string, HloLanguageId]> = [
  ['HloModule ', 'hlo'],
  ['BufferAssignment:', 'hlo-buffers'],
  ['HloLiveRange', 'hlo-buffers'],
  ['Total bytes used:', 'hlo-buffers'],
  ['Memory Space:', 'hlo-buffers'],
];

/**
 * Returns the language of a document whose first lines are `lines`, or `undefined` when the first non-blank
 * line (among the first {@link SNIFF_LINES}) starts with none of the known headers.
 */
export function sniffLanguage(lines: readonly string[]): HloLanguageId | undefined {
  for (const raw of lines.slice(0, SNIFF_LINES)) {
    const line = raw.replace(/^\uFEFF/, '');
    if (line.trim() === '') continue;
    for (const [prefix, id] of HEADERS) {
      if (line.startsWith(prefix)) return id;
    }
    return undefined;
  }
  return undefined;
}

// XLA's message lines with their numbers (as `hlo_lsp.core.memory.oom`): prose that only names them is not a report.
const SIZE = '[0-9.]+[KMGTP]?B?';
const LONG = new RegExp(`Ran out of memory in memory space \\w+\\. Used ${SIZE} of ${SIZE} \\w+\\.`);
const SHORT = new RegExp(`HLO temporaries \\(${SIZE}\\) exceeds available \\w+ \\(${SIZE}\\)`);
const PROGRAM = new RegExp(`^Program \\w+ requirement ${SIZE}:\\s*\\n[\\s\\S]*Largest program allocations in `);

/** How much of a plain-text document is searched for an out-of-memory report (a log of a few MB is common). */
export const OOM_SNIFF_CHARS = 8_000_000;

/**
 * Whether `text` holds XLA's compile-time out-of-memory report (`RESOURCE_EXHAUSTED ... Ran out of memory in
 * memory space`, or the short form `HLO temporaries (...) exceeds available`), anywhere: it is usually pasted
 * into, or saved inside, a longer log whose first lines say nothing. The server tells it the same way
 * (`hlo_lsp.core.memory.oom.looks_like_oom`).
 */
export function sniffOom(text: string): boolean {
  const head = text.length > OOM_SNIFF_CHARS ? text.slice(0, OOM_SNIFF_CHARS) : text;
  return (
    (head.includes('Ran out of memory in memory space ') && LONG.test(head)) ||
    (head.includes('HLO temporaries (') && SHORT.test(head)) ||
    PROGRAM.test(head.trimStart())
  );
}
