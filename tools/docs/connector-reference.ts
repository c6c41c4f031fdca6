/**
 * The connector reference: Markdown generated from the registered onramp and
 * offramp types (their config schemas, examples, default codecs) and the
 * prose in `docs/connectors/<type>.md`, so its tables never drift from the
 * code. Run directly (`node dist/tools/docs/connector-reference.js`, or
 * `npm run docs`), it rewrites the pages under docs/reference/connectors/
 * and removes those of types that are gone.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { stringify } from 'yaml';
import type { OfframpType, OnrampType } from '../../src/connectors/connector';
import { Registries } from '../../src/runtime/registries';
import { configRows } from '../../src/schema/describe';
import { typeInfo } from '../../src/runtime/type-info';

export { configRows, typeText, type ConfigRow } from '../../src/schema/describe';

/** Where the generated pages live, under the repository root: one `<type>.md` per connector type and a `README.md` index. */
export const CONNECTOR_REFERENCE_DIR = join('docs', 'reference', 'connectors');

/** The first line of every generated page. */
export const GENERATED_NOTE =
  '<!-- generated from the connector types and docs/connectors/<type>.md by tools/docs/connector-reference.ts: edit those, then run `npm run docs` -->';

export interface RenderOptions {
  /** where `<type>.md` files are read from; default `docs/connectors` under the repository root */
  docsDir?: string;
}

/** The repository root: the nearest directory above this file with a package.json (works from src/ and dist/src/). */
export function repoRoot(from: string = __dirname): string {
  let dir = from;
  for (;;) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`no package.json above ${from}`);
    dir = parent;
  }
}

type Side = 'onramp' | 'offramp';
/* eslint-disable @typescript-eslint/no-explicit-any -- a type of any config type */
type AnyType = OnrampType<any> | OfframpType<any>;
/* eslint-enable @typescript-eslint/no-explicit-any -- only AnyType needs it */

/**
 * The connector reference as pages, by file name: `README.md`, the index of
 * every onramp and offramp type, and one `<type>.md` per type with both its
 * sides and its prose, as Vector's component pages are.
 */
export function renderConnectorPages(registries: Registries, options: RenderOptions = {}): Map<string, string> {
  const docsDir = options.docsDir ?? join(repoRoot(), 'docs', 'connectors');
  const onramps = new Set(registries.onramps.names());
  const offramps = new Set(registries.offramps.names());
  const names = [...new Set([...onramps, ...offramps])].sort();
  const pages = new Map<string, string>();
  const index: string[] = [
    GENERATED_NOTE,
    '',
    '# Connector reference',
    '',
    'Every onramp and offramp type: its default codec, whether it can be a linked',
    'transport, its `config` (generated from the schema that validates it:',
    'unknown keys are refused), an example artefact, and how it behaves.',
    'Operators, processors and codecs are in the [config reference](../../reference.md).',
    '',
    '| Type | Onramp | Offramp |',
    '|---|---|---|',
    ...names.map((n) => `| [${n}](${n}.md) | ${onramps.has(n) ? 'yes' : ''} | ${offramps.has(n) ? 'yes' : ''} |`),
  ];
  pages.set('README.md', index.join('\n') + '\n');
  for (const name of names) {
    const out: string[] = [GENERATED_NOTE, '', `# ${name}`, '', `[All connectors](README.md)`];
    if (onramps.has(name)) out.push('', ...renderSide('onramp', name, registries.onramps.get(name), typeInfo(registries, 'onramp', name).description));
    if (offramps.has(name)) out.push('', ...renderSide('offramp', name, registries.offramps.get(name), typeInfo(registries, 'offramp', name).description));
    const prose = readProse(docsDir, name, 3, join(repoRoot(), CONNECTOR_REFERENCE_DIR));
    if (prose !== undefined) out.push('', '## Behaviour', '', prose);
    pages.set(`${name}.md`, out.join('\n') + '\n');
  }
  return pages;
}

/** What differs between `dir` and `pages`: files to write (missing or changed) and generated files no type renders any more. */
export function stalePages(dir: string, pages: Map<string, string>): { write: string[]; remove: string[] } {
  const present = existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.md')) : [];
  const write = [...pages].filter(([file, text]) => !present.includes(file) || readFileSync(join(dir, file), 'utf8') !== text).map(([file]) => file);
  const remove = present.filter((file) => !pages.has(file));
  return { write, remove };
}

/** Brings `dir` in line with `pages`; returns what it changed. */
export function writePages(dir: string, pages: Map<string, string>): { write: string[]; remove: string[] } {
  const stale = stalePages(dir, pages);
  mkdirSync(dir, { recursive: true });
  for (const file of stale.write) writeFileSync(join(dir, file), pages.get(file)!);
  for (const file of stale.remove) rmSync(join(dir, file));
  return stale;
}

function renderSide(side: Side, name: string, type: AnyType, description: string): string[] {
  const linkable = type.linkable === 'required' ? 'only linked (`linked: true` is required)' : type.linkable ? 'yes' : 'no';
  const lines = [`## ${name} ${side}`, '', ...(description ? [description, ''] : []), `Default codec: \`${type.defaultCodec}\`. Linkable: ${linkable}.`, ''];
  const rows = configRows(type.configSchema);
  if (rows.length === 0) lines.push('No config.');
  else {
    lines.push('| Field | Type | Default | Required | Description |', '|---|---|---|---|---|');
    for (const r of rows) lines.push(`| \`${r.field}\` | ${cell(r.type)} | ${r.default === undefined ? '' : `\`${cell(r.default)}\``} | ${r.required ? 'yes' : 'no'} | ${cell(r.description)} |`);
  }
  if (type.example !== undefined) {
    const artefact = { id: name, type: name, ...(type.linkable === 'required' ? { linked: true } : {}), config: type.example };
    lines.push('', 'Example:', '', '```yaml', stringify({ [side]: [artefact] }).trimEnd(), '```');
  }
  return lines;
}

/** A table cell: one line, pipes escaped. */
function cell(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ').replace(/\|/g, '\\|');
}

/**
 * The prose of `<docsDir>/<type>.md`, fitted under the page's heading: a
 * leading level-1 title is dropped (the page has its own) and the other
 * headings are shifted so the shallowest is level `top` (3: below
 * "## Behaviour"). Relative links are rewritten to point from `outDir`,
 * where the page is written, at what they point at from `docsDir`. Lines
 * inside fenced code blocks are left alone.
 */
export function readProse(docsDir: string, name: string, top = 3, outDir = docsDir): string | undefined {
  const path = join(docsDir, `${name}.md`);
  if (!existsSync(path)) return undefined;
  let lines = readFileSync(path, 'utf8').replace(/\r\n?/g, '\n').split('\n');
  while (lines.length > 0 && lines[0].trim() === '') lines.shift();
  if (/^#\s/.test(lines[0] ?? '')) lines = lines.slice(1);
  const headings = outsideFences(lines).filter((i) => /^#{1,6}\s/.test(lines[i]));
  const shallowest = Math.min(...headings.map((i) => lines[i].indexOf(' ')));
  const shift = headings.length === 0 ? 0 : top - shallowest;
  for (const i of headings) {
    const level = Math.min(6, lines[i].indexOf(' ') + shift);
    lines[i] = '#'.repeat(level) + lines[i].slice(lines[i].indexOf(' '));
  }
  for (const i of outsideFences(lines)) lines[i] = rebaseLinks(lines[i], docsDir, outDir);
  return lines.join('\n').trim();
}

/** `[text](path)` with a relative path, as seen from `to` instead of `from`; URLs, anchors and absolute paths stay. */
function rebaseLinks(line: string, from: string, to: string): string {
  if (from === to) return line;
  return line.replace(/\]\(([^)#\s]+)(#[^)\s]*)?\)/g, (link: string, path: string, anchor = '') =>
    /^([a-z][a-z0-9+.-]*:|\/)/i.test(path) ? link : `](${relative(to, resolve(from, path)).split('\\').join('/')}${anchor})`,
  );
}

/** Indexes of the lines outside fenced code blocks. */
function outsideFences(lines: string[]): number[] {
  const indexes: number[] = [];
  let fence: string | undefined;
  lines.forEach((line, i) => {
    const open = /^\s*(```+|~~~+)/.exec(line);
    if (fence === undefined && open) fence = open[1][0];
    else if (fence !== undefined && open && open[1][0] === fence) fence = undefined;
    else if (fence === undefined) indexes.push(i);
  });
  return indexes;
}

if (require.main === module) {
  const dir = join(repoRoot(), CONNECTOR_REFERENCE_DIR);
  const { write, remove } = writePages(dir, renderConnectorPages(Registries.withBuiltins()));
  if (write.length === 0 && remove.length === 0) process.stdout.write(`${CONNECTOR_REFERENCE_DIR}: the connector reference is up to date\n`);
  else {
    for (const file of write) process.stdout.write(`${join(CONNECTOR_REFERENCE_DIR, file)}: written\n`);
    for (const file of remove) process.stdout.write(`${join(CONNECTOR_REFERENCE_DIR, file)}: removed (no such type)\n`);
  }
}
