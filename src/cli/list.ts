import { Registries } from '../runtime/registries';
import { TYPE_KINDS, kindNamed, typeInfos, unknownKind, type TypeInfo, type TypeKind } from '../runtime/type-info';
import { defineCommand, type Io } from './command';

interface ListOptions {
  kinds: readonly TypeKind[];
  json: boolean;
}

/** The kinds the operands name (all of them when none is named); an unknown one is bad usage. */
function kindsOf(operands: readonly string[]): TypeKind[] {
  if (operands.length === 0) return [...TYPE_KINDS];
  return operands.map((word) => {
    const kind = kindNamed(word);
    if (kind === undefined) throw new Error(unknownKind(word));
    return kind;
  });
}

/** One table per kind: `onramps:` then each type and its description, in a column. */
function tables(types: readonly TypeInfo[], kinds: readonly TypeKind[]): string {
  return kinds
    .map((kind) => {
      const ofKind = types.filter((t) => t.kind === kind);
      const width = Math.max(0, ...ofKind.map((t) => t.type.length));
      const rows = ofKind.map((t) => `  ${t.type.padEnd(width)}  ${t.description}`.trimEnd());
      return `${kind}s:\n${rows.length > 0 ? rows.join('\n') : '  (none)'}\n`;
    })
    .join('\n');
}

/** Lists the types of `registries`: what `eddy list` prints. */
export function listTypes(registries: Registries, options: ListOptions, io: Pick<Io, 'out'>): number {
  const types = typeInfos(registries, options.kinds);
  if (options.json)
    io.out(
      `${JSON.stringify(
        types.map(({ kind, type, description }) => ({ kind, type, description })),
        null,
        2,
      )}\n`,
    );
  else io.out(tables(types, options.kinds));
  return 0;
}

export const listCommand = defineCommand({
  name: 'list',
  summary: 'list the onramp, offramp, operator, codec and processor types',
  description:
    'KIND is onramps, offramps, operators, codecs, preprocessors or postprocessors (singular too; several may be given); without one, ' +
    "every kind is listed. Each type's one-line description comes from its registered schema. Exit 2 for an unknown kind.",
  operands: '[KIND ...]',
  flags: {
    json: { type: 'boolean', description: 'print a JSON array of {kind, type, description} (kind singular: onramp, operator, ...)' },
  },
  options: ({ values, operands }): ListOptions => ({ kinds: [...new Set(kindsOf(operands))], json: values.json }),
  run: (options, io) => Promise.resolve(listTypes(Registries.withBuiltins(), options, io)),
});
