/** Reading a processor's config: unknown keys and wrong types are errors at creation, not surprises later. */
export type ProcessorConfig = Record<string, unknown>;

export function onlyKeys(processor: string, config: ProcessorConfig, allowed: readonly string[]): void {
  for (const key of Object.keys(config)) {
    if (!allowed.includes(key)) {
      const known = allowed.length > 0 ? ` (known: ${allowed.join(', ')})` : ' (it takes none)';
      throw new Error(`${processor}: unknown config key ${JSON.stringify(key)}${known}`);
    }
  }
}

export function positiveInteger(processor: string, config: ProcessorConfig, key: string, fallback: number): number {
  const value = config[key] ?? fallback;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value <= 0) {
    throw new Error(`${processor}: ${key} must be a positive integer, not ${JSON.stringify(value)}`);
  }
  return value;
}

/** A separator given as a one-byte string. */
export function separatorByte(processor: string, config: ProcessorConfig, fallback: number): number {
  const value = config.separator;
  if (value === undefined) return fallback;
  const bytes = typeof value === 'string' ? Buffer.from(value, 'utf8') : undefined;
  if (!bytes || bytes.length !== 1) throw new Error(`${processor}: separator must be a one-byte string, not ${JSON.stringify(value)}`);
  return bytes[0];
}

/** The first bytes of a frame, for an error message. */
export function preview(bytes: Buffer, max = 40): string {
  const shown = JSON.stringify(bytes.subarray(0, max).toString('utf8'));
  return bytes.length > max ? `${shown}…` : shown;
}

/** An error that still delivers the good frames of the chunk it came from. */
export function errorWithFrames(message: string, frames: Buffer[]): Error & { frames: Buffer[] } {
  return Object.assign(new Error(message), { frames });
}
