/**
 * Secret fields: a config field whose schema says `writeOnly: true` (JSON
 * Schema's own word for "may be sent, never returned": every password,
 * token, key and license of the builtin types) is shown as `"***"` wherever
 * eddy gives a config back: the REST API, `eddy status`, the console
 * (docs/security.md, "Secrets"). The runtime keeps the value itself: it
 * needs it to connect, and `--data-dir` stores it to connect again after a
 * restart.
 */
import type { JsonSchema } from './json-schema';

export const REDACTED = '***';

type Node = Record<string, unknown>;

const isObject = (v: unknown): v is Node => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Whether a value holds a secret worth hiding: an empty string or null is none (no password is set). */
const isSet = (v: unknown): boolean => v !== undefined && v !== null && v !== '';

/**
 * Calls `found(path, value)` for every secret field that `value` sets,
 * following `properties`, `additionalProperties`, `items` and every branch
 * of `anyOf`/`oneOf`/`allOf` (a field secret in any branch is secret).
 */
function walk(schema: unknown, value: unknown, path: string, found: (path: string, holder: Node | unknown[], key: string | number) => void, holder?: Node | unknown[], key?: string | number): void {
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
    for (const [k, v] of Object.entries(value)) {
      const sub = Object.hasOwn(props, k) ? props[k] : schema.additionalProperties;
      walk(sub, v, path === '' ? k : `${path}.${k}`, found, value, k);
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

/** A copy of `value` with every secret it sets replaced by `"***"` (the value itself is not changed). */
export function redactSecrets<T>(schema: JsonSchema | undefined, value: T): T {
  if (schema === undefined || secretPaths(schema, value).length === 0) return value;
  const copy = structuredClone(value);
  walk(schema, copy, '', (_path, holder, key) => {
    (holder as Record<string | number, unknown>)[key] = REDACTED;
  });
  return copy;
}
