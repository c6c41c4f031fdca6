import type { JsonSchema } from '../../schema/json-schema';
import { s } from '../../schema/typed';
import type { Schema, Static } from '../../schema/typed';

/**
 * A processor's config schema: an object with exactly these properties, and
 * the type's one-line summary as its description (the reference shows it).
 */
// eslint-disable-next-line @typescript-eslint/no-generated-empty-object-type -- the default is meant: a processor without settings has the empty object as its config
export function processorSchema<const P extends Readonly<Record<string, Schema>> = Record<never, Schema>>(summary: string, properties?: P) {
  return s.object(properties ?? ({} as P), { description: summary });
}

/** A positive integer config value; bounded by the safe integers so arithmetic on it stays exact. */
export function positiveIntegerProperty(fallback: number, description: string) {
  return s.integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, default: fallback, description });
}

/**
 * A separator: one character of one byte in UTF-8 (ASCII), since frames are
 * split on a single byte.
 */
export function separatorProperty(fallback: string, description: string) {
  return s.string({ pattern: '^[\\u0000-\\u007f]$', default: fallback, description });
}

/**
 * The config with the schema's defaults in place of absent keys, so a
 * default is written once, in the schema, and typed by it. The config has
 * passed the schema at publish time (`Repository`), so values are not
 * checked here again.
 */
export function withDefaults<S extends Schema>(schema: S, config: Record<string, unknown>): Static<S> {
  const filled: Record<string, unknown> = {};
  for (const [key, property] of Object.entries((schema.properties ?? {}) as Record<string, JsonSchema>)) {
    if (property.default !== undefined) filled[key] = property.default;
  }
  return { ...filled, ...config } as Static<S>;
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
