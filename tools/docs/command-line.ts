/**
 * The `--help` texts in the docs, generated from the commands' declarations
 * (src/cli/), so the docs list exactly the flags the CLI takes. A region
 *
 *     <!-- eddy tap --help -->          (or `<!-- eddy tap usage -->`, `<!-- eddy --help -->`)
 *     ```
 *     ...
 *     ```
 *
 * holds what that command prints. Run directly
 * (`node dist/tools/docs/command-line.js`, or `npm run docs`), it rewrites
 * the regions of every file in DOCS; test/cli/help.test.ts fails when one is
 * out of date.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { help, usage } from '../../src/cli/command';
import { COMMANDS, overview } from '../../src/cli/main';
import { repoRoot } from './connector-reference';

/** The files with generated regions, from the repository root. */
export const DOCS = [join('docs', 'command-line.md'), join('docs', 'observe.md')];

/** A region: its marker line, then a fenced block (replaced). */
const REGION = /^<!-- eddy (?:(--help)|(.+?) (--help|usage)) -->\n```\n[\s\S]*?^```$/gm;

/** The text a marker asks for. */
function generated(marker: string): string {
  if (marker === 'eddy --help') return overview();
  const match = /^eddy (.+?) (--help|usage)$/.exec(marker);
  if (match === null) throw new Error(`<!-- ${marker} -->: not a marker of this page (eddy --help, eddy COMMAND --help, eddy COMMAND usage)`);
  const [, name, what] = match;
  const command = COMMANDS.find((c) => c.name === name);
  if (command === undefined) throw new Error(`<!-- ${marker} -->: no command '${name}' (commands: ${COMMANDS.map((c) => c.name).join(', ')})`);
  return what === '--help' ? help(command) : `${usage(command)}\n`;
}

/** `text` with every region's block rewritten from the declarations. */
export function renderRegions(text: string): string {
  return text.replace(REGION, (region) => {
    const marker = region.slice('<!-- '.length, region.indexOf(' -->'));
    return `<!-- ${marker} -->\n\`\`\`\n${generated(marker)}\`\`\``;
  });
}

/** The markers of `text`'s regions: `eddy tap --help`, ... */
export function regionsOf(text: string): string[] {
  return [...text.matchAll(REGION)].map((m) => m[0].slice('<!-- '.length, m[0].indexOf(' -->')));
}

if (require.main === module) {
  for (const doc of DOCS) {
    const path = join(repoRoot(), doc);
    const before = readFileSync(path, 'utf8');
    const after = renderRegions(before);
    if (after !== before) writeFileSync(path, after);
    process.stdout.write(`${doc}: ${regionsOf(before).length} regions${after === before ? '' : ', rewritten'}\n`);
  }
}
