/**
 * Compact JSON for values JSON.stringify cannot write as eddy means them:
 * BigInt (written exactly, as an integer literal), binary data (a Buffer
 * or any Uint8Array, written as a standard base64 string, as the original
 * runtime does), and a double whose value is an integer beyond ±2^53
 * (written in exponent form, `1.152921504606847e+18`: JSON.stringify's
 * `1152921504606847000` would read back as a BigInt of another value). Everything else follows JSON.stringify: `toJSON` is honoured,
 * `undefined`, functions and symbols are left out of objects and become
 * `null` in arrays, non-finite numbers become `null`.
 */
export function stringifyPrecise(value: unknown): string | undefined {
  return write(value);
}

/**
 * Tells whether a value holds a BigInt or binary data anywhere, so the codec
 * can keep the native JSON.stringify for everything else. Cycles are not
 * checked here; JSON.stringify reports them.
 */
export function needsPreciseStringify(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return typeof value === 'bigint' || isUnsafeIntegralDouble(value);
  if (ArrayBuffer.isView(value)) return true;
  if (Array.isArray(value)) {
    for (const item of value) if (needsPreciseStringify(item)) return true;
    return false;
  }
  for (const key in value) {
    if (needsPreciseStringify((value as Record<string, unknown>)[key])) return true;
  }
  return false;
}

function write(value: unknown): string | undefined {
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'number':
      if (isUnsafeIntegralDouble(value)) return value.toExponential();
      return Number.isFinite(value) ? String(value) : 'null';
    case 'bigint':
      return value.toString();
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object':
      if (value === null) return 'null';
      if (value instanceof Uint8Array) return `"${Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('base64')}"`;
      if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return write((value as { toJSON(): unknown }).toJSON());
      if (Array.isArray(value)) return `[${value.map((item) => write(item) ?? 'null').join(',')}]`;
      return writeObject(value as Record<string, unknown>);
    default:
      return undefined; // undefined, function, symbol
  }
}

function writeObject(object: Record<string, unknown>): string {
  const parts: string[] = [];
  for (const key of Object.keys(object)) {
    const text = write(object[key]);
    if (text !== undefined) parts.push(`${JSON.stringify(key)}:${text}`);
  }
  return `{${parts.join(',')}}`;
}

/**
 * A double holding an integer beyond ±2^53: written as an integer literal it
 * would read back as a BigInt, and (its shortest text having zeros for the
 * digits a double cannot hold) not even of its own value.
 */
export function isUnsafeIntegralDouble(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && Math.abs(value) > 2 ** 53;
}
