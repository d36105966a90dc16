/**
 * First-line sniffing: which of our languages a document is, from its opening text.
 *
 * VS Code ranks a file's extension above a language's `firstLine` pattern, so real dumps with plain names
 * (`000_45ad91e6d67cdb55.txt`) open as `plaintext`; the extension reads the first non-blank line and switches
 * the document's language. The values file (`*-buffer-assignment-values.txt`) starts with a blank line, hence
 * "first non-blank". Pure: no `vscode` import, so the unit tests run under plain node.
 */

export type HloLanguageId = 'hlo' | 'hlo-buffers';

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
