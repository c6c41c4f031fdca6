import { builtinCodecs } from '../../codecs';

/** Header values as the spec's `$request`/`$response` carry them: lowercase names, every value in a list (a header not there: undefined). */
export type HeaderLists = Partial<Record<string, string[]>>;

/** The first mime type of each builtin codec: the Content-Type of a body encoded with it. */
const MIME_OF = new Map(builtinCodecs.map((c) => [c.name, c.mimeTypes?.[0] ?? 'application/octet-stream']));

/** The Content-Type for a body encoded with `codec` (a codec without a mime type of its own: octet-stream). */
export function mimeOf(codec: string): string {
  return MIME_OF.get(codec) ?? 'application/octet-stream';
}

/** `[name, value, name, value, ...]` (Node's rawHeaders) as lowercase names to lists of values. */
export function headerLists(raw: readonly string[]): HeaderLists {
  // no prototype: a header named `constructor` must not find Object's, nor `__proto__` set the prototype
  const out = Object.create(null) as HeaderLists;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i].toLowerCase();
    const list = out[name];
    if (list === undefined) out[name] = [raw[i + 1]];
    else list.push(raw[i + 1]);
  }
  return out;
}

/**
 * Headers from config or metadata (name to a string, a number or a list of
 * them) as Node and undici take them; throws naming the header when a value
 * is of another kind.
 */
export function headerValues(headers: unknown, where: string): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  if (headers === undefined || headers === null) return out;
  if (typeof headers !== 'object' || Array.isArray(headers)) throw new Error(`${where} must be a map of header names to values`);
  for (const [name, value] of Object.entries(headers as Record<string, unknown>)) {
    if (typeof value === 'string') out[name] = value;
    else if (typeof value === 'number' || typeof value === 'boolean') out[name] = String(value);
    else if (Array.isArray(value) && value.every((v) => typeof v === 'string' || typeof v === 'number')) out[name] = value.map(String);
    else throw new Error(`${where}.${name} must be a string or a list of strings`);
  }
  return out;
}

/** The value of a header, matched case-insensitively (the first value of a list). */
export function headerNamed(headers: Record<string, string | string[]>, name: string): string | undefined {
  for (const key of Object.keys(headers)) {
    if (key.length === name.length && key.toLowerCase() === name) {
      const value = headers[key];
      return Array.isArray(value) ? value[0] : value;
    }
  }
  return undefined;
}
