import type { ErrorObject } from 'ajv';
import { didYouMean } from '../core/suggest';
import { DURATION_PATTERN, DURATION_WORDS, durationUnit, durationWords } from './duration';
import { ID_PATTERN, PATTERN_WORDS, idProblem, shown } from './ids';
import type { JsonSchema } from './json-schema';

/**
 * Turns ajv's first error into a message naming the field and saying what it
 * should be. ajv's own messages name the schema ("must match a schema in
 * anyOf", "must match ^[a-z][a-zA-Z_:]*$"); these read the schema and the
 * value the error points at to say it in words: what a duration looks like,
 * which character of an id is wrong, which unknown key was probably meant.
 */
export function describe(where: string, errors: ErrorObject[], schema: JsonSchema, value: unknown): string {
  return new Described(where, errors, schema, value).message();
}

class Described {
  constructor(
    private readonly where: string,
    private readonly errors: ErrorObject[],
    private readonly schema: JsonSchema,
    private readonly value: unknown,
  ) {}

  message(): string {
    const e = reported(this.errors);
    if (!e) return `${this.where}: invalid`;
    const path = fieldPath(this.where, e.instancePath) || '(top level)';
    const key = (e as ErrorObject & { propertyName?: string }).propertyName;
    if (key !== undefined) return `${path}: invalid key ${shown(key)}: ${this.keyword(e, key, true) ?? e.message ?? 'invalid'}`;
    if (e.keyword === 'anyOf') return `${path}: ${this.alternatives(e)}`;
    return `${path}: ${this.keyword(e, valueAt(this.value, e.instancePath), false) ?? e.message ?? 'invalid'}`;
  }

  /** The words for one failed keyword of `data` (a key of an object when `isKey`: the message names it already), or undefined for ajv's own message. */
  private keyword(e: ErrorObject, data: unknown, isKey: boolean): string | undefined {
    const value = isKey ? '' : `${shown(data)} `;
    switch (e.keyword) {
      case 'additionalProperties': {
        const field = (e.params as { additionalProperty: string }).additionalProperty;
        return `unknown field ${shown(field)}${didYouMean(field, this.missingFirst(e, data))}`;
      }
      case 'required':
        return this.required(e, data);
      case 'dependencies': {
        // a key that needs others beside it (a blackhole's benchmark keys come together)
        const { property, missingProperty } = e.params as { property: string; missingProperty: string };
        return `missing field ${shown(missingProperty)}, required with ${shown(property)}`;
      }
      case 'enum':
        return `must be one of ${(e.params as { allowedValues: unknown[] }).allowedValues.join(', ')}`;
      case 'maxLength':
        // an id's words name its length; any other string's limit is ajv's "must NOT have more than N characters"
        return this.parentSchema(e)?.pattern === ID_PATTERN ? idProblem(data) : undefined;
      case 'pattern': {
        const pattern = this.parentSchema(e)?.pattern;
        if (pattern === ID_PATTERN) return idProblem(data);
        if (pattern === DURATION_PATTERN) return `${value}is not a duration; ${DURATION_WORDS}`;
        const words = typeof pattern === 'string' ? PATTERN_WORDS[pattern] : undefined;
        if (words !== undefined) return `${value}${words}`;
        return `must match ${(e.params as { pattern: string }).pattern}`;
      }
      case 'propertyNames':
        return `invalid key ${shown((e.params as { propertyName: string }).propertyName)}`;
      default:
        return undefined;
    }
  }

  /**
   * A missing field, and the unknown keys beside it: `nodez:` for `nodes:`
   * is reported as `nodes` missing (ajv checks `required` first), which says
   * nothing of the key that was written.
   */
  private required(e: ErrorObject, data: unknown): string {
    const missing = (e.params as { missingProperty: string }).missingProperty;
    const unknown = this.unknownKeys(e, data);
    if (unknown.length === 0) return `missing required field ${shown(missing)}`;
    const near = unknown.find((k) => didYouMean(k, [missing]) !== '');
    const found = `found unknown ${unknown.length === 1 ? 'field' : 'fields'} ${unknown
      .slice(0, 5)
      .map((k) => shown(k))
      .join(', ')}`;
    const guess = near === undefined ? '' : ` — did you mean ${shown(missing)}${unknown.length === 1 ? '' : ` instead of ${shown(near)}`}?`;
    return `missing required field ${shown(missing)} (${found}${guess})`;
  }

  /** The keys of `data` that the object schema of `e` does not declare (when it admits no others). */
  private unknownKeys(e: ErrorObject, data: unknown): string[] {
    const object = this.parentSchema(e);
    if (object?.additionalProperties !== false || data === null || typeof data !== 'object' || Array.isArray(data)) return [];
    const known = Object.keys((object.properties as JsonSchema | undefined) ?? {});
    return Object.keys(data).filter((k) => !known.includes(k));
  }

  /** The declared fields, the absent ones first: an unknown key is most likely a misspelling of a field not written. */
  private missingFirst(e: ErrorObject, data: unknown): string[] {
    const known = Object.keys((this.parentSchema(e)?.properties as JsonSchema | undefined) ?? {});
    const present = data !== null && typeof data === 'object' ? Object.keys(data) : [];
    const absent = known.filter((k) => !present.includes(k));
    return absent.length > 0 && didYouMean((e.params as { additionalProperty: string }).additionalProperty, absent) !== '' ? absent : known;
  }

  /** An `anyOf` no branch of which matched at its own level: what the branches asked for. */
  private alternatives(alternatives: ErrorObject): string {
    const data = valueAt(this.value, alternatives.instancePath);
    const parent = this.parentSchema(alternatives);
    const branchSchemas = parent?.anyOf;
    if (parent && Array.isArray(branchSchemas) && branchSchemas.some((b) => (b as JsonSchema).pattern === DURATION_PATTERN)) {
      // the field's unit of a bare number, and whether 0 is one (its number branch's minimum)
      const zero = branchSchemas.some((b) => (b as JsonSchema).minimum === 0);
      return `${shown(data)} is not a duration; ${durationWords(durationUnit(parent), zero)}`;
    }
    // each branch's errors, by the branch's place in the schema (`…/anyOf/0/type`)
    const branches = new Map<string, ErrorObject[]>();
    for (const e of this.errors) {
      const branch = /^\/(\d+)\//.exec(e.schemaPath.slice(alternatives.schemaPath.length))?.[1];
      if (e === alternatives || branch === undefined || !e.schemaPath.startsWith(alternatives.schemaPath)) continue;
      branches.set(branch, [...(branches.get(branch) ?? []), e]);
    }
    const failures = [...branches.values()];
    const typeErrors = failures.map((list) => list.find((e) => e.keyword === 'type'));
    if (failures.length > 0 && typeErrors.every((e) => e !== undefined)) {
      return `must be ${typeErrors.map((e) => (e.params as { type: string }).type).join(' or ')}`;
    }
    // one branch of the value's own type (`codec: nope` fails the name branch; the {name, config} one wants an object): its error says it
    const ofItsType = failures.filter((list) => !list.some((e) => e.keyword === 'type' && e.instancePath === alternatives.instancePath));
    const single = ofItsType.length === 1 ? ofItsType[0].find((e) => e.instancePath === alternatives.instancePath) : undefined;
    const said = single && this.keyword(single, data, false);
    if (said !== undefined) return said;
    if (failures.length > 0 && failures.every((list) => list.every((e) => e.keyword === 'required'))) {
      const fields = failures.flat().map((e) => shown((e.params as { missingProperty: string }).missingProperty));
      return `missing required field, one of ${fields.join(', ')}`;
    }
    if (single?.message !== undefined) return single.message;
    return alternatives.message ?? 'invalid';
  }

  /** The schema holding the keyword that failed (`#/properties/id/pattern` → the schema of `id`). */
  private parentSchema(e: ErrorObject): JsonSchema | undefined {
    return this.schemaAt(e.schemaPath.slice(0, e.schemaPath.lastIndexOf('/')));
  }

  /** The subschema at a `#/…` JSON pointer of the validated schema; undefined past a `$ref` or anything unexpected. */
  private schemaAt(pointer: string): JsonSchema | undefined {
    if (!pointer.startsWith('#')) return undefined;
    let node: unknown = this.schema;
    for (const raw of pointer.split('/').slice(1)) {
      if (node === null || typeof node !== 'object') return undefined;
      node = (node as Record<string, unknown>)[decodePointer(raw)];
    }
    return node !== null && typeof node === 'object' && !Array.isArray(node) ? (node as JsonSchema) : undefined;
  }
}

/**
 * The error to report. ajv lists an `anyOf`'s failed branches before the
 * `anyOf` itself; a branch that got further into the value than the `anyOf`
 * (`{name: lines, config: [1]}` failing at `config`) says more than "none of
 * the alternatives", so the deepest such branch error wins.
 */
function reported(errors: ErrorObject[]): ErrorObject | undefined {
  const alternatives = errors.find((e) => e.keyword === 'anyOf');
  if (!alternatives) return errors[0];
  const deeper = errors.filter((e) => e.instancePath.length > alternatives.instancePath.length);
  return deeper.sort((a, b) => b.instancePath.length - a.instancePath.length)[0] ?? alternatives;
}

/** One segment of a schema path: ajv URI-encodes them (`#/properties/a%20b`) besides the pointer escapes. */
function decodePointer(raw: string): string {
  let segment = raw;
  try {
    segment = decodeURIComponent(raw);
  } catch {
    // a lone '%' is itself
  }
  return segment.replace(/~1/g, '/').replace(/~0/g, '~');
}

/** The part of `value` at a JSON pointer (`/nodes/0/id`). */
function valueAt(value: unknown, pointer: string): unknown {
  let node = value;
  for (const raw of pointer.split('/').slice(1)) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<string, unknown>)[raw.replace(/~1/g, '/').replace(/~0/g, '~')];
  }
  return node;
}

/** `where` then the JSON pointer as a field path: `/nodes/0/a~1b` is `nodes[0].a/b`. */
function fieldPath(where: string, instancePath: string): string {
  let path = where;
  for (const raw of instancePath.split('/').slice(1)) {
    const segment = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (/^(0|[1-9][0-9]*)$/.test(segment)) path += `[${segment}]`;
    else path += path === '' ? segment : `.${segment}`;
  }
  return path;
}
