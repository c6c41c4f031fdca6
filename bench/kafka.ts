/**
 * The kafka rows: eddy's kafka -> passthrough -> kafka and kafka ->
 * window::aggregate -> kafka flows, beside the best hand relay measured
 * (bench/kafka-clients.ts's @platformatic/kafka relay, here with JSON.parse
 * and JSON.stringify per message), on the same broker in the same run,
 * the relay measured before and after eddy.
 *
 *   scripts/services start kafka && npx tsc -p . && node dist/bench/kafka.js
 *   node dist/bench/run.js kafka kafka-window     # the same, as rows of the runner
 *
 * - Input: one fresh topic of BENCH_KAFKA_PARTITIONS (4) partitions, filled
 *   once with BENCH_KAFKA_EVENTS JSON messages of ~100 bytes (default
 *   250,000 x BENCH_SECS, BENCH_SECS 10: ten seconds of eddy at the 250k
 *   events/s the flow is asked to reach). Every side reads all of it in a
 *   consumer group of its own from the start, with commit on ack, and
 *   writes to a fresh output topic (deleted once measured).
 * - Sides, in this order: raw (the relay), eddy's flows in
 *   BENCH_KAFKA_FLOWS order (default "passthrough,window"; give
 *   "window,passthrough" to alternate), raw again. The faster raw run is
 *   the baseline of both eddy rows.
 * - events/s: this process polls the side's group every 50 ms, from the
 *   moment it is stable with all the input's partitions assigned (start-up
 *   and the join are outside) to the commit covering the whole input
 *   (commit on ack: a commit follows the output's acknowledgement).
 *   CPU-s per million: the CPU time of the side's process over the same
 *   span, from /proc.
 * - Latency (raw and passthrough): the side keeps running; at half the
 *   events/s it reached (BENCH_KAFKA_RATE overrides) messages are produced
 *   for BENCH_KAFKA_PACED_SECS (5) into a second input topic the side also
 *   reads, each carrying the time it was sent; a consumer here reads the
 *   output and takes arrival minus sent: p50, p99 (one clock). The window
 *   row has no such latency (its output is per key and second).
 * - Soak (eddy's passthrough): the paced run goes on for
 *   BENCH_KAFKA_SOAK_SECS (60; 0 skips it) more; the eddy process's RSS is
 *   read every second: min, max, last. Peak RSS (VmHWM) of every side at
 *   its end.
 *
 * Prints a table (with the load average at each side); `main()` returns
 * the rows for bench/run.ts. BENCH_JSON writes them to a file. The broker:
 * EDDY_KAFKA_HOST / EDDY_KAFKA_PORT (default 127.0.0.1:9092). Topics and
 * groups are `kbench-<pid>-<time>-...`, deleted at the end.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Consumer, Producer, type Message } from '@platformatic/kafka';
import { cpuSeconds } from './child';
import { envNumber } from './data';
import { startRelay, eddyKafkaClient } from './kafka-clients';
import { FLOWS, KafkaBench, brokerAddress, message, nowMs, peakRssBytes, rssBytes, sleep, startEddy, type Flow, type Running } from './kafka-common';

/** The events/s eddy's kafka flow is asked to reach (issue 34): the input is sized for ten seconds of it. */
const TARGET_RATE = 250_000;

export interface SideResult {
  /** raw (before), eddy passthrough, eddy window, raw (after) */
  side: string;
  events: number;
  seconds: number;
  events_per_second: number;
  cpu_s_per_million?: number;
  /** messages in the output when the input was all committed (passthrough: = events) */
  output: number;
  /** the paced run: offered and reached events/s, and latency over its first BENCH_KAFKA_PACED_SECS */
  paced?: { rate: number; reached: number; samples: number; p50_ms: number; p99_ms: number };
  /** RSS of the side's process over the soak, sampled every second */
  soak?: { seconds: number; min_bytes: number; max_bytes: number; last_bytes: number };
  peak_rss_bytes?: number;
  load_average: number;
}

export interface FlowResult {
  eddy: SideResult;
  /** eddy events/s over the faster raw run's */
  ratio: number;
  /** eddy's events per CPU-second over the raw run's (the better one) */
  cpu_ratio?: number;
}

export interface KafkaBenchResult {
  events: number;
  partitions: number;
  eddy_client: string;
  raw: SideResult[];
  passthrough?: FlowResult;
  window?: FlowResult;
  /** the window exactly once, commit_interval 100 ms and 1 s: `ratio` is over the at-least-once window row's events/s */
  'window-eos'?: FlowResult;
  'window-eos-1s'?: FlowResult;
  load_average: number;
}

interface Settings {
  total: number;
  partitions: number;
  pacedSecs: number;
  soakSecs: number;
  rate?: number;
}

/**
 * From the moment the side's group is stable with every input partition
 * assigned (its fetches start then) to the poll that sees its commits
 * cover `total`: events/s, and the CPU its processes used meanwhile. Not
 * from the first commit: a side may commit its first offsets late, and
 * commits the output drives (the window row) come a window late.
 */
async function drain(
  bench: KafkaBench,
  group: string,
  input: string,
  total: number,
  side: Running,
): Promise<{ events: number; seconds: number; cpu?: number }> {
  const cpu = () => side.children.reduce((sum, c) => sum + (cpuSeconds(c.pid) ?? NaN), 0);
  // bounded: 1/25 of the target rate, and at least 10 minutes (the window row commits a window's events at a time)
  const deadline = Date.now() + Math.max(600_000, (total / TARGET_RATE) * 25_000);
  let start: { t: number; cpu: number } | undefined;
  for (;;) {
    if (side.children.some((c) => c.exitCode !== null)) throw new Error(`${group}: a process of the side exited`);
    if (Date.now() > deadline) throw new Error(`${group}: not all ${total} committed in time`);
    if (!start) {
      const held = await bench.members(group, input);
      if (held.reduce((a, b) => a + b, 0) === bench.partitions) start = { t: performance.now(), cpu: cpu() };
    } else if ((await bench.committed(group, input)) >= total) {
      const t = performance.now();
      const used = cpu() - start.cpu;
      return { events: total, seconds: (t - start.t) / 1000, cpu: Number.isFinite(used) ? used : undefined };
    }
    await sleep(50);
  }
}

/**
 * Messages at `rate` per second into `paced` (which the side reads) for
 * `secs` seconds, their arrival in `output` timed here; RSS of the side's
 * first process every second. Latency counts the first `latencySecs`.
 */
async function pacedRun(
  bench: KafkaBench,
  paced: string,
  output: string,
  rate: number,
  secs: number,
  latencySecs: number,
  side: Running,
): Promise<{ reached: number; samples: number[]; rss: number[] }> {
  const reader = new Consumer({ clientId: 'kbench-latency', bootstrapBrokers: [bench.broker], groupId: bench.group('latency') });
  const producer = new Producer({ clientId: 'kbench-paced', bootstrapBrokers: [bench.broker], autocreateTopics: false });
  const samples: number[] = [];
  const first = 1e12; // seqs of paced messages: apart from the input's
  let latencyUntil = Infinity;
  let arrived = 0;
  const rss: number[] = [];
  try {
    const stream = await reader.consume({ topics: [output], mode: 'latest', autocommit: false, maxWaitTime: 10 });
    stream.on('data', (m: Message) => {
      const t = nowMs();
      // the head of the line is {"seq":N,"ts":T,... in both the relay's and eddy's output: read it without parsing the rest
      const head = /^\{"seq":(\d+),"ts":([\d.]+)/.exec(m.value.toString('latin1', 0, 64));
      if (!head || Number(head[1]) < first) return;
      arrived++;
      const sent = Number(head[2]);
      if (sent < latencyUntil) samples.push(t - sent);
    });
    // the reader starts at the end of the output: give its first fetch a moment, so no paced message precedes it
    await sleep(1000);
    const perTick = Math.max(1, Math.round(rate / 100)); // 100 sends a second
    const total = Math.round(rate * secs);
    const t0 = performance.now();
    latencyUntil = nowMs() + latencySecs * 1000;
    const sends: Promise<unknown>[] = [];
    let nextRss = t0;
    for (let sent = 0, tick = 0; sent < total; tick++) {
      const due = t0 + tick * 10;
      if (performance.now() < due) await sleep(due - performance.now());
      if (performance.now() >= nextRss) {
        rss.push(side.children.reduce((sum, c) => sum + (rssBytes(c.pid) ?? 0), 0));
        nextRss += 1000;
      }
      const messages = [];
      const ts = nowMs();
      for (let i = 0; i < perTick && sent < total; i++, sent++)
        messages.push({ topic: paced, partition: sent % bench.partitions, value: message(first + sent, ts) });
      // not awaited: a slow answer must not hold the pace (a late tick sends at once)
      sends.push(producer.send({ messages }));
    }
    await Promise.all(sends);
    const reached = total / ((performance.now() - t0) / 1000);
    const deadline = Date.now() + 30000;
    while (arrived < total && Date.now() < deadline) await sleep(50);
    if (arrived < total) throw new Error(`paced: ${arrived} of ${total} messages came through in 30 s`);
    return { reached, samples, rss };
  } finally {
    await producer.close();
    await reader.close(true);
  }
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))];
}

async function measure(
  bench: KafkaBench,
  s: Settings,
  input: string,
  name: string,
  start: (group: string, topics: string[], output: string) => Running,
  opts: { latency: boolean; soak: boolean },
): Promise<SideResult> {
  const load = loadavg()[0];
  const output = await bench.topic(`${name}-out`);
  const paced = await bench.topic(`${name}-paced`);
  const group = bench.group(name);
  const side = start(group, [input, paced], output);
  process.stderr.write(`${name}: load average ${load.toFixed(1)}\n`);
  try {
    const d = await drain(bench, group, input, s.total, side);
    const result: SideResult = {
      side: name,
      events: d.events,
      seconds: d.seconds,
      events_per_second: d.events / d.seconds,
      cpu_s_per_million: d.cpu === undefined ? undefined : (d.cpu / d.events) * 1e6,
      output: await bench.endOffsets(output),
      load_average: load,
    };
    process.stderr.write(`${name}: ${Math.round(result.events_per_second)} events/s, ${result.cpu_s_per_million?.toFixed(1) ?? '-'} CPU-s per million\n`);
    if (opts.latency) {
      const rate = s.rate ?? Math.round(result.events_per_second / 2);
      const secs = s.pacedSecs + (opts.soak ? s.soakSecs : 0);
      const p = await pacedRun(bench, paced, output, rate, secs, s.pacedSecs, side);
      const sorted = p.samples.sort((a, b) => a - b);
      result.paced = { rate, reached: p.reached, samples: sorted.length, p50_ms: percentile(sorted, 0.5), p99_ms: percentile(sorted, 0.99) };
      // the soak's samples: those after the latency part
      const soak = opts.soak && s.soakSecs > 0 ? p.rss.slice(Math.floor(s.pacedSecs)) : [];
      if (soak.length > 0)
        result.soak = { seconds: soak.length, min_bytes: Math.min(...soak), max_bytes: Math.max(...soak), last_bytes: soak[soak.length - 1] };
      // where in the soak the maximum falls (right after the full-speed phase, or later) is read off this line
      if (soak.length > 0) process.stderr.write(`${name}: soak RSS MB, one a second: ${soak.map((b) => Math.round(b / 2 ** 20)).join(' ')}\n`);
      process.stderr.write(`${name}: paced ${rate} events/s (reached ${Math.round(p.reached)}), p99 ${result.paced.p99_ms.toFixed(1)} ms\n`);
    }
    result.peak_rss_bytes = side.children.reduce((max, c) => Math.max(max, peakRssBytes(c.pid) ?? 0), 0) || undefined;
    return result;
  } finally {
    await side.stop();
    await bench.drop(output);
    await bench.drop(paced);
  }
}

function flowResult(eddy: SideResult, raws: SideResult[]): FlowResult {
  const best = Math.max(...raws.map((r) => r.events_per_second));
  const rawCpu = raws.map((r) => r.cpu_s_per_million).filter((x): x is number => x !== undefined);
  return {
    eddy,
    ratio: eddy.events_per_second / best,
    cpu_ratio: eddy.cpu_s_per_million !== undefined && rawCpu.length > 0 ? Math.min(...rawCpu) / eddy.cpu_s_per_million : undefined,
  };
}

export async function main(flowsWanted?: Flow[]): Promise<KafkaBenchResult> {
  const broker = brokerAddress();
  const secs = envNumber('BENCH_SECS', 10, 1);
  const s: Settings = {
    total: Math.round(envNumber('BENCH_KAFKA_EVENTS', TARGET_RATE * secs, 1000)),
    partitions: Math.round(envNumber('BENCH_KAFKA_PARTITIONS', 4, 1)),
    pacedSecs: envNumber('BENCH_KAFKA_PACED_SECS', 5, 1),
    soakSecs: envNumber('BENCH_KAFKA_SOAK_SECS', 60, 0),
    rate: process.env.BENCH_KAFKA_RATE ? envNumber('BENCH_KAFKA_RATE', 0, 1) : undefined,
  };
  const flows = (flowsWanted ?? (process.env.BENCH_KAFKA_FLOWS ?? 'passthrough,window').split(',')).filter((f): f is Flow =>
    (FLOWS as readonly string[]).includes(f),
  );
  const load = loadavg()[0];
  const client = eddyKafkaClient();
  process.stderr.write(
    `kafka: ${s.total} events, ${s.partitions} partitions, commit on ack, eddy on ${client}, flows ${flows.join(', ')}, broker ${broker}\n` +
      `node ${process.version}, ${cpus().length} CPUs, load average ${load.toFixed(1)}\n`,
  );
  const bench = new KafkaBench(broker, s.partitions, `kbench-${process.pid}-${Date.now().toString(36)}`);
  const dir = mkdtempSync(join(tmpdir(), 'eddy-kafka-bench-'));
  try {
    const input = await bench.topic('in');
    const t0 = performance.now();
    await bench.fill(input, s.total);
    process.stderr.write(`filled ${input} in ${((performance.now() - t0) / 1000).toFixed(1)} s\n`);
    // BENCH_KAFKA_RAW=bytes: the relay passes each value untouched (as bench/kafka-clients.ts measures it), to see what the JSON work costs
    const json = process.env.BENCH_KAFKA_RAW !== 'bytes';
    const relay = (group: string, topics: string[], output: string) => startRelay('platformatic', broker, group, topics, output, { json });
    const raws = [await measure(bench, s, input, 'raw', relay, { latency: true, soak: false })];
    const result: KafkaBenchResult = { events: s.total, partitions: s.partitions, eddy_client: client, raw: raws, load_average: load };
    const eddySides: [Flow, SideResult][] = [];
    for (const flow of flows) {
      const eddy = (group: string, topics: string[], output: string) => startEddy(dir, 1, broker, group, topics, output, flow);
      const passthrough = flow === 'passthrough';
      eddySides.push([flow, await measure(bench, s, input, `eddy-${flow}`, eddy, { latency: passthrough, soak: passthrough })]);
    }
    raws.push(await measure(bench, s, input, 'raw-after', relay, { latency: true, soak: false }));
    for (const [flow, side] of eddySides) result[flow] = flowResult(side, raws);
    // exactly once beside at least once of the same shape, in the same run (issue 35: >= 0.5x its events/s)
    const atLeastOnce = eddySides.find(([flow]) => flow === 'window')?.[1];
    for (const [flow, side] of eddySides) {
      if (flow.startsWith('window-eos') && atLeastOnce) result[flow] = { eddy: side, ratio: side.events_per_second / atLeastOnce.events_per_second };
    }
    process.stdout.write(table(result) + '\n');
    if (process.env.BENCH_JSON) writeFileSync(process.env.BENCH_JSON, JSON.stringify(result, null, 2) + '\n');
    return result;
  } finally {
    await bench.cleanup();
    rmSync(dir, { recursive: true, force: true });
  }
}

export function table(r: KafkaBenchResult): string {
  const mb = (b: number | undefined) => (b === undefined ? '-' : `${Math.round(b / 1048576)}`);
  const head = ['side', 'events/s', 'CPU-s/M', 'paced ev/s', 'p50 ms', 'p99 ms', 'peak RSS MB', 'soak RSS MB min/max/last', 'load'];
  const row = (s: SideResult) => [
    s.side,
    Math.round(s.events_per_second).toLocaleString('en-US'),
    s.cpu_s_per_million?.toFixed(2) ?? '-',
    s.paced ? `${s.paced.rate.toLocaleString('en-US')} (${Math.round(s.paced.reached).toLocaleString('en-US')})` : '-',
    s.paced ? s.paced.p50_ms.toFixed(1) : '-',
    s.paced ? s.paced.p99_ms.toFixed(1) : '-',
    mb(s.peak_rss_bytes),
    s.soak ? `${mb(s.soak.min_bytes)}/${mb(s.soak.max_bytes)}/${mb(s.soak.last_bytes)} (${s.soak.seconds} s)` : '-',
    s.load_average.toFixed(1),
  ];
  const sides = [r.raw[0], ...FLOWS.flatMap((f) => (r[f] ? [r[f].eddy] : [])), ...r.raw.slice(1)];
  const body = [head, ...sides.map(row)];
  const widths = head.map((_, i) => Math.max(...body.map((b) => b[i].length)));
  const lines = body.map((b) => b.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  '));
  for (const f of FLOWS) {
    const x = r[f];
    if (!x) continue;
    if (f.startsWith('window-eos')) lines.push(`eddy ${f}/window (exactly once over at least once): ${x.ratio.toFixed(2)} (events/s)`);
    else lines.push(`eddy ${f}/raw: ${x.ratio.toFixed(2)} (events/s), ${x.cpu_ratio?.toFixed(2) ?? '-'} (events per CPU-second)`);
  }
  lines.push(
    `${r.events.toLocaleString('en-US')} events of ~100 bytes, ${r.partitions} partitions, commit on ack; raw: @platformatic/kafka relay with JSON.parse/stringify (bench/kafka-clients.ts), the faster run counts; eddy on ${r.eddy_client}`,
  );
  return lines.join('\n');
}

if (require.main === module) {
  main().then(
    () => process.exit(0),
    (err: unknown) => {
      process.stderr.write(`kafka bench: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      process.exit(1);
    },
  );
}
