import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export const ROOT = join(__dirname, '../../..');

/** The `nth` fenced block of `lang` ('' for a plain block) in the README section under `heading`. */
export function readmeBlock(heading: string, lang: string, nth = 0): string {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const at = readme.indexOf(`\n${heading}\n`);
  if (at < 0) throw new Error(`README.md: no section '${heading}'`);
  const section = readme.slice(at + 1).split(/\n## /)[0];
  // walk the fences line by line, so a closing fence is never taken for an opening one
  const blocks: { lang: string; text: string }[] = [];
  let open: { lang: string; lines: string[] } | undefined;
  for (const line of section.split('\n')) {
    if (!line.startsWith('```')) open?.lines.push(line);
    else if (open) {
      blocks.push({ lang: open.lang, text: `${open.lines.join('\n')}\n` });
      open = undefined;
    } else open = { lang: line.slice(3).trim(), lines: [] };
  }
  const block = blocks.filter((b) => b.lang === lang)[nth];
  if (!block) throw new Error(`README.md: no ${lang || 'plain'} block #${nth + 1} under '${heading}'`);
  return block.text;
}
