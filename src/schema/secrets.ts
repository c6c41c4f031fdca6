/**
 * Secret fields: a config field whose schema says `writeOnly: true` (JSON
 * Schema's own word for "may be sent, never returned": every password,
 * token, key and license of the builtin types) is shown as `"***"` wherever
 * eddy gives a config back: the REST API, `eddy status`, the console
 * (docs/security.md, "Secrets"). The runtime keeps the value itself: it
 * needs it to connect, and `--data-dir` stores it to connect again after a
 * restart. A map whose schema lists `secretKeys` (a header map: its
 * credential headers, `authorization`, `x-api-key`, …, matched whatever
 * their case) holds a secret under each of those keys, and under each key
 * its sibling named by `secretKeysFrom` lists (`secret_headers`). A password
 * inside a URL (`amqp://user:pass@host`) is shown as `amqp://user:***@host`
 * too, in any string of a config; it is not refused at publish as a marked
 * field is (docs/security.md says why).
 */
import { REDACTED, hasUrlCredentialsDeep, maskUrlCredentialsDeep } from '../core/redact';
import type { JsonSchema } from './json-schema';

export { REDACTED };

type Node = Record<string, unknown>;

const isObject = (v: unknown): v is Node => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Whether a value holds a secret worth hiding: an empty string or null is none (no password is set). */
const isSet = (v: unknown): boolean => v !== undefined && v !== null && v !== '' && !(Array.isArray(v) && v.every((x) => !isSet(x)));

/** The keys of a map that hold secrets: its schema's `secretKeys` and those its sibling `secretKeysFrom` lists, lower case. */
function secretKeysOf(schema: Node, siblings: Node | undefined): Set<string> | undefined {
  const own = Array.isArray(schema.secretKeys) ? (schema.secretKeys as unknown[]) : [];
  const from = typeof schema.secretKeysFrom === 'string' && siblings !== undefined ? siblings[schema.secretKeysFrom] : undefined;
  const listed: unknown[] = Array.isArray(from) ? from : [];
  const keys = [...own, ...listed].filter((k): k is string => typeof k === 'string').map((k) => k.toLowerCase());
  return keys.length > 0 ? new Set(keys) : undefined;
}

/**
 * Calls `found(path, value)` for every secret field that `value` sets,
 * following `properties`, `additionalProperties`, `items` and every branch
 * of `anyOf`/`oneOf`/`allOf` (a field secret in any branch is secret).
 * `siblings` is the object `value` sits in (where `secretKeysFrom` looks).
 */
function walk(
  schema: unknown,
  value: unknown,
  path: string,
  found: (path: string, holder: Node | unknown[], key: string | number) => void,
  holder?: Node | unknown[],
  key?: string | number,
): void {
  if (!isObject(schema)) return;
  if (schema.writeOnly === true && holder !== undefined && key !== undefined && isSet(value)) {
    found(path, holder, key);
    return;
  }
  for (const branch of ['anyOf', 'oneOf', 'allOf'] as const) {
    const list = schema[branch];
    if (Array.isArray(list)) for (const s of list) walk(s, value, path, found, holder, key);
  }
  if (isObject(value)) {
    const props = isObject(schema.properties) ? schema.properties : {};
    const secretKeys = secretKeysOf(schema, isObject(holder) ? holder : undefined);
    for (const [k, v] of Object.entries(value)) {
      const at = path === '' ? k : `${path}.${k}`;
      if (secretKeys?.has(k.toLowerCase()) && isSet(v)) {
        found(at, value, k);
        continue;
      }
      const sub = Object.hasOwn(props, k) ? props[k] : schema.additionalProperties;
      walk(sub, v, at, found, value, k);
    }
  } else if (Array.isArray(value) && isObject(schema.items)) {
    value.forEach((v, i) => walk(schema.items, v, `${path}[${i}]`, found, value, i));
  }
}

/** The paths (`sasl.password`, `headers.authorization`) of the secrets `value` sets, by its schema. */
export function secretPaths(schema: JsonSchema | undefined, value: unknown): string[] {
  const paths: string[] = [];
  walk(schema, value, '', (path) => paths.push(path));
  return [...new Set(paths)];
}

/** Whether `redactSecrets` would change anything in `value`. */
export function hasSecrets(schema: JsonSchema | undefined, value: unknown): boolean {
  return secretPaths(schema, value).length > 0 || hasUrlCredentialsDeep(value);
}

/** A copy of `value` with every secret it sets replaced by `"***"`, and the passwords in URLs masked (the value itself is not changed). */
export function redactSecrets<T>(schema: JsonSchema | undefined, value: T): T {
  if (!hasSecrets(schema, value)) return value;
  const copy = structuredClone(value);
  walk(schema, copy, '', (_path, holder, key) => {
    (holder as Record<string | number, unknown>)[key] = REDACTED;
  });
  return maskUrlCredentialsDeep(copy);
}
