/**
 * Path fields: a config field whose schema says `path` names a file or a
 * directory, and says how eddy uses it. The publish policy confines every
 * such field (`--allow-path`, runtime/policy.ts), a config file's relative
 * paths are taken from its folder (config/paths.ts), and `eddy validate`
 * checks that what is read exists and what is written can be. A keyword on
 * the field rather than a list beside the type: a shared field (a
 * listener's `tls`, nats `options`) is marked once for every type that uses
 * it, and the field, its description and its use are read in one place, as
 * `writeOnly` marks a secret (schema/secrets.ts).
 */
import type { JsonSchema } from './json-schema';

/**
 * How eddy uses the path: `read`, a file it reads, which must exist; `file`,
 * a file it writes, created in a folder that must exist; `tree`, created
 * with the folders leading to it (a directory of state, a cache).
 */
export type PathUse = 'read' | 'file' | 'tree';

/** A path field of a config: the keys leading to it, and how eddy uses it. */
export interface PathField {
  readonly keys: readonly string[];
  readonly use: PathUse;
}

const isObject = (v: unknown): v is JsonSchema => typeof v === 'object' && v !== null && !Array.isArray(v);

const found = new WeakMap<JsonSchema, readonly PathField[]>();

/**
 * Every path field a config schema declares, nested objects included
 * (`tls.cert`), and those of each object alternative (`anyOf`, `oneOf`).
 * Lists are not followed: no builtin type holds paths in one, and a path
 * field is found by its keys.
 */
export function pathFields(schema: JsonSchema | undefined): readonly PathField[] {
  if (schema === undefined) return [];
  let fields = found.get(schema);
  if (fields === undefined) found.set(schema, (fields = collect(schema, [])));
  return fields;
}

function collect(schema: JsonSchema, keys: readonly string[]): PathField[] {
  const fields: PathField[] = [];
  if (keys.length > 0 && typeof schema.path === 'string') fields.push({ keys, use: schema.path as PathUse });
  if (isObject(schema.properties)) {
    for (const [key, sub] of Object.entries(schema.properties)) if (isObject(sub)) fields.push(...collect(sub, [...keys, key]));
  }
  for (const branch of [schema.anyOf, schema.oneOf]) {
    if (Array.isArray(branch)) for (const sub of branch) if (isObject(sub)) fields.push(...collect(sub, keys));
  }
  // a field named in two branches is one field
  return fields.filter((f, i) => fields.findIndex((g) => g.keys.join('\0') === f.keys.join('\0')) === i);
}
