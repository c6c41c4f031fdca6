// the JavaScript histogram alone: the package's index also loads its WebAssembly build and pako (~10 MB of RSS)
import { constructorFromBucketSize } from 'hdr-histogram-js/dist/JsHistogramFactory';
import { monoNs, toMonoNs } from '../../core/clock';
import type { OfframpType } from '../connector';
import { BucketCounts } from './bucket-counts';
import { s } from '../../schema/typed';
import type { Static } from '../../schema/typed';

const configSchema = s.object(
  {
    warmup_secs: s.number({ minimum: 0, description: 'seconds after start during which nothing is measured' }),
    stop_after_secs: s.number({ minimum: 0, description: 'seconds of measurement, then report and stop; 0 never stops' }),
    significant_figures: s.integer({ minimum: 1, maximum: 5, description: 'significant figures of the histogram' }),
    structured: s.boolean({ default: false, description: 'print the report as one JSON line' }),
    count_field: s.string({
      minLength: 1,
      description: "each event counts as the number in this top-level data field (a window's count()), so events/s are the input events the outputs stand for",
    }),
  },
  { required: ['warmup_secs', 'stop_after_secs', 'significant_figures'] },
);

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
 * blackhole (benchmarks): discards events, recording end-to-end latency
 * (now - ingest time) in an HDR histogram after `warmup_secs`. After
 * `warmup_secs + stop_after_secs` it prints the histogram and the throughput
 * (or one JSON line with `structured: true`) and stops the runtime. Unlike
 * the original it stops on a timer, so an idle pipeline stops too, and it
 * divides by the measured time.
 */
export const blackhole: OfframpType<Static<typeof configSchema>> = {
  name: 'blackhole',
  defaultCodec: 'json',
  placement: 'every-worker', // each worker measures its own share (docs/workers.md)
  autoAck: true,
  example: { warmup_secs: 2, stop_after_secs: 10, significant_figures: 2 },
  configSchema,
  create(config, ctx) {
    // what hdr.build({useWebAssembly: false}) makes: 32-bit buckets, resizing as values grow
    const JsHistogram = constructorFromBucketSize(32);
    const histogram = new JsHistogram(1, 100_000_000_000, config.significant_figures);
    histogram.autoResize = true;
    // per event only a bucket count; the histogram gets them all before it is read
    const latencies = new BucketCounts(histogram);
    // all per-event arithmetic is on plain numbers (monoNs), no BigInt
    const started = monoNs();
    const warmupEnd = started + config.warmup_secs * 1e9;
    let measuring = config.warmup_secs === 0;
    let measureStart = started;
    let events = 0;
    let bytes = 0;
    const countField = config.count_field;
    let done = false;
    // events read together share one ingest time: convert it once per run of them
    let lastIngest = -1n;
    let lastIngestMono = 0;
    const warmupTimer = measuring
      ? undefined
      : setTimeout(() => {
          measuring = true;
          measureStart = monoNs();
        }, config.warmup_secs * 1000);
    const report = () => {
      done = true;
      latencies.flushInto();
      const seconds = (monoNs() - measureStart) / 1e9;
      const summary: BlackholeReport = {
        events,
        bytes,
        seconds,
        events_per_second: events / seconds,
        megabytes_per_second: bytes / seconds / 1048576,
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
      const text = config.structured
        ? JSON.stringify(summary) + '\n'
        : `${histogram.outputPercentileDistribution()}\n\nThroughput: ${summary.events_per_second.toFixed(1)} events/s, ${summary.megabytes_per_second.toFixed(1)} MB/s\n`;
      process.stdout.write(text);
      // a worker (--workers N) also hands it to the primary, which prints the combined report
      ctx.publishMeasurement?.(summary, histogram);
      ctx.requestExit(0, `blackhole ${ctx.url} finished its measurement`);
    };
    const stopTimer = config.stop_after_secs > 0 ? setTimeout(report, (config.warmup_secs + config.stop_after_secs) * 1000) : undefined;
    return {
      send(payloads, event) {
        if (!measuring || done) return;
        const now = monoNs();
        if (now < warmupEnd) return;
        events += countField === undefined ? 1 : eventCount(event.data, countField);
        for (let i = 0; i < payloads.length; i++) bytes += payloads[i].length;
        if (event.ingestNs !== lastIngest) {
          lastIngest = event.ingestNs;
          lastIngestMono = toMonoNs(lastIngest);
        }
        const latency = now - lastIngestMono;
        if (latency >= 1) latencies.record(latency < 100_000_000_000 ? latency : 100_000_000_000);
      },
      close() {
        clearTimeout(warmupTimer);
        clearTimeout(stopTimer);
      },
    };
  },
};

/** The number an event stands for under `count_field`: a non-negative integer in that data field, else an error (a benchmark must not count silently wrong). */
function eventCount(data: unknown, field: string): number {
  const n = data !== null && typeof data === 'object' && !Array.isArray(data) ? (data as Record<string, unknown>)[field] : undefined;
  if (typeof n === 'number' && Number.isInteger(n) && n >= 0) return n;
  if (typeof n === 'bigint' && n >= 0n) return Number(n);
  throw new Error(
    `blackhole count_field: data field ${JSON.stringify(field)} must be a non-negative integer, got ${n === undefined ? 'no such field' : JSON.stringify(typeof n === 'bigint' ? String(n) : n)}`,
  );
}
