/**
 * The connector reference: Markdown generated from the registered onramp and
 * offramp types (their config schemas, examples, default codecs) and the
 * prose in `docs/connectors/<type>.md`, so the README's tables never drift
 * from the code. Run directly (`node dist/src/docs/connector-reference.js`,
 * or `npm run docs`), it rewrites README.md between the markers.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { stringify } from 'yaml';
import type { OfframpType, OnrampType } from '../connectors/connector';
import type { JsonSchema } from '../schema/json-schema';
import { Registries } from '../runtime/registries';

export const START_MARKER = '<!-- connector-reference:start -->';
export const END_MARKER = '<!-- connector-reference:end -->';

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
/* eslint-disable @typescript-eslint/no-explicit-any */
type AnyType = OnrampType<any> | OfframpType<any>;
/* eslint-enable @typescript-eslint/no-explicit-any */

/** The reference for every onramp and offramp type in `registries`, by type name. */
export function renderConnectorReference(registries: Registries, options: RenderOptions = {}): string {
  const docsDir = options.docsDir ?? join(repoRoot(), 'docs', 'connectors');
  const onramps = new Set(registries.onramps.names());
  const offramps = new Set(registries.offramps.names());
  const names = [...new Set([...onramps, ...offramps])].sort();
  const out: string[] = [
    '<!-- generated from the connector types and docs/connectors/*.md by src/docs/connector-reference.ts: edit those, then run `npm run docs` -->',
    '',
    'Every onramp and offramp type: its default codec, whether it can be a linked',
    'transport, its `config` (generated from the schema that validates it:',
    'unknown keys are refused), an example artefact, and how it behaves.',
    '',
    '| Type | Onramp | Offramp |',
    '|---|---|---|',
    ...names.map((n) => `| [${n}](#${n}) | ${onramps.has(n) ? 'yes' : ''} | ${offramps.has(n) ? 'yes' : ''} |`),
  ];
  for (const name of names) {
    out.push('', `### ${name}`);
    if (onramps.has(name)) out.push('', ...renderSide('onramp', name, registries.onramps.get(name)));
    if (offramps.has(name)) out.push('', ...renderSide('offramp', name, registries.offramps.get(name)));
    const prose = readProse(docsDir, name);
    if (prose !== undefined) out.push('', '#### Behaviour', '', prose);
  }
  return out.join('\n') + '\n';
}

function renderSide(side: Side, name: string, type: AnyType): string[] {
  const linkable = type.linkable === 'required' ? 'only linked (`linked: true` is required)' : type.linkable ? 'yes' : 'no';
  const lines = [`#### ${name} ${side}`, '', `Default codec: \`${type.defaultCodec}\`. Linkable: ${linkable}.`, ''];
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

export interface ConfigRow {
  /** dotted path: `endpoint.host`, `entries[].name` */
  field: string;
  type: string;
  default?: string;
  required: boolean;
  description: string;
}

/**
 * One row per property, nested ones under their parent's path: an object's
 * fields as `parent.field`, the fields of a list's objects as
 * `parent[].field`, and the fields of an object alternative (`oneOf`) as
 * `parent.field` too.
 */
export function configRows(schema: JsonSchema, prefix = ''): ConfigRow[] {
  const rows: ConfigRow[] = [];
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((schema.required as string[] | undefined) ?? []);
  for (const [key, property] of Object.entries(properties)) {
    const field = `${prefix}${key}`;
    rows.push({
      field,
      type: typeText(property),
      default: property.default === undefined ? undefined : JSON.stringify(property.default),
      required: required.has(key),
      description: typeof property.description === 'string' ? property.description : '',
    });
    rows.push(...nestedRows(property, field));
  }
  return rows;
}

function nestedRows(schema: JsonSchema, field: string): ConfigRow[] {
  if (schema.properties) return configRows(schema, `${field}.`);
  const items = schema.items as JsonSchema | undefined;
  if (items && typeof items === 'object' && items.properties) return configRows(items, `${field}[].`);
  const branches = ((schema.oneOf ?? schema.anyOf) as JsonSchema[] | undefined) ?? [];
  return branches.flatMap((branch) => nestedRows(branch, field));
}

/** A readable type: `integer (≥ 1)`, `list of string`, `map of string to string`, `string or object`, `one of "a", "b"`. */
export function typeText(schema: JsonSchema): string {
  if (Array.isArray(schema.enum)) return `one of ${schema.enum.map((v) => JSON.stringify(v)).join(', ')}`;
  if (schema.const !== undefined) return JSON.stringify(schema.const);
  const branches = (schema.oneOf ?? schema.anyOf) as JsonSchema[] | undefined;
  if (Array.isArray(branches)) return [...new Set(branches.map(typeText))].join(' or ');
  const types = Array.isArray(schema.type) ? (schema.type as string[]) : typeof schema.type === 'string' ? [schema.type] : [];
  if (types.length === 0) return 'any';
  return types.map((t) => singleType(t, schema)).join(' or ');
}

function singleType(type: string, schema: JsonSchema): string {
  switch (type) {
    case 'array': {
      const items = schema.items as JsonSchema | undefined;
      return items && typeof items === 'object' ? `list of ${typeText(items)}` : 'list';
    }
    case 'object': {
      const values = schema.additionalProperties;
      if (!schema.properties && values && typeof values === 'object') return `map of string to ${typeText(values as JsonSchema)}`;
      return 'object';
    }
    case 'integer':
    case 'number':
      return `${type}${bounds(schema)}`;
    default:
      return type;
  }
}

function bounds(schema: JsonSchema): string {
  const parts: string[] = [];
  if (typeof schema.minimum === 'number') parts.push(`≥ ${schema.minimum}`);
  if (typeof schema.exclusiveMinimum === 'number') parts.push(`> ${schema.exclusiveMinimum}`);
  if (typeof schema.maximum === 'number') parts.push(`≤ ${schema.maximum}`);
  if (typeof schema.exclusiveMaximum === 'number') parts.push(`< ${schema.exclusiveMaximum}`);
  return parts.length === 0 ? '' : ` (${parts.join(', ')})`;
}

/** A table cell: one line, pipes escaped. */
function cell(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ').replace(/\|/g, '\\|');
}

/**
 * The prose of `<docsDir>/<type>.md`, fitted under the type's heading: a
 * leading level-1 title is dropped (the reference has its own heading) and
 * the other headings are shifted so the shallowest is level 5, below
 * "#### Behaviour". Lines inside fenced code blocks are left alone.
 */
export function readProse(docsDir: string, name: string): string | undefined {
  const path = join(docsDir, `${name}.md`);
  if (!existsSync(path)) return undefined;
  let lines = readFileSync(path, 'utf8').replace(/\r\n?/g, '\n').split('\n');
  while (lines.length > 0 && lines[0].trim() === '') lines.shift();
  if (/^#\s/.test(lines[0] ?? '')) lines = lines.slice(1);
  const headings = outsideFences(lines).filter((i) => /^#{1,6}\s/.test(lines[i]));
  const shallowest = Math.min(...headings.map((i) => lines[i].indexOf(' ')));
  const shift = headings.length === 0 ? 0 : 5 - shallowest;
  for (const i of headings) {
    const level = Math.min(6, lines[i].indexOf(' ') + shift);
    lines[i] = '#'.repeat(level) + lines[i].slice(lines[i].indexOf(' '));
  }
  return lines.join('\n').trim();
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

/** `text` with what is between the markers replaced by `content`; the markers must be there once each, in order. */
export function replaceBetweenMarkers(text: string, content: string): string {
  const start = text.indexOf(START_MARKER);
  const end = text.indexOf(END_MARKER);
  if (start < 0 || end < 0 || end < start || text.indexOf(START_MARKER, start + 1) >= 0 || text.indexOf(END_MARKER, end + 1) >= 0) {
    throw new Error(`README.md must contain ${START_MARKER} and then ${END_MARKER}, once each`);
  }
  return text.slice(0, start + START_MARKER.length) + '\n' + content + text.slice(end);
}

/** What is between the markers now (the generated section as it stands). */
export function betweenMarkers(text: string): string {
  const start = text.indexOf(START_MARKER);
  const end = text.indexOf(END_MARKER);
  if (start < 0 || end < start) throw new Error(`README.md must contain ${START_MARKER} and then ${END_MARKER}`);
  return text.slice(start + START_MARKER.length + 1, end);
}

if (require.main === module) {
  const readme = join(repoRoot(), 'README.md');
  const before = readFileSync(readme, 'utf8');
  const after = replaceBetweenMarkers(before, renderConnectorReference(Registries.withBuiltins()));
  if (after === before) process.stdout.write('README.md: the connector reference is up to date\n');
  else {
    writeFileSync(readme, after);
    process.stdout.write('README.md: the connector reference was rewritten\n');
  }
}
