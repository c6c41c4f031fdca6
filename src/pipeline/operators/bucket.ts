import { Observable, type SchedulerLike } from '../../core/rx';
import type { EddyEvent, PortEvent } from '../../core/event';
import type { OperatorNode, OperatorType } from '../operator';
import { Lru } from '../../core/lru';
import { withError } from './_shared/support';
import { s } from '../../schema/typed';

/** Defaults of the original runtime for the per-event meta parameters. */
const DEFAULT_TIME_RANGE_MS = 1000;
const DEFAULT_WINDOWS = 100;
const DEFAULT_CARDINALITY = 1000;

/**
 * A sliding window of `windows` slots of `timeRange / windows` ms each that
 * admits at most `rate` events over the whole window.
 */
export class SlidingWindow {
  private readonly slots: number[];
  private readonly slotMs: number;
  private head = -1; // absolute index of the newest slot seen
  private total = 0;

  constructor(
    readonly rate: number,
    readonly timeRange: number,
    readonly windows: number,
  ) {
    this.slots = new Array<number>(windows).fill(0);
    this.slotMs = timeRange / windows;
  }

  /** Counts one event at `nowMs` if it fits; false means over the rate. */
  inc(nowMs: number): boolean {
    const slot = Math.floor(nowMs / this.slotMs);
    if (this.head < 0) this.head = slot;
    // expire the slots that slid out, at most one full turn
    for (let s = this.head + 1; s <= slot && s <= this.head + this.windows; s++) {
      const i = s % this.windows;
      this.total -= this.slots[i];
      this.slots[i] = 0;
    }
    if (slot > this.head) this.head = slot;
    if (this.total >= this.rate) return false;
    this.slots[slot % this.windows]++;
    this.total++;
    return true;
  }
}

/** Reads an optional positive number from meta (missing: the fallback); a wrong type is an error message. */
function positive<F extends number | undefined>(meta: Record<string, unknown>, key: string, fallback: F): number | string | F {
  const v = meta[key];
  if (v === undefined || v === null) return fallback;
  if (typeof v === 'number' && Number.isFinite(v) && v > 0) return v;
  if (typeof v === 'bigint' && v > 0n) return Number(v);
  // a scalar as its text, quoted; a record or a list by its kind (its text would be [object Object])
  const got = typeof v !== 'object' ? JSON.stringify(`${v as number | bigint | string | boolean}`) : Array.isArray(v) ? 'a list' : 'a record';
  return `bucket: meta ${key} must be a positive number, got ${got}`;
}

/**
 * How many classes a bucket node keeps, least recently used evicted first:
 * classes come from event data (through `runtime::cel`), so without a bound
 * a stream of distinct classes would grow the state without end.
 */
export const MAX_CLASSES = 1000;

/**
 * Rate limiting per `$class` and `$dimensions`. Each class keeps an LRU of at
 * most `$cardinality` dimension windows, and the node at most MAX_CLASSES
 * classes, so the state stays bounded however many distinct values arrive;
 * an evicted class or dimension simply starts afresh.
 * Window parameters are frozen when a dimension is first seen.
 */
export function bucketNode(scheduler: SchedulerLike): OperatorNode {
  return {
    ports: ['overflow', 'err'],
    apply: (input) =>
      new Observable<PortEvent>((subscriber) => {
        const classes = new Lru<string, Lru<string, SlidingWindow>>(MAX_CLASSES);
        const route = (event: EddyEvent): PortEvent => {
          const meta = event.meta;
          const cls = meta.class;
          if (typeof cls !== 'string') return { port: 'err', event: withError(event, 'bucket: meta class is missing or not a string') };
          let dims = classes.get(cls);
          if (dims === undefined) {
            const cardinality = positive(meta, 'cardinality', DEFAULT_CARDINALITY);
            if (typeof cardinality === 'string') return { port: 'err', event: withError(event, cardinality) };
            dims = new Lru<string, SlidingWindow>(Math.max(1, Math.floor(cardinality)));
            classes.set(cls, dims);
          }
          const key = dimensionKey(meta.dimensions);
          let window = dims.get(key);
          if (window === undefined) {
            const rate = positive(meta, 'rate', undefined);
            const timeRange = positive(meta, 'time_range', DEFAULT_TIME_RANGE_MS);
            const windows = positive(meta, 'windows', DEFAULT_WINDOWS);
            for (const p of [timeRange, windows, rate]) if (typeof p === 'string') return { port: 'err', event: withError(event, p) };
            if (rate === undefined) return { port: 'err', event: withError(event, 'bucket: meta rate is missing for a new dimension') };
            window = new SlidingWindow(rate as number, timeRange as number, Math.max(1, Math.floor(windows as number)));
            dims.set(key, window);
          }
          return { port: window.inc(scheduler.now()) ? 'out' : 'overflow', event };
        };
        return input.subscribe({
          next: (event) => subscriber.next(route(event)),
          error: (err: unknown) => subscriber.error(err),
          complete: () => subscriber.complete(),
        });
      }),
  };
}

/** grouper::bucket: takes no config; everything comes from event meta. */
export const bucket: OperatorType<Record<string, never>> = {
  name: 'grouper::bucket',
  examples: [{}],
  outputPorts: () => ['overflow', 'err'],
  // reads meta only, and forwards the event objects (an err copy through withError): no own data needed
  forwardsUnchanged: true,
  configSchema: s.object({}, { description: 'Rate-limits events per class and dimensions taken from event meta; events over the limit go to `overflow`.' }),
  create: (_config, ctx) => bucketNode(ctx.scheduler),
};

/**
 * The key of a `$dimensions` value: a string as it is behind \u0001 (no JSON
 * text starts with it, so it is apart from every other key; the usual case,
 * without a JSON.stringify with a replacer per event), anything else as JSON.
 */
function dimensionKey(dimensions: unknown): string {
  if (typeof dimensions === 'string') return `\u0001${dimensions}`;
  return JSON.stringify(dimensions ?? null, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
}
