/**
 * `eddy new`: a config file to start from, for one onramp, offramp or
 * operator type, written from the type's config schema. Every field is
 * there with its type, default and description as a comment: the optional
 * ones commented out (at their default, when they have one), the required
 * ones as `null` placeholders marked `# required`, which publish refuses
 * until they are filled in. Filled in, the file publishes as it is
 * (test/cli/new.test.ts does so for every builtin type).
 */
import { invalid } from '../core/errors';
import { didYouMean } from '../core/suggest';
import type { JsonSchema } from '../schema/json-schema';
import { typeText } from '../schema/describe';
import type { Registries } from '../runtime/registries';
import { typeInfo, typeNames } from '../runtime/type-info';

/** The kinds `eddy new` writes a file for: the artefacts (an operator as a pipeline of one node). */
export const NEW_KINDS = ['onramp', 'offramp', 'operator'] as const;
export type NewKind = (typeof NEW_KINDS)[number];

/** What a required field holds until it is filled in. */
export const PLACEHOLDER = 'null';

/**
 * The kind of `type` when it is named alone: the one of onramp, offramp and
 * operator that has it. Unknown or ambiguous (kafka is an onramp and an
 * offramp) is a 400 saying what to write instead.
 */
export function kindOfType(registries: Registries, type: string): NewKind {
  const kinds = NEW_KINDS.filter((kind) => typeNames(registries, kind).includes(type));
  if (kinds.length === 1) return kinds[0];
  if (kinds.length > 1) throw invalid(`'${type}' is ${kinds.map((k) => `an ${k}`).join(' and ')}: say which, e.g. eddy new ${kinds[0]} ${type}`);
  const all = NEW_KINDS.flatMap((kind) => typeNames(registries, kind));
  throw invalid(`unknown type '${type}'${didYouMean(type, all)}; eddy list names every type`);
}

/** Checks that `type` is one of `kind`'s types: a 400 with the nearest name when not. */
export function checkType(registries: Registries, kind: NewKind, type: string): void {
  const names = typeNames(registries, kind);
  if (!names.includes(type)) throw invalid(`unknown ${kind} type '${type}'${didYouMean(type, names)}; eddy list ${kind}s names them`);
}

/** One line: its text and the comment after it. */
interface Line {
  indent: number;
  text: string;
  comment?: string;
  /** written after `# `: an optional field, or a field of one */
  commented?: boolean;
}

/** The field's comment: `required; integer (≥ 1): what it is` or `integer, default 5: what it is`. */
function note(schema: JsonSchema, required: boolean, alternatives: readonly string[] = []): string {
  const type = typeText(schema);
  const description = typeof schema.description === 'string' ? `: ${schema.description}` : '';
  if (required) return `required${alternatives.length > 0 ? ` (or instead: ${alternatives.join(', ')})` : ''}; ${type}${description}`;
  return `${type}${schema.default !== undefined ? `, default ${JSON.stringify(schema.default)}` : ''}${description}`;
}

/** The properties of an object schema that has some (a plain object, not a map). */
function propertiesOf(schema: JsonSchema): Record<string, JsonSchema> | undefined {
  const properties = schema.properties as Record<string, JsonSchema> | undefined;
  return properties && Object.keys(properties).length > 0 ? properties : undefined;
}

/** A list of objects with properties: its item schema. */
function objectItems(schema: JsonSchema): JsonSchema | undefined {
  const items = schema.items as JsonSchema | undefined;
  return schema.type === 'array' && items && typeof items === 'object' && propertiesOf(items) ? items : undefined;
}

/**
 * The keys a schema makes required: `required`, and of an `anyOf` of
 * `{required: [...]}` alternatives (one of max_elements, max_bytes) the
 * first, the others named beside it.
 */
function requiredKeys(schema: JsonSchema): Map<string, string[]> {
  const keys = new Map<string, string[]>(((schema.required as string[] | undefined) ?? []).map((k) => [k, []]));
  const branches = schema.anyOf as JsonSchema[] | undefined;
  if (Array.isArray(branches) && branches.every((b) => Array.isArray(b.required))) {
    const [first, ...others] = branches.map((b) => b.required as string[]);
    if (!first.some((k) => keys.has(k))) for (const k of first) keys.set(k, others.flat());
  }
  return keys;
}

/** The lines of an object's fields: the required first, in their order, then the others. */
function objectLines(schema: JsonSchema, indent: number): Line[] {
  const properties = propertiesOf(schema) ?? {};
  const required = requiredKeys(schema);
  const keys = [...required.keys()].filter((k) => k in properties);
  keys.push(...Object.keys(properties).filter((k) => !required.has(k)));
  return keys.flatMap((key) => fieldLines(key, properties[key], required.has(key), indent, required.get(key)));
}

/** A field's lines: required as a placeholder (an object or a list of objects spelled out), optional commented out. */
function fieldLines(key: string, schema: JsonSchema, required: boolean, indent: number, alternatives: readonly string[] = []): Line[] {
  const comment = note(schema, required, alternatives);
  let lines: Line[];
  const items = objectItems(schema);
  if (propertiesOf(schema) && (required || schema.default === undefined)) {
    lines = [{ indent, text: `${key}:`, comment }, ...objectLines(schema, indent + 2)];
  } else if (items && required) {
    // one item, its first line after the dash
    const [first, ...rest] = objectLines(items, indent + 4);
    lines = [{ indent, text: `${key}:`, comment }, { ...first, indent: indent + 2, text: `- ${first.text}` }, ...rest];
  } else if (required) {
    lines = [{ indent, text: `${key}: ${schema.type === 'array' ? `[${PLACEHOLDER}]` : PLACEHOLDER}`, comment }];
  } else {
    lines = [{ indent, text: schema.default === undefined ? `${key}:` : `${key}: ${JSON.stringify(schema.default)}`, comment }];
  }
  return required ? lines : lines.map(commentOut);
}

/** A line commented out, at its indentation: uncommented, it is a field again. */
function commentOut(line: Line): Line {
  return { ...line, commented: true };
}

function render(lines: readonly Line[]): string {
  return lines
    .map((l) => `${' '.repeat(l.indent)}${l.commented ? '# ' : ''}${l.text}${l.comment === undefined ? '' : `  # ${l.comment.replace(/\s*\n\s*/g, ' ')}`}`)
    .join('\n');
}

/** An id made from a type name: its last `::` part, `-` as `_` (`generic::batch` -> `batch`). */
export function idOf(type: string): string {
  const id = (type.split('::').pop() ?? type).replace(/[^a-zA-Z_:]/g, '_');
  return /^[a-z]/.test(id) ? id : `x${id}`;
}

/** The `config:` lines of a type, at `indent`; none when it takes no config. */
function configLines(schema: JsonSchema | undefined, indent: number): Line[] {
  if (schema === undefined || !propertiesOf(schema)) return [];
  const fields = objectLines(schema, indent + 2);
  // with every field optional (commented out), `config:` alone would be null, which publish refuses: it is commented out too
  return [{ indent, text: 'config:', commented: fields.every((l) => l.commented) }, ...fields];
}

/** The config file for one type of `kind`: a ramp artefact, or a pipeline of one node for an operator. */
export function skeleton(registries: Registries, kind: NewKind, type: string, id = idOf(type)): string {
  checkType(registries, kind, type);
  const info = typeInfo(registries, kind, type);
  let lines: Line[];
  if (kind === 'operator') {
    lines = [
      { indent: 0, text: 'pipeline:' },
      { indent: 2, text: `- id: ${id}`, comment: "the pipeline's id: in -> the node -> out (no links: the nodes are chained in order)" },
      { indent: 4, text: 'nodes:' },
      { indent: 6, text: `- id: ${id}`, comment: "the node's id" },
      { indent: 8, text: `type: ${type}` },
      ...configLines(info.schema, 8),
    ];
  } else {
    const ramp = kind === 'onramp' ? registries.onramps.get(type) : registries.offramps.get(type);
    lines = [
      { indent: 0, text: `${kind}:` },
      { indent: 2, text: `- id: ${id}`, comment: `the ${kind}'s id` },
      { indent: 4, text: `type: ${type}` },
      ...(ramp.linkable === 'required' ? [{ indent: 4, text: 'linked: true', comment: `a ${type} ${kind} works only as a linked transport` }] : []),
      { indent: 4, text: `codec: ${ramp.defaultCodec}`, comment: 'the default; eddy list codecs names the others', commented: true },
      ...configLines(info.schema, 4),
    ];
  }
  const head = [
    `# ${type} ${kind}${info.description ? `: ${info.description}` : ''}`,
    ...(lines.some((l) => !l.commented && l.comment?.startsWith('required'))
      ? ['# Fill in the fields marked `# required`: eddy refuses their null placeholders.']
      : []),
    '# The fields commented out are optional, shown at their default when they have one.',
  ];
  return `${head.join('\n')}\n${render(lines)}\n`;
}
