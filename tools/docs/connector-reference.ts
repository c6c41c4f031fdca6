/**
 * The connector reference, kept in one place: each `docs/connectors/<type>.md`
 * is the page of its type, its behaviour written by hand, its configuration
 * (the config schemas' tables, examples, default codecs) generated into a
 * marked part at its end from the registered onramp and offramp types, so
 * the tables never drift from the code and the prose exists once. Run
 * directly (`node dist/tools/docs/connector-reference.js`, or `npm run
 * docs`), it rewrites those parts and `docs/connectors/README.md`, the index.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { stringify } from 'yaml';
import type { OfframpType, OnrampType } from '../../src/connectors/connector';
import { Registries } from '../../src/runtime/registries';
import { configRows } from '../../src/schema/describe';
import { typeInfo } from '../../src/runtime/type-info';

export { configRows, typeText, type ConfigRow } from '../../src/schema/describe';

/** Where the connector pages live, under the repository root: one `<type>.md` per connector type and a `README.md` index. */
export const CONNECTOR_DOCS_DIR = join('docs', 'connectors');

/** Where a page's generated part starts, and ends: everything between is rewritten by `npm run docs`. */
export const GENERATED_START =
  '<!-- generated from the connector type by tools/docs/connector-reference.ts: edit the type (or the text above), then run `npm run docs` -->';
export const GENERATED_END = '<!-- end of the generated part -->';

/** A type cell's `duration` linked to what a duration is (docs/config-files.md#durations), from a page `href` away. */
export function linkDuration(type: string, href: string): string {
  return type.replace(/\bduration \(/, `[duration](${href}#durations) (`);
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

/** The index page, `docs/connectors/README.md`: every onramp and offramp type, generated whole. */
export function renderIndex(registries: Registries): string {
  const onramps = new Set(registries.onramps.names());
  const offramps = new Set(registries.offramps.names());
  const names = [...new Set([...onramps, ...offramps])].sort();
  const rows = names.map((n) => {
    const description = typeInfo(registries, onramps.has(n) ? 'onramp' : 'offramp', n).description;
    return `| [${n}](${n}.md) | ${onramps.has(n) ? 'yes' : ''} | ${offramps.has(n) ? 'yes' : ''} | ${cell(description)} |`;
  });
  return [
    GENERATED_START,
    '',
    '# Connectors',
    '',
    'Every onramp and offramp type. Each page says how the type behaves (what it',
    'does, backpressure, bad input, delivery), then its configuration: default',
    'codec, whether it can be a linked transport, its `config` (generated from',
    'the schema that validates it: unknown keys are refused) and an example.',
    'Operators, processors and codecs are in the [config reference](../reference.md).',
    '',
    '| Type | Onramp | Offramp | What it does |',
    '|---|---|---|---|',
    ...rows,
    '',
    GENERATED_END,
  ].join('\n') + '\n';
}

/** The generated part of one type's page: its configuration, each side it has. */
export function renderConfiguration(registries: Registries, name: string): string {
  const out: string[] = [GENERATED_START, '', '## Configuration'];
  if (registries.onramps.has(name)) out.push('', ...renderSide('onramp', name, registries.onramps.get(name), typeInfo(registries, 'onramp', name).description));
  if (registries.offramps.has(name)) out.push('', ...renderSide('offramp', name, registries.offramps.get(name), typeInfo(registries, 'offramp', name).description));
  out.push('', GENERATED_END);
  return out.join('\n');
}

/** A page with its generated part (at its end when it has none yet) replaced by `part`. */
export function withGeneratedPart(page: string, part: string): string {
  const start = page.indexOf(GENERATED_START);
  const end = page.indexOf(GENERATED_END);
  if (start < 0 || end < start) return `${page.trimEnd()}\n\n${part}\n`;
  return `${page.slice(0, start)}${part}${page.slice(end + GENERATED_END.length)}`;
}

/**
 * Every connector page as it should be, by file name under `dir`: the
 * index, and each type's page with its generated part. A type without a
 * page is an error: its behaviour must be written down.
 */
export function renderConnectorPages(registries: Registries, dir: string = join(repoRoot(), CONNECTOR_DOCS_DIR)): Map<string, string> {
  const names = [...new Set([...registries.onramps.names(), ...registries.offramps.names()])].sort();
  const pages = new Map<string, string>([['README.md', renderIndex(registries)]]);
  for (const name of names) {
    const path = join(dir, `${name}.md`);
    if (!existsSync(path)) throw new Error(`${path}: the ${name} connector has no page; write how it behaves there (title \`# ${name}\`), then run \`npm run docs\``);
    pages.set(`${name}.md`, withGeneratedPart(readFileSync(path, 'utf8'), renderConfiguration(registries, name)));
  }
  return pages;
}

/** The pages under `dir` that differ from what they should be. */
export function stalePages(dir: string, pages: Map<string, string>): string[] {
  return [...pages].filter(([file, text]) => !existsSync(join(dir, file)) || readFileSync(join(dir, file), 'utf8') !== text).map(([file]) => file);
}

/** Brings the pages under `dir` in line; returns what it wrote. */
export function writePages(dir: string, pages: Map<string, string>): string[] {
  const stale = stalePages(dir, pages);
  for (const [file, text] of pages) if (stale.includes(file)) writeFileSync(join(dir, file), text);
  return stale;
}

function renderSide(side: Side, name: string, type: AnyType, description: string): string[] {
  const linkable = type.linkable === 'required' ? 'only linked (`linked: true` is required)' : type.linkable ? 'yes' : 'no';
  const lines = [`### ${side === 'onramp' ? 'Onramp' : 'Offramp'}`, '', ...(description ? [description, ''] : []), `Default codec: \`${type.defaultCodec}\`. Linkable: ${linkable}.`, ''];
  const rows = configRows(type.configSchema);
  if (rows.length === 0) lines.push('No config.');
  else {
    lines.push('| Field | Type | Default | Required | Description |', '|---|---|---|---|---|');
    for (const r of rows) lines.push(`| \`${r.field}\` | ${linkDuration(cell(r.type), '../config-files.md')} | ${r.default === undefined ? '' : `\`${cell(r.default)}\``} | ${r.required ? 'yes' : 'no'} | ${cell(r.description)} |`);
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

if (require.main === module) {
  const dir = join(repoRoot(), CONNECTOR_DOCS_DIR);
  const written = writePages(dir, renderConnectorPages(Registries.withBuiltins(), dir));
  if (written.length === 0) process.stdout.write(`${CONNECTOR_DOCS_DIR}: the connector pages are up to date\n`);
  for (const file of written) process.stdout.write(`${join(CONNECTOR_DOCS_DIR, file)}: written\n`);
}
