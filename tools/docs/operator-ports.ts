/**
 * The Ports column of the operators README's table
 * (src/pipeline/operators/README.md), generated from each type's
 * `outputPorts` applied to its `examples`: the ports of the first, then
 * those of each variant, named by the keys it changes. The other columns
 * are prose and stay as written. Run directly (`npm run docs`), it rewrites
 * the README.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { OperatorType } from '../../src/pipeline/operator';
import { Registries } from '../../src/runtime/registries';
import { SchemaValidator } from '../../src/schema/artefacts';
import { repoRoot } from './connector-reference';

/** The README, under the repository root. */
export const OPERATORS_README = join('src', 'pipeline', 'operators', 'README.md');

/** The header of the table of types, the one table rewritten. */
const HEADER = '| Type | Ports | Notes |';

/** A row of the table: the type, its ports, the rest of the line. */
const ROW = /^\| `([^`]+)` \| (.*?) \| (.*)$/;

/** The ports one config gives, `out` first; a route computed from each event may name any port. */
function portsOf(type: OperatorType, example: Readonly<Record<string, unknown>>, validator: SchemaValidator): string {
  const config = structuredClone(example) as Record<string, unknown>;
  if (type.configSchema) validator.check(type.configSchema, config, `${type.name} example`);
  const ports = type.outputPorts?.(config);
  return ports === undefined ? '`out`, any port the config computes' : ['out', ...ports].map((p) => `\`${p}\``).join(', ');
}

/** The keys a variant sets differently from the first example: `on_miss: port`. */
function changes(first: Readonly<Record<string, unknown>>, variant: Readonly<Record<string, unknown>>): string {
  return Object.entries(variant)
    .filter(([key, value]) => JSON.stringify(first[key]) !== JSON.stringify(value))
    .map(([key, value]) => `\`${key}: ${typeof value === 'string' ? value : JSON.stringify(value)}\``)
    .join(', ');
}

/** The Ports cell of a type: `` `out`, `err`; with `on_miss: port`: `out`, `miss`, `err` ``. */
export function portsCell(type: OperatorType, validator = new SchemaValidator()): string {
  const examples = type.examples ?? [];
  if (examples.length === 0) throw new Error(`${type.name}: no examples, so no ports to list (OperatorType.examples)`);
  const [first, ...variants] = examples;
  return [portsOf(type, first, validator), ...variants.map((v) => `with ${changes(first, v)}: ${portsOf(type, v, validator)}`)].join('; ');
}

/** The README with each row's Ports cell generated; throws naming a type the table lacks, or a row no type has. */
export function renderOperatorsReadme(text: string, registries: Registries): string {
  const names = new Set(registries.operators.names());
  const seen = new Set<string>();
  const lines = text.split('\n');
  const header = lines.indexOf(HEADER);
  if (header < 0) throw new Error(`${OPERATORS_README}: no table headed ${HEADER}`);
  // the rows: from below the header's separator line to the first line that is no row
  let end = header + 2;
  while (end < lines.length && lines[end].startsWith('|')) end++;
  const rows = lines.slice(header + 2, end).map((line) => {
    const row = ROW.exec(line);
    if (row === null) throw new Error(`${OPERATORS_README}: '${line}' is no row of a type`);
    const [, name, , rest] = row;
    if (!names.has(name)) throw new Error(`${OPERATORS_README}: a row for '${name}', which is no operator type`);
    seen.add(name);
    return `| \`${name}\` | ${portsCell(registries.operators.get(name) as OperatorType)} | ${rest}`;
  });
  const missing = [...names].filter((n) => !seen.has(n));
  if (missing.length > 0) throw new Error(`${OPERATORS_README}: no row for ${missing.join(', ')}: add one (its ports are generated)`);
  return [...lines.slice(0, header + 2), ...rows, ...lines.slice(end)].join('\n');
}

if (require.main === module) {
  const path = join(repoRoot(), OPERATORS_README);
  const before = readFileSync(path, 'utf8');
  const after = renderOperatorsReadme(before, Registries.withBuiltins());
  if (after === before) process.stdout.write(`${OPERATORS_README}: up to date\n`);
  else {
    writeFileSync(path, after);
    process.stdout.write(`${OPERATORS_README}: rewritten\n`);
  }
}
