import type { JsonSchema } from './json-schema';
import type { PathUse } from './paths';

/**
 * Schemas that carry their TypeScript type. Each builder returns the plain
 * JSON schema object ajv validates (and the build precompiles), typed so
 * that `Static<typeof schema>` is the type of a config that passed it: a
 * config is declared once, as its schema, and its type is derived.
 *
 *     const configSchema = s.object({ port: s.integer({ minimum: 0 }), fsync: s.boolean({ default: false }) }, { required: ['port'] });
 *     type Config = Static<typeof configSchema>; // { port: number; fsync: boolean }
 *
 * A property is required in the type when the object lists it in
 * `required` or when it has a `default`: the schemas are validated with
 * ajv's `useDefaults` (schema/artefacts.ts), so a config that passed has
 * every defaulted key filled in. Ajv fills no defaults inside `anyOf`
 * or `oneOf`: give defaults only to properties of plain objects, or the
 * type says present what may be absent.
 *
 * Own builders rather than TypeBox or json-schema-to-ts: no run-time
 * dependency to load at start-up and no deep type-level parsing of schema
 * literals (docs/development.md has the measurements).
 */

/** The key of the phantom type property: declared for the type checker only, never set or read at run time. */
declare const staticType: unique symbol;
/** The key of the phantom input type property, likewise never set. */
declare const inputType: unique symbol;

/**
 * A JSON schema that validates values of type `T` (`I` as written, before
 * validation filled in the defaults). The types live only in optional
 * phantom properties, so a plain schema literal is a `Schema<T>` too
 * (unchecked, as before): only the builders' results tie a type to a schema.
 */
export interface Schema<T = unknown, I = T> extends JsonSchema {
  readonly [staticType]?: T;
  readonly [inputType]?: I;
}

/** The type of a value that passed the schema: every key with a default is present. */
export type Static<S> = S extends Schema<infer T, unknown> ? T : never;

/**
 * The type of a value as written, before validation: keys with a default
 * may be absent. For code that is also called with unvalidated configs (an
 * operator's node function from a test) and falls back to the default itself.
 */
export type Input<S> = S extends Schema<unknown, infer I> ? I : never;

/** What every schema may say about itself. */
interface Annotations {
  /** one line for the reference; every config field has one */
  readonly description?: string;
  /** a secret (password, token, key): taken, never given back; eddy shows it as "***" (schema/secrets.ts) */
  readonly writeOnly?: boolean;
}

/** A builder's options with a `default`: the result is marked so that objects make the key required. */
export type Marked<O> = O extends { readonly default: unknown } ? { readonly default: unknown } : unknown;

interface StringOptions extends Annotations {
  /** the string names a file or directory, used so (schema/paths.ts): confined by `--allow-path`, relative in a config file to its folder */
  readonly path?: PathUse;
  readonly minLength?: number;
  readonly maxLength?: number;
  readonly pattern?: string;
  readonly format?: string;
  readonly default?: string;
}

interface NumberOptions extends Annotations {
  readonly minimum?: number;
  readonly maximum?: number;
  readonly exclusiveMinimum?: number;
  readonly exclusiveMaximum?: number;
  readonly multipleOf?: number;
  readonly default?: number;
}

interface BooleanOptions extends Annotations {
  readonly default?: boolean;
}

interface ArrayOptions<T> extends Annotations {
  readonly minItems?: number;
  readonly maxItems?: number;
  readonly uniqueItems?: boolean;
  readonly default?: readonly T[];
}

/** Options of any other schema: annotations and a default of the value's type. */
interface ValueOptions<T> extends Annotations {
  readonly default?: T;
}

export function string<const O extends StringOptions = object>(options?: O): Schema<string> & Marked<O> {
  return { type: 'string', ...options } as Schema<string> & Marked<O>;
}

export function integer<const O extends NumberOptions = object>(options?: O): Schema<number> & Marked<O> {
  return { type: 'integer', ...options } as Schema<number> & Marked<O>;
}

export function number<const O extends NumberOptions = object>(options?: O): Schema<number> & Marked<O> {
  return { type: 'number', ...options } as Schema<number> & Marked<O>;
}

export function boolean<const O extends BooleanOptions = object>(options?: O): Schema<boolean> & Marked<O> {
  return { type: 'boolean', ...options } as Schema<boolean> & Marked<O>;
}

/**
 * One of the listed values (`{enum}`): the type is their union. No `type`
 * beside it, so a wrong value of any type is told the allowed ones
 * ("must be one of a, b"), not only "must be string".
 */
export function literals<const V extends readonly (string | number | boolean | null)[], const O extends ValueOptions<V[number]> = object>(
  values: V,
  options?: O,
): Schema<V[number]> & Marked<O> {
  return { enum: values, ...options } as unknown as Schema<V[number]> & Marked<O>;
}

export function array<T, I, const O extends ArrayOptions<T> = object>(items: Schema<T, I>, options?: O): Schema<T[], I[]> & Marked<O> {
  return { type: 'array', items, ...options } as Schema<T[], I[]> & Marked<O>;
}

interface RecordOptions<T> extends ValueOptions<T> {
  /** keys (any case) whose values are secrets, like a `writeOnly` field's: a header map's credential headers (schema/secrets.ts) */
  readonly secretKeys?: readonly string[];
  /** a sibling property listing more such keys (`secret_headers`) */
  readonly secretKeysFrom?: string;
}

/** An object whose keys are free and whose values all match `values`. */
export function record<T, I, const O extends RecordOptions<Record<string, T>> = object>(
  values: Schema<T, I>,
  options?: O,
): Schema<Record<string, T>, Record<string, I>> & Marked<O> {
  return { type: 'object', additionalProperties: values, ...options } as unknown as Schema<Record<string, T>, Record<string, I>> & Marked<O>;
}

/** A value matching at least one of the schemas (ajv tries them in order). */
export function anyOf<const S extends readonly Schema[], const O extends ValueOptions<Static<S[number]>> = object>(
  schemas: S,
  options?: O,
): Schema<Static<S[number]>, Input<S[number]>> & Marked<O> {
  return { ...options, anyOf: schemas } as unknown as Schema<Static<S[number]>, Input<S[number]>> & Marked<O>;
}

/** A value matching exactly one of the schemas. */
export function oneOf<const S extends readonly Schema[], const O extends ValueOptions<Static<S[number]>> = object>(
  schemas: S,
  options?: O,
): Schema<Static<S[number]>, Input<S[number]>> & Marked<O> {
  return { ...options, oneOf: schemas } as unknown as Schema<Static<S[number]>, Input<S[number]>> & Marked<O>;
}

/** Any JSON value (an event template, a value to send as it is). */
export function unknown<const O extends ValueOptions<unknown> = object>(options?: O): Schema & Marked<O> {
  return { ...options } as Schema & Marked<O>;
}

type Properties = Readonly<Record<string, Schema>>;

/** Keys whose schema has a default: filled in by validation, so present. */
type DefaultedKeys<P extends Properties> = { [K in keyof P]: P[K] extends { readonly default: unknown } ? K : never }[keyof P];

/** Shows an intersection of mapped types as one object type (in hovers and errors). */
type Flat<T> = { [K in keyof T]: T[K] };

/** A validated object: its required and its defaulted keys are present. */
export type ObjectStatic<P extends Properties, R extends keyof P> = Flat<
  { -readonly [K in R | DefaultedKeys<P>]-?: Static<P[K]> } & { -readonly [K in Exclude<keyof P, R | DefaultedKeys<P>>]?: Static<P[K]> }
>;

/** An object as written: only its required keys are sure to be present. */
export type ObjectInput<P extends Properties, R extends keyof P> = Flat<
  { -readonly [K in R]-?: Input<P[K]> } & { -readonly [K in Exclude<keyof P, R>]?: Input<P[K]> }
>;

interface ObjectOptions<R> extends Annotations {
  /** keys that must be present */
  readonly required?: R;
  /** `false` (the default): unknown keys are rejected; a schema: unknown keys must match it */
  readonly additionalProperties?: false | Schema;
  readonly minProperties?: number;
  /** alternatives of `required` (`[{required: ['a']}, {required: ['b']}]`: at least one of a, b); not reflected in the type */
  readonly anyOf?: readonly JsonSchema[];
  /** keys that, when present, need other keys too (`{a: ['b']}`: with a, b is required); not reflected in the type */
  readonly dependencies?: Readonly<Record<string, readonly string[]>>;
  readonly default?: Record<string, unknown>;
}

/**
 * An object with these properties (in this order: ajv checks them in it,
 * and reports the first failure). Unknown keys are rejected unless
 * `additionalProperties` says otherwise.
 */
export function object<const P extends Properties, const R extends readonly (keyof P & string)[] = [], const O extends ObjectOptions<R> = ObjectOptions<R>>(
  properties: P,
  options?: O & ObjectOptions<R>,
): Schema<ObjectStatic<P, R[number]>, ObjectInput<P, R[number]>> & Marked<O> {
  const { required, additionalProperties = false, ...rest } = options ?? {};
  return {
    type: 'object',
    additionalProperties,
    ...rest,
    ...(required && required.length > 0 ? { required } : {}),
    properties,
  } as unknown as Schema<ObjectStatic<P, R[number]>, ObjectInput<P, R[number]>> & Marked<O>;
}

/**
 * The builders as one object, imported as `import { s } from '…/schema/typed'`:
 * a namespace import (`import * as s`) makes tsc emit its interop helper into
 * every importing file, 1.4 KB each in the CLI bundle.
 */
export const s = { string, integer, number, boolean, literals, array, record, anyOf, oneOf, unknown, object } as const;
