import * as hdr from 'hdr-histogram-js';
import { monoNs, toMonoNs } from '../../core/clock';
import type { OfframpType } from '../connector';

interface BlackholeConfig {
  warmup_secs: number;
  stop_after_secs: number;
  significant_figures: number;
  structured: boolean;
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
 * blackhole (benchmarks): discards events, recording end-to-end latency
 * (now - ingest time) in an HDR histogram after `warmup_secs`. "Now" is the
 * end of the turn in which the event arrived (one clock reading per turn;
 * every event counted, none later than it was handled, so a latency is
 * never understated); events of one turn sharing an ingest time are one
 * histogram entry with their count. After
 * `warmup_secs + stop_after_secs` it prints the histogram and the throughput
 * (or one JSON line with `structured: true`) and stops the runtime. Unlike
 * the original it stops on a timer, so an idle pipeline stops too, and it
 * divides by the measured time.
 */
export const blackhole: OfframpType<BlackholeConfig> = {
  name: 'blackhole',
  defaultCodec: 'json',
  autoAck: true,
  example: { warmup_secs: 2, stop_after_secs: 10, significant_figures: 2 },
  configSchema: {
    type: 'object',
    additionalProperties: false,
    required: ['warmup_secs', 'stop_after_secs', 'significant_figures'],
    properties: {
      warmup_secs: { type: 'number', minimum: 0, description: 'seconds after start during which nothing is measured' },
      stop_after_secs: { type: 'number', minimum: 0, description: 'seconds of measurement, then report and stop; 0 never stops' },
      significant_figures: { type: 'integer', minimum: 1, maximum: 5, description: 'significant figures of the histogram' },
      structured: { type: 'boolean', default: false, description: 'print the report as one JSON line' },
    },
  },
  create(config, ctx) {
    const histogram = hdr.build({
      lowestDiscernibleValue: 1,
      highestTrackableValue: 100_000_000_000,
      numberOfSignificantValueDigits: config.significant_figures as 1 | 2 | 3 | 4 | 5,
      useWebAssembly: false,
    });
    // all per-event arithmetic is on plain numbers (monoNs), no BigInt
    const started = monoNs();
    const warmupEnd = started + config.warmup_secs * 1e9;
    let measuring = config.warmup_secs === 0;
    let measureStart = started;
    let events = 0;
    let bytes = 0;
    let done = false;
    // The events sent in one turn (a blaster chunk, a socket read) are recorded together at its end:
    // one clock reading per turn, and one histogram entry per run of events sharing an ingest time.
    const runIngest: bigint[] = [];
    const runCount: number[] = [];
    let runBytes = 0;
    let flushing = false;
    const flush = () => {
      flushing = false;
      const now = monoNs();
      const counted = measuring && !done && now >= warmupEnd;
      for (let i = 0; i < runIngest.length; i++) {
        if (!counted) break;
        events += runCount[i];
        const latency = now - toMonoNs(runIngest[i]);
        if (latency >= 1) histogram.recordValueWithCount(latency < 100_000_000_000 ? latency : 100_000_000_000, runCount[i]);
      }
      if (counted) bytes += runBytes;
      runIngest.length = 0;
      runCount.length = 0;
      runBytes = 0;
    };
    const warmupTimer = measuring
      ? undefined
      : setTimeout(() => {
          measuring = true;
          measureStart = monoNs();
        }, config.warmup_secs * 1000);
    const report = () => {
      done = true;
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
      ctx.requestExit(0, `blackhole ${ctx.url} finished its measurement`);
    };
    const stopTimer =
      config.stop_after_secs > 0 ? setTimeout(report, (config.warmup_secs + config.stop_after_secs) * 1000) : undefined;
    return {
      send(payloads, event) {
        if (!measuring || done) return;
        for (let i = 0; i < payloads.length; i++) runBytes += payloads[i].length;
        const last = runIngest.length - 1;
        if (last >= 0 && runIngest[last] === event.ingestNs) runCount[last]++;
        else {
          runIngest.push(event.ingestNs);
          runCount.push(1);
        }
        if (!flushing) {
          flushing = true;
          queueMicrotask(flush);
        }
      },
      close() {
        clearTimeout(warmupTimer);
        clearTimeout(stopTimer);
      },
    };
  },
};
