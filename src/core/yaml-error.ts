/**
 * The message of a YAML syntax error with the offending line shown under it
 * and a caret at the column. The yaml library's own excerpt is dropped: it is
 * spread over several lines with blank ones between, shows nothing but the
 * caret when the error is at the end of the document, and its first line
 * alone (what was shown before) ends in "column 1:" with nothing after it.
 * This module takes the error's position only, so it needs no yaml import.
 */

/** Characters of a long line shown around the column. */
const WINDOW = 80;

interface LinePos {
  line: number;
  col: number;
}

/** `reason at line L, column C:` then the line before, the line itself and a caret under the column. */
export function yamlErrorMessage(err: unknown, text: string): string {
  const message = err instanceof Error ? err.message : String(err);
  const first = message.split('\n')[0].replace(/:\s*$/, '');
  const pos = (err as { linePos?: LinePos[] }).linePos?.[0];
  if (!pos || !Number.isInteger(pos.line) || pos.line < 1) return first;
  return `${first}:\n${excerpt(text, pos.line, Math.max(1, pos.col))}`;
}

/** Line `line` (1-based) of `text` with the one before it, numbered, and a caret under column `col`. */
export function excerpt(text: string, line: number, col: number): string {
  const lines = text.split(/\r?\n/);
  const at = lines[line - 1] ?? '';
  // a long line is shown around the column, the context line over the same span
  const start = at.length > WINDOW && col > WINDOW / 2 ? Math.min(col - 1 - WINDOW / 2, at.length - WINDOW) : 0;
  const cut = (s: string) => {
    const part = s.slice(start, start + WINDOW);
    return (start > 0 && s.length > 0 ? '…' : '') + part + (s.length > start + WINDOW ? '…' : '');
  };
  const width = String(line).length;
  const row = (n: number, s: string) => `  ${String(n).padStart(width)} | ${cut(s)}`.trimEnd();
  const shown = line >= 2 ? [row(line - 1, lines[line - 2]), row(line, at)] : [row(line, at)];
  // the caret's indent copies the tabs before the column, so it lines up however tabs are shown
  const before = (start > 0 ? '…' : '') + at.slice(start, col - 1);
  const indent = before.replace(/[^\t]/g, ' ');
  shown.push(`  ${' '.repeat(width)} | ${indent}^`);
  return shown.join('\n');
}
