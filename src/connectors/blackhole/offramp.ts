import type { Histogram } from 'hdr-histogram-js';
import type * as JsHistogramFactory from 'hdr-histogram-js/dist/JsHistogramFactory';
import { monoNs, toMonoNs } from '../../core/clock';
import type { OfframpContext, OfframpType } from '../connector';
import type { EddyEvent } from '../../core/event';
import { BucketCounts } from './bucket-counts';
import { s } from '../../schema/typed';
import { duration, durationMs } from '../../schema/duration';
import type { Static } from '../../schema/typed';

/** The benchmark's keys: given together they turn the measurement on; none of them, a plain sink. */
const MEASURE_KEYS = ['warmup_secs', 'stop_after_secs', 'significant_figures'] as const;

/** The benchmark's times: a bare number is seconds, as they always were (the keys say so). */
const WARMUP = { unit: 's', zero: 'measures from the start' } as const;
const STOP_AFTER = { unit: 's', zero: 'never stops' } as const;

const configSchema = s.object(
  {
    warmup_secs: duration('benchmark: the time after start during which nothing is measured (with stop_after_secs and significant_figures)', WARMUP),
    stop_after_secs: duration('benchmark: the time of measurement, then report and stop the process (with warmup_secs and significant_figures)', STOP_AFTER),
    significant_figures: s.integer({
      minimum: 1,
      maximum: 5,
      description: 'benchmark: significant figures of the histogram (with warmup_secs and stop_after_secs)',
    }),
    structured: s.boolean({ description: 'benchmark: print the report as one JSON line (default false)' }),
    count_field: s.string({
      minLength: 1,
      description:
        "benchmark: each event counts as the number in this top-level data field (a window's count()), so events/s are the input events the outputs stand for",
    }),
  },
  {
    description: 'Acks and discards every event; with its benchmark keys, measures their latency.',
    // one benchmark key asks for the measurement, which needs all three; the report's options need a measurement
    dependencies: {
      warmup_secs: ['stop_after_secs', 'significant_figures'],
      stop_after_secs: ['warmup_secs', 'significant_figures'],
      significant_figures: ['warmup_secs', 'stop_after_secs'],
      structured: MEASURE_KEYS,
      count_field: MEASURE_KEYS,
    },
  },
);

type BlackholeConfig = Static<typeof configSchema>;

/** A config that asks for the measurement: the three benchmark keys, which the schema lets come only together. */
export type MeasureConfig = BlackholeConfig & { warmup_secs: number | string; stop_after_secs: number | string; significant_figures: number };

/** Whether a config asks for the measurement (any benchmark key: after validation, all three are there). */
export function measures(config: BlackholeConfig): config is MeasureConfig {
  return MEASURE_KEYS.some((key) => config[key] !== undefined);
}

/** The structured report (`structured: true`): one JSON line on stdout. */
export interface BlackholeReport {
  events: number;
  bytes: number;
  seconds: number;
  events_per_second: number;
  megabytes_per_second: number;
  latency_ns: { p50: number; p90: number; p99: number; p999: number; max: number; mean: number };
  peak_rss_bytes: number;
}

/**
 * blackhole: acks (auto-acking) and discards every event; the shared
 * machinery counts them. With the benchmark keys it also measures
 * (`Measurement`): end-to-end latency (now - ingest time) in an HDR
 * histogram after `warmup_secs`, and after `warmup_secs + stop_after_secs`
 * it prints the histogram and the throughput (or one JSON line with
 * `structured: true`) and stops the runtime. Unlike the original it stops
 * on a timer, so an idle pipeline stops too, and it divides by the measured
 * time. Without them it holds no timer and never asks to exit: the sink
 * that `duplicate` and `dropped` ports are linked to, to ack what they drop.
 */
export const blackhole: OfframpType<BlackholeConfig> = {
  name: 'blackhole',
  defaultCodec: 'json',
  placement: 'every-worker', // each worker measures its own share (docs/workers.md)
  autoAck: true,
  example: {},
  configSchema,
  // only a measuring blackhole (the benchmark keys) ends the run; a plain one (no config) only acks and discards
  stopsProcess: (config) =>
    config.stop_after_secs !== undefined && durationMs(config.stop_after_secs, 'stop_after_secs', STOP_AFTER) !== 0
      ? { field: 'config.stop_after_secs', what: 'a blackhole with stop_after_secs stops the process when it has measured' }
      : undefined,
  create(config, ctx) {
    // a plain blackhole discards what it is sent
    if (!measures(config)) return { send: () => undefined };
    const measurement = new Measurement(config, ctx);
    return {
      send: (payloads, event) => measurement.record(payloads, event),
      close: () => measurement.close(),
    };
  },
};

/**
 * The benchmark: latencies, events and bytes from the end of the warm-up
 * to the report, which ends the run.
 */
class Measurement {
  private readonly histogram: Histogram;
  /** per event only a bucket count; the histogram gets them all before it is read */
  private readonly latencies: BucketCounts;
  // all per-event arithmetic is on plain numbers (monoNs), no BigInt
  private readonly warmupEnd: number;
  private measuring: boolean;
  private measureStart: number;
  private events = 0;
  private bytes = 0;
  private done = false;
  // events read together share one ingest time: convert it once per run of them
  private lastIngest = -1n;
  private lastIngestMono = 0;
  private readonly warmupTimer: NodeJS.Timeout | undefined;
  private readonly stopTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly config: MeasureConfig,
    private readonly ctx: OfframpContext,
  ) {
    // what hdr.build({useWebAssembly: false}) makes: 32-bit buckets, resizing as values grow
    const JsHistogram = jsHistogramFactory().constructorFromBucketSize(32);
    this.histogram = new JsHistogram(1, 100_000_000_000, config.significant_figures);
    this.histogram.autoResize = true;
    this.latencies = new BucketCounts(this.histogram);
    const warmupMs = durationMs(config.warmup_secs, 'warmup_secs', WARMUP);
    const stopAfterMs = durationMs(config.stop_after_secs, 'stop_after_secs', STOP_AFTER);
    const started = monoNs();
    this.warmupEnd = started + warmupMs * 1e6;
    this.measuring = warmupMs === 0;
    this.measureStart = started;
    this.warmupTimer = this.measuring
      ? undefined
      : setTimeout(() => {
          this.measuring = true;
          this.measureStart = monoNs();
        }, warmupMs);
    this.stopTimer = stopAfterMs > 0 ? setTimeout(() => this.report(), warmupMs + stopAfterMs) : undefined;
  }

  record(payloads: readonly Buffer[], event: EddyEvent): void {
    if (!this.measuring || this.done) return;
    const now = monoNs();
    if (now < this.warmupEnd) return;
    this.events += this.config.count_field === undefined ? 1 : eventCount(event.data, this.config.count_field);
    for (const payload of payloads) this.bytes += payload.length;
    if (event.ingestNs !== this.lastIngest) {
      this.lastIngest = event.ingestNs;
      this.lastIngestMono = toMonoNs(this.lastIngest);
    }
    const latency = now - this.lastIngestMono;
    if (latency >= 1) this.latencies.record(latency < 100_000_000_000 ? latency : 100_000_000_000);
  }

  close(): void {
    clearTimeout(this.warmupTimer);
    clearTimeout(this.stopTimer);
  }

  private report(): void {
    this.done = true;
    const histogram = this.histogram;
    this.latencies.flushInto();
    const seconds = (monoNs() - this.measureStart) / 1e9;
    const summary: BlackholeReport = {
      events: this.events,
      bytes: this.bytes,
      seconds,
      events_per_second: this.events / seconds,
      megabytes_per_second: this.bytes / seconds / 1048576,
      latency_ns: {
        p50: histogram.getValueAtPercentile(50),
        p90: histogram.getValueAtPercentile(90),
        p99: histogram.getValueAtPercentile(99),
        p999: histogram.getValueAtPercentile(99.9),
        max: histogram.maxValue,
        mean: Math.round(histogram.mean),
      },
      peak_rss_bytes: process.resourceUsage().maxRSS * 1024,
    };
    const text = this.config.structured
      ? JSON.stringify(summary) + '\n'
      : `${histogram.outputPercentileDistribution()}\n\nThroughput: ${summary.events_per_second.toFixed(1)} events/s, ${summary.megabytes_per_second.toFixed(1)} MB/s\n`;
    process.stdout.write(text);
    // a worker (--workers N) also hands it to the primary, which prints the combined report
    this.ctx.publishMeasurement?.(summary, histogram);
    this.ctx.requestExit(0, `blackhole ${this.ctx.url} finished its measurement`);
  }
}

/**
 * The JavaScript histogram alone, loaded by the first measuring blackhole:
 * the package's index also loads its WebAssembly build and pako (~10 MB of
 * RSS), and a plain sink needs no histogram at all.
 */
function jsHistogramFactory(): typeof JsHistogramFactory {
  return require('hdr-histogram-js/dist/JsHistogramFactory') as typeof JsHistogramFactory; // eslint-disable-line @typescript-eslint/no-require-imports -- see above: only a measuring blackhole loads it
}

/** The number an event stands for under `count_field`: a non-negative integer in that data field, else an error (a benchmark must not count silently wrong). */
function eventCount(data: unknown, field: string): number {
  const n = data !== null && typeof data === 'object' && !Array.isArray(data) ? (data as Record<string, unknown>)[field] : undefined;
  if (typeof n === 'number' && Number.isInteger(n) && n >= 0) return n;
  if (typeof n === 'bigint' && n >= 0n) return Number(n);
  throw new Error(
    `blackhole count_field: data field ${JSON.stringify(field)} must be a non-negative integer, got ${n === undefined ? 'no such field' : JSON.stringify(typeof n === 'bigint' ? String(n) : n)}`,
  );
}
