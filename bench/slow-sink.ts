/**
 * Slow-sink demonstration: a blaster at full speed into a sink that takes
 * `delay_ms` per event (an async send, `concurrency` at a time). The
 * offramp's in-flight limit triggers the circuit breaker, which stops the
 * blaster between events, so memory stays flat instead of an unbounded queue
 * growing. Every event read must be delivered exactly once: the sink marks
 * each event id it sees, and after shutdown (which drains what is in flight)
 * the marks must cover every id the onramp minted, once each.
 *
 * Runs one runtime in-process through the embedding API, with the sink
 * registered as a custom offramp type. `node dist/bench/slow-sink.js`
 * prints one JSON line; bench/run.ts runs it as the `slow-sink` row.
 * Environment: BENCH_SLOW_SECS (8), BENCH_SLOW_DELAY_MS (5),
 * BENCH_SLOW_CONCURRENCY (64), BENCH_DATA.
 */
import * as hdr from 'hdr-histogram-js';
import { Registries, Runtime, type EddyEvent, type OfframpType } from '../src/index';
import { createLogger } from '../src/core/logger';
import { nowNs } from '../src/core/clock';
import { dataPath } from './data';

export interface SlowSinkReport {
  seconds: number;
  delay_ms: number;
  concurrency: number;
  /** events the onramp read (minted ids) */
  read: number;
  /** events the sink completed */
  delivered: number;
  exactly_once: boolean;
  problems: string[];
  events_per_second: number;
  megabytes_per_second: number;
  /** ingest to send completed, so it includes the sink's delay */
  latency_ns: { p50: number; p99: number; p999: number; max: number };
  max_in_flight: number;
  triggers: number;
  peak_rss_bytes: number;
  rss_first_bytes: number;
  rss_last_bytes: number;
}

interface SlowConfig {
  delay_ms: number;
  concurrency: number;
}

/** What the sink saw, shared with the script. */
class Deliveries {
  /** how many times each sequence number arrived (index = seq) */
  seen = new Uint8Array(1 << 20);
  uid = -1;
  foreign = 0;
  delivered = 0;
  bytes = 0;
  inFlight = 0;
  maxInFlight = 0;
  readonly histogram = hdr.build({
    lowestDiscernibleValue: 1,
    highestTrackableValue: 100_000_000_000,
    numberOfSignificantValueDigits: 2,
    useWebAssembly: false,
  });

  mark(event: EddyEvent): void {
    if (this.uid === -1) this.uid = event.id.uid;
    if (event.id.uid !== this.uid) {
      this.foreign++;
      return;
    }
    const seq = event.id.seq;
    while (seq >= this.seen.length) {
      const bigger = new Uint8Array(this.seen.length * 2);
      bigger.set(this.seen);
      this.seen = bigger;
    }
    if (this.seen[seq] < 255) this.seen[seq]++;
  }
}

function slowSinkType(d: Deliveries): OfframpType<SlowConfig> {
  return {
    name: 'bench::slow',
    defaultCodec: 'json',
    autoAck: true,
    configSchema: {
      type: 'object',
      additionalProperties: false,
      required: ['delay_ms', 'concurrency'],
      properties: {
        delay_ms: { type: 'number', minimum: 0, description: 'milliseconds each send takes' },
        concurrency: { type: 'integer', minimum: 1, description: 'sends in flight before the circuit breaker triggers' },
      },
    },
    create(config) {
      return {
        send(payloads, event) {
          d.inFlight++;
          if (d.inFlight > d.maxInFlight) d.maxInFlight = d.inFlight;
          return new Promise<void>((resolve) =>
            setTimeout(() => {
              d.inFlight--;
              d.delivered++;
              for (const p of payloads) d.bytes += p.length;
              d.mark(event);
              const latency = Number(nowNs() - event.ingestNs);
              if (latency >= 1) d.histogram.recordValue(Math.min(latency, 100_000_000_000));
              resolve();
            }, config.delay_ms),
          );
        },
      };
    },
  };
}

export async function slowSink(secs: number, delayMs: number, concurrency: number, data: string): Promise<SlowSinkReport> {
  const d = new Deliveries();
  const registries = Registries.withBuiltins();
  registries.offramps.register('bench::slow', slowSinkType(d));
  const runtime = await new Runtime({ registries, logger: createLogger(process.env.EDDY_LOG ?? 'warn') }).start();
  runtime.publish('onramp', { id: 'blaster', type: 'blaster', codec: 'json', config: { source: data } });
  runtime.publish('offramp', { id: 'slow', type: 'bench::slow', codec: 'json', config: { delay_ms: delayMs, concurrency } });
  runtime.publish('binding', {
    id: 'bench',
    links: {
      '/onramp/blaster/{instance}/out': ['/pipeline/system::passthrough/{instance}/in'],
      '/pipeline/system::passthrough/{instance}/out': ['/offramp/slow/{instance}/in'],
    },
  });
  await runtime.activate('binding', 'bench', 'main');
  const onramp = runtime.onramp('/onramp/blaster/main')!;
  let triggers = 0;
  const gate = onramp.runtime.breaker.changes.subscribe((open) => {
    if (!open) triggers++;
  });
  const rss: number[] = [];
  const sampler = setInterval(() => rss.push(process.memoryUsage.rss()), 250);
  const started = performance.now();
  await new Promise((r) => setTimeout(r, secs * 1000));
  const seconds = (performance.now() - started) / 1000;
  const deliveredInTime = d.delivered;
  const bytesInTime = d.bytes;
  await runtime.shutdown(); // stops the blaster, then waits for what is in flight
  clearInterval(sampler);
  gate.unsubscribe();

  const read = onramp.runtime.counters.out;
  const problems: string[] = [];
  if (d.foreign > 0) problems.push(`${d.foreign} events with an unknown id`);
  let missing = 0;
  let duplicated = 0;
  for (let seq = 1; seq <= read; seq++) {
    if (seq >= d.seen.length || d.seen[seq] === 0) missing++;
    else if (d.seen[seq] > 1) duplicated++;
  }
  for (let seq = read + 1; seq < d.seen.length; seq++) if (d.seen[seq] !== 0) duplicated++;
  if (missing > 0) problems.push(`${missing} events read but never delivered`);
  if (duplicated > 0) problems.push(`${duplicated} events delivered more than once (or never read)`);
  if (d.delivered !== read) problems.push(`delivered ${d.delivered} != read ${read}`);
  return {
    seconds,
    delay_ms: delayMs,
    concurrency,
    read,
    delivered: d.delivered,
    exactly_once: problems.length === 0,
    problems,
    events_per_second: deliveredInTime / seconds,
    megabytes_per_second: bytesInTime / seconds / 1048576,
    latency_ns: {
      p50: d.histogram.getValueAtPercentile(50),
      p99: d.histogram.getValueAtPercentile(99),
      p999: d.histogram.getValueAtPercentile(99.9),
      max: d.histogram.maxValue,
    },
    max_in_flight: d.maxInFlight,
    triggers,
    peak_rss_bytes: process.resourceUsage().maxRSS * 1024,
    rss_first_bytes: rss[Math.min(rss.length - 1, 4)] ?? 0,
    rss_last_bytes: rss[rss.length - 1] ?? 0,
  };
}

if (require.main === module) {
  const num = (name: string, fallback: number) => (process.env[name] ? Number(process.env[name]) : fallback);
  slowSink(num('BENCH_SLOW_SECS', 8), num('BENCH_SLOW_DELAY_MS', 5), num('BENCH_SLOW_CONCURRENCY', 64), dataPath()).then(
    (r) => {
      process.stdout.write(JSON.stringify(r) + '\n');
      process.exit(0); // the runner reads exactly_once
    },
    (err: unknown) => {
      process.stderr.write(`slow-sink failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      process.exit(1);
    },
  );
}
