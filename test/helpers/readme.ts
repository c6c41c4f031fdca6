import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export const ROOT = join(__dirname, '../../..');

/**
 * The `nth` fenced block of `lang` ('' for a plain block) in the section
 * under `heading` (a whole line such as `## Quick start`) of `file`, a path
 * from the repository root: the blocks a user pastes are read from the page
 * that shows them, so a test runs exactly what the page says.
 */
export function docBlock(file: string, heading: string, lang: string, nth = 0): string {
  // a leading newline, so a heading on the first line is found like any other
  const text = `\n${readFileSync(join(ROOT, file), 'utf8')}`;
  const at = text.indexOf(`\n${heading}\n`);
  if (at < 0) throw new Error(`${file}: no section '${heading}'`);
  // the section ends at the next heading (outside a block) of the same level or above
  const level = heading.indexOf(' ');
  const ends = new RegExp(`^#{1,${level}} `);
  // walk the fences line by line, so a closing fence is never taken for an opening one
  const blocks: { lang: string; text: string }[] = [];
  let open: { lang: string; lines: string[] } | undefined;
  for (const line of text
    .slice(at + 1)
    .split('\n')
    .slice(1)) {
    if (!open && ends.test(line)) break;
    if (!line.startsWith('```')) open?.lines.push(line);
    else if (open) {
      blocks.push({ lang: open.lang, text: `${open.lines.join('\n')}\n` });
      open = undefined;
    } else open = { lang: line.slice(3).trim(), lines: [] };
  }
  const block = blocks.filter((b) => b.lang === lang)[nth];
  if (!block) throw new Error(`${file}: no ${lang || 'plain'} block #${nth + 1} under '${heading}'`);
  return block.text;
}

/** The `nth` fenced block of `lang` in the README section under `heading`. */
export function readmeBlock(heading: string, lang: string, nth = 0): string {
  return docBlock('README.md', heading, lang, nth);
}
