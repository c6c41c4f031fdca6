/**
 * Which windows an event belongs to, for each window kind of
 * window::aggregate. Windows are half-open, `[start, end)` in epoch ms: an
 * event exactly at a window's end belongs to the next one.
 */
import { durationMs, duration } from '../../schema/duration';
import { s } from '../../schema/typed';
import type { Input } from '../../schema/typed';

export type WindowSpec =
  | { readonly kind: 'tumbling'; readonly size: number }
  | { readonly kind: 'hopping'; readonly size: number; readonly hop: number }
  | { readonly kind: 'session'; readonly gap: number }
  | { readonly kind: 'count'; readonly count: number };

/** The `window` config: `{size}`, `{size, hop}`, `{gap}` or `{count}`. */
/** `window` of window::aggregate: exactly one kind (checked by `windowSpec`, naming the field). */
export const windowSchema = s.object(
  {
    size: duration('window length: tumbling, or sliding with hop'),
    hop: duration('how far a sliding window moves; at most size'),
    gap: duration("session window: a group's session closes after this long without an event"),
    count: s.integer({ minimum: 1, description: 'count window: closes at this many events of the group' }),
  },
  { description: '{size} tumbling; {size, hop} sliding; {gap} session; {count} count' },
);

export type WindowConfig = Input<typeof windowSchema>;

/** Reads the `window` config; throws an Error naming the field when it is not exactly one kind. */
export function windowSpec(config: WindowConfig): WindowSpec {
  const given = (['size', 'gap', 'count'] as const).filter((k) => config[k] !== undefined);
  if (given.length !== 1) {
    throw new Error(
      `window: give exactly one of size (tumbling, or sliding with hop), gap (session) or count, got ${given.length === 0 ? 'none' : given.join(' and ')}`,
    );
  }
  if (config.hop !== undefined && config.size === undefined) throw new Error('window.hop: only with window.size (a sliding window)');
  if (config.count !== undefined) return { kind: 'count', count: config.count };
  if (config.gap !== undefined) return { kind: 'session', gap: durationMs(config.gap, 'window.gap') };
  const size = durationMs(config.size, 'window.size');
  if (config.hop === undefined) return { kind: 'tumbling', size };
  const hop = durationMs(config.hop, 'window.hop');
  if (hop > size) throw new Error(`window.hop: must not be longer than window.size (${hop} ms > ${size} ms): events between windows would belong to none`);
  if (hop === size) return { kind: 'tumbling', size };
  return { kind: 'hopping', size, hop };
}

/** The starts of the fixed (tumbling or hopping) windows holding time `t`, oldest first. */
export function fixedWindowStarts(spec: WindowSpec & { kind: 'tumbling' | 'hopping' }, t: number): number[] {
  const hop = spec.kind === 'hopping' ? spec.hop : spec.size;
  const last = Math.floor(t / hop) * hop;
  const starts: number[] = [];
  for (let start = last; start > t - spec.size; start -= hop) starts.unshift(start);
  return starts;
}
