/**
 * The config reference (docs/reference.md): every operator, preprocessor,
 * postprocessor and codec with its one-line summary and its config, generated
 * from the schemas that validate the config at publish, so the document
 * cannot say something the runtime does not enforce. Run directly
 * (`node dist/tools/docs/config-reference.js`, or `npm run docs`), it rewrites
 * docs/reference.md.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { JsonSchema } from '../../src/schema/json-schema';
import { Registries } from '../../src/runtime/registries';
import { typeInfos } from '../../src/runtime/type-info';
import { configRows, linkDuration, repoRoot } from './connector-reference';

/** Where the reference lives, under the repository root. */
export const REFERENCE_PATH = join('docs', 'reference.md');

interface Entry {
  name: string;
  summary: string | undefined;
  /** undefined: the type takes no config at all (most codecs) */
  schema: JsonSchema | undefined;
  /** extra facts after the summary (a codec's mime types) */
  notes?: string[];
}

/** The reference for every operator, processor and codec in `registries`. */
export function renderConfigReference(registries: Registries): string {
  const operators = typeInfos(registries, ['operator']).map((t): Entry => ({ name: t.type, summary: t.description || undefined, schema: t.schema ?? { properties: {} } }));
  const processors = (kind: 'preprocessor' | 'postprocessor') =>
    typeInfos(registries, [kind]).map((t): Entry => ({ name: t.type, summary: t.description || undefined, schema: t.schema }));
  const codecs = registries.codecs.names().map((name): Entry => {
    const type = registries.codecs.get(name);
    const mimes = type.mimeTypes ?? [];
    return {
      name,
      summary: type.summary,
      schema: type.configSchema,
      notes: [
        mimes.length > 0 ? `Mime types: ${mimes.map((m) => `\`${m}\``).join(', ')}.` : 'No mime types in the builtin mime map.',
        ...(type.configSchema ? [`Named with its config: \`codec: {name: ${name}, config: {...}}\`; see [codecs/${name}.md](codecs/${name}.md).`] : []),
      ],
    };
  });
  const out: string[] = [
    '<!-- generated from the type schemas by tools/docs/config-reference.ts: edit those, then run `npm run docs` -->',
    '',
    '# Config reference',
    '',
    'Every operator, preprocessor, postprocessor and codec, with its `config`',
    'as the JSON schema that checks it at publish describes it: a key not listed',
    'is refused, and so is a value of the wrong type (a 400 naming the field,',
    'such as `preprocessors[0].config.max_length: must be >= 1`). A default is',
    'used when the key is absent. Connectors (onramps and offramps) are in the',
    '[connector reference](connectors/README.md).',
    '',
    '- [Operators](#operators): a pipeline node is `{id, type, config}`.',
    '- [Preprocessors](#preprocessors) and [postprocessors](#postprocessors): a',
    '  ramp lists them as names or `{name, config}`.',
    '- [Codecs](#codecs): a ramp names one in `codec`; the few that take config',
    '  (avro, protobuf) are named as `{name, config}`.',
  ];
  out.push(...section('Operators', operators));
  out.push(...section('Preprocessors', processors('preprocessor')));
  out.push(...section('Postprocessors', processors('postprocessor')));
  out.push(...section('Codecs', codecs));
  return out.join('\n') + '\n';
}

function section(title: string, entries: Entry[]): string[] {
  const lines = ['', `## ${title}`, '', '| Type | Summary |', '|---|---|'];
  for (const e of entries) lines.push(`| \`${e.name}\` | ${cell(e.summary ?? '')} |`);
  for (const e of entries) lines.push('', `### ${title.slice(0, -1).toLowerCase()} \`${e.name}\``, '', ...describeEntry(e));
  return lines;
}

function describeEntry(entry: Entry): string[] {
  const lines: string[] = [];
  const intro = [entry.summary, ...(entry.notes ?? [])].filter((t): t is string => t !== undefined && t !== '');
  if (intro.length > 0) lines.push(intro.join(' '), '');
  if (entry.schema === undefined) {
    lines.push('Takes no config.');
    return lines;
  }
  const rows = configRows(entry.schema);
  if (rows.length === 0) {
    lines.push('No config keys (`config` is empty or absent).');
    return lines;
  }
  lines.push('| Key | Type | Default | Description |', '|---|---|---|---|');
  for (const r of rows) {
    const fallback = r.default !== undefined ? `\`${cell(r.default)}\`` : r.required ? 'required' : '';
    lines.push(`| \`${r.field}\` | ${linkDuration(cell(r.type), 'config-files.md')} | ${fallback} | ${cell(r.description)} |`);
  }
  const oneOfRequired = alternativesRequired(entry.schema);
  if (oneOfRequired.length > 0) lines.push('', `At least one of ${oneOfRequired.map((k) => `\`${k}\``).join(', ')} is required.`);
  return lines;
}

/** Keys of an `anyOf: [{required: [a]}, {required: [b]}]` at the top of a schema: one of them must be given. */
function alternativesRequired(schema: JsonSchema): string[] {
  const branches = schema.anyOf as JsonSchema[] | undefined;
  if (!Array.isArray(branches) || !branches.every((b) => Array.isArray(b.required) && Object.keys(b).length === 1)) return [];
  return branches.flatMap((b) => b.required as string[]);
}

/** Where the table of the duration fields whose bare number is not milliseconds lives, and its markers. */
export const CONFIG_FILES_PATH = join('docs', 'config-files.md');
export const DURATIONS_START = '<!-- duration fields whose bare number is not ms: generated by tools/docs/config-reference.ts (npm run docs) -->';
export const DURATIONS_END = '<!-- end of the duration fields -->';

/** The duration fields of every type whose bare number is not milliseconds: a table, for the Durations section of docs/config-files.md. */
export function renderDurationFields(registries: Registries): string {
  const rows = typeInfos(registries).flatMap((t) =>
    t.schema === undefined ? [] : configRows(t.schema).filter((r) => r.unit !== undefined && r.unit !== 'ms').map((r) => `| ${t.kind} | ${t.type} | \`${r.field}\` | ${r.unit} |`),
  );
  return [DURATIONS_START, '', '| Kind | Type | Field | A bare number is |', '|---|---|---|---|', ...rows, '', DURATIONS_END].join('\n');
}

/** `text` (docs/config-files.md) with its duration fields table replaced by the current one. */
export function withDurationFields(text: string, registries: Registries): string {
  const start = text.indexOf(DURATIONS_START);
  const end = text.indexOf(DURATIONS_END);
  if (start < 0 || end < start) throw new Error(`${CONFIG_FILES_PATH}: no duration fields table (${DURATIONS_START} … ${DURATIONS_END})`);
  return text.slice(0, start) + renderDurationFields(registries) + text.slice(end + DURATIONS_END.length);
}

/** A table cell: one line, pipes escaped. */
function cell(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ').replace(/\|/g, '\\|');
}

if (require.main === module) {
  const path = join(repoRoot(), REFERENCE_PATH);
  const before = (() => {
    try {
      return readFileSync(path, 'utf8');
    } catch {
      return undefined;
    }
  })();
  const registries = Registries.withBuiltins();
  const after = renderConfigReference(registries);
  if (after === before) process.stdout.write(`${REFERENCE_PATH}: up to date\n`);
  else {
    writeFileSync(path, after);
    process.stdout.write(`${REFERENCE_PATH}: rewritten\n`);
  }
  const configFiles = join(repoRoot(), CONFIG_FILES_PATH);
  const text = readFileSync(configFiles, 'utf8');
  const updated = withDurationFields(text, registries);
  if (updated !== text) writeFileSync(configFiles, updated);
  process.stdout.write(`${CONFIG_FILES_PATH} durations: ${updated === text ? 'up to date' : 'rewritten'}\n`);
}
