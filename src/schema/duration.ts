import { s, type Marked, type Schema } from './typed';

/**
 * Durations: every time setting of every type is a duration field, built by
 * `duration` and read by `durationMs`. A duration is a string with a unit
 * (`500ms`, `10s`, `1m`, `2h`, `1d`, and combinations such as `1m30s`) or a
 * bare number, read in the unit the field has always used: milliseconds
 * for most, seconds for blackhole's `*_secs`, nanoseconds for blaster's
 * `interval` (docs/config-files.md#durations). The key names never change:
 * `stop_after_secs: 5` and `stop_after_secs: "5s"` mean the same.
 */
const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const PART = /(\d+(?:\.\d+)?)(ms|s|m|h|d)/gy;

/** What a bare number of a duration field counts. */
export type DurationUnit = 'ms' | 's' | 'ns';

/** Milliseconds in one of each bare-number unit. */
const BARE_MS: Record<DurationUnit, number> = { ms: 1, s: 1000, ns: 1e-6 };
const BARE_WORDS: Record<DurationUnit, string> = { ms: 'milliseconds', s: 'seconds', ns: 'nanoseconds' };

/** A duration string's shape; messages.ts knows a duration field by it. */
export const DURATION_PATTERN = '^(\\d+(\\.\\d+)?(ms|s|m|h|d))+$';

/** What a duration looks like, for the messages that refuse one: a bare number's unit, and whether 0 is one. */
export function durationWords(unit: DurationUnit = 'ms', zero = false): string {
  return `a duration is a ${zero ? 'non-negative' : 'positive'} number of ${BARE_WORDS[unit]}, or a number with a unit: 500ms, 10s, 1m, 2h, 1d, or combined: 1h30m`;
}

/** What a duration looks like in a field of milliseconds. */
export const DURATION_WORDS = durationWords();

/** How a duration field reads: the same options for the schema (`duration`) and the reader (`durationMs`). */
export interface DurationOptions {
  /** what a bare number counts: the unit the field has always used; default `ms` */
  readonly unit?: DurationUnit;
  /** 0 is allowed, and means this (`never stops`, `as fast as possible`); without it a duration is positive */
  readonly zero?: string;
  /** the shortest duration allowed, in milliseconds (a server's lower bound) */
  readonly minimumMs?: number;
}

interface DurationFieldOptions extends DurationOptions {
  /** the default, as a config would write it (a bare number in `unit`, or a string): filled in by the validator */
  readonly default?: number | string;
}

/**
 * The schema of a duration field: a bare number in `unit` or a duration
 * string. The description gets the unit of a bare number (and what 0
 * means); the `unit` keyword says it to the readers of schemas (the
 * references, messages.ts). With a `default`, the field is present in the
 * validated config's type.
 */
export function duration<const O extends DurationFieldOptions = object>(description: string, options?: O): Schema<number | string> & Marked<O> {
  const unit = options?.unit ?? 'ms';
  const zero = options?.zero;
  const bound =
    options?.minimumMs !== undefined ? { minimum: options.minimumMs / BARE_MS[unit] } : zero !== undefined ? { minimum: 0 } : { exclusiveMinimum: 0 };
  const what = `${BARE_WORDS[unit]}, or a string such as 500ms, 10s, 1m, 1h30m${zero === undefined ? '' : `; 0 ${zero}`}`;
  return {
    description: `${description} (${what})`,
    ...(options?.default === undefined ? {} : { default: options.default }),
    unit,
    anyOf: [s.number(bound), s.string({ pattern: DURATION_PATTERN })],
  } as unknown as Schema<number | string> & Marked<O>;
}

/** The unit of a bare number of a duration field's schema (its `unit` keyword); undefined: not a duration field. */
export function durationUnit(schema: { readonly unit?: unknown; readonly anyOf?: unknown }): DurationUnit | undefined {
  return typeof schema.unit === 'string' && schema.unit in BARE_MS && Array.isArray(schema.anyOf) ? (schema.unit as DurationUnit) : undefined;
}

/**
 * Milliseconds of a duration field's value: a bare number read in
 * `options.unit` (default ms), or a duration string. Throws naming `field`
 * when it is not a duration, is 0 where `options.zero` does not allow it,
 * or is below `options.minimumMs`.
 */
export function durationMs(value: unknown, field: string, options: DurationOptions = {}): number {
  const unit = options.unit ?? 'ms';
  const refuse = () =>
    new Error(`${field}: ${typeof value === 'number' ? value : JSON.stringify(value)} is not a duration; ${durationWords(unit, options.zero !== undefined)}`);
  let ms: number;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw refuse();
    ms = value * BARE_MS[unit];
  } else if (typeof value === 'string' && value.length > 0) {
    ms = 0;
    let at = 0;
    PART.lastIndex = 0;
    for (let m = PART.exec(value); m !== null; m = PART.exec(value)) {
      ms += Number(m[1]) * UNITS[m[2]];
      at = PART.lastIndex;
    }
    if (at !== value.length) throw refuse();
  } else {
    throw refuse();
  }
  if (options.zero === undefined ? !(ms > 0) : !(ms >= 0)) throw refuse();
  if (options.minimumMs !== undefined && ms < options.minimumMs)
    throw new Error(`${field}: ${JSON.stringify(value)} is shorter than the shortest allowed, ${options.minimumMs}ms`);
  return ms;
}
