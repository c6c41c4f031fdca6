import { s } from './typed';

/**
 * Durations in operator configs: a number of milliseconds, or a string with
 * a unit (`500ms`, `10s`, `1m`, `2h`, `1d`, and `1m30s` combinations).
 */
const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const PART = /(\d+(?:\.\d+)?)(ms|s|m|h|d)/gy;

/** A duration string's shape; messages.ts knows a duration field by it. */
export const DURATION_PATTERN = '^(\\d+(\\.\\d+)?(ms|s|m|h|d))+$';

/** What a duration looks like, for the messages that refuse one. */
export const DURATION_WORDS = 'a duration is a positive number of milliseconds, or a number with a unit: 500ms, 10s, 1m, 2h, 1d, or combined: 1h30m';

/** The schema of a duration field (validated further by `durationMs`). */
export const durationSchema = (description: string) =>
  s.anyOf([s.number({ exclusiveMinimum: 0 }), s.string({ pattern: DURATION_PATTERN })], {
    description: `${description} (milliseconds, or a string such as 500ms, 10s, 1m, 1h30m)`,
  });

/** A duration field with a default, filled in by the validator: present in the validated config's type. */
export const durationWithDefault = (description: string, value: number | string) =>
  s.anyOf([s.number({ exclusiveMinimum: 0 }), s.string({ pattern: DURATION_PATTERN })], {
    description: `${description} (milliseconds, or a string such as 500ms, 10s, 1m, 1h30m)`,
    default: value,
  });

/** Milliseconds of a duration; throws naming `field` when it is not one or not positive. */
export function durationMs(value: unknown, field: string): number {
  if (typeof value === 'number') {
    if (!(value > 0) || !Number.isFinite(value)) throw new Error(`${field}: ${value} is not a duration; ${DURATION_WORDS}`);
    return value;
  }
  if (typeof value !== 'string') throw new Error(`${field}: ${JSON.stringify(value)} is not a duration; ${DURATION_WORDS}`);
  let total = 0;
  let at = 0;
  PART.lastIndex = 0;
  for (let m = PART.exec(value); m !== null; m = PART.exec(value)) {
    total += Number(m[1]) * UNITS[m[2]];
    at = PART.lastIndex;
  }
  if (at !== value.length || value.length === 0) throw new Error(`${field}: ${JSON.stringify(value)} is not a duration; ${DURATION_WORDS}`);
  if (!(total > 0)) throw new Error(`${field}: ${JSON.stringify(value)} is not a duration; ${DURATION_WORDS}`);
  return total;
}
