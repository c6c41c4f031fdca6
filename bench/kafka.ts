/**
 * Kafka relay: kafka onramp -> system::passthrough -> kafka offramp, beside
 * a raw kafkajs loop doing the same unavoidable work, on the same broker in
 * the same run.
 *
 *   scripts/services start kafka && npx tsc -p . && node dist/bench/kafka.js
 *
 * - Input: one topic with BENCH_KAFKA_PARTITIONS (4) partitions, filled
 *   once with BENCH_KAFKA_EVENTS (50,000) JSON lines (bench/data/tcp-lines.json
 *   in a loop, ~630 bytes each). Every side reads all of it in a consumer
 *   group of its own, from the beginning, and writes each event to an output
 *   topic of its own (same partition count).
 * - raw: a child process with a kafkajs consumer whose `eachBatch` parses and
 *   re-serialises each value (JSON.parse, JSON.stringify) and produces the
 *   batch as one request, awaited; offsets are committed after each batch,
 *   so after the write (at least once, like eddy's commit on ack).
 * - eddy: `node bin/eddy server run -f <tmp.yaml> --no-api`, the kafka
 *   onramp with `enable.auto.commit: false` (commit on ack; BENCH_KAFKA_COMMIT=auto
 *   for the default) -> passthrough -> the kafka offramp; then two eddy
 *   processes with that config in one group, sharing the partitions
 *   (BENCH_KAFKA_PROCESSES, default "1,2"; "1" leaves the second out).
 * - Throughput: this process polls the output topic's end offsets every
 *   50 ms and divides the events between 10 % and 90 % of the total by the
 *   time between them (start-up and group join are outside the window).
 *   The CPU time the side's process(es) used in that window comes from /proc.
 * - Latency: then, with the side still running, BENCH_KAFKA_RATE (2,000)
 *   events/s for BENCH_KAFKA_PACED_SECS (3) s are produced into a second
 *   input topic the side also reads, each carrying the time it was sent; a
 *   consumer here reads the output and takes arrival minus sent: p50, p99
 *   (both ends in this process, one clock).
 * - Peak RSS: VmHWM of the eddy process (the raw child reports its own).
 *
 * Prints a table; `main()` returns { eddy, raw, ratio, cpu_ratio,
 * load_average } like bench/tcp-ingest.ts. BENCH_JSON writes it to a file.
 * The broker: EDDY_KAFKA_HOST / EDDY_KAFKA_PORT (default 127.0.0.1:9092).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kafka, Partitioners, logLevel, type Admin, type Consumer, type Producer } from 'kafkajs';
import { cpuSeconds } from './child';
import { REPO, envNumber } from './data';

const LINES_FILE = join(REPO, 'bench', 'data', 'tcp-lines.json');

export interface SideResult {
  events: number;
  seconds: number;
  events_per_second: number;
  /** CPU seconds (user + system) its process(es) used in the measured window */
  cpu_seconds?: number;
  p50_ns?: number;
  p99_ns?: number;
  peak_rss_bytes?: number;
}

export interface KafkaBenchResult {
  events: number;
  partitions: number;
  commit: 'ack' | 'auto';
  eddy: SideResult;
  raw: SideResult;
  /** two eddy processes in one group, when BENCH_KAFKA_PROCESSES names 2 */
  eddy_2?: SideResult;
  /** eddy events/s over raw events/s */
  ratio: number;
  /** eddy events per CPU-second over raw events per CPU-second */
  cpu_ratio?: number;
  load_average: number;
}

const now = () => performance.timeOrigin + performance.now();
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

// ---------------------------------------------------------------- raw loop (child process)

async function rawLoop(broker: string, group: string, topics: string[], output: string): Promise<void> {
  const kafka = new Kafka({ brokers: [broker], clientId: 'bench-raw', logLevel: logLevel.NOTHING });
  const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
  const consumer = kafka.consumer({ groupId: group, maxWaitTimeInMs: 100 });
  await producer.connect();
  await consumer.connect();
  await consumer.subscribe({ topics, fromBeginning: true });
  await consumer.run({
    eachBatch: async ({ batch }) => {
      const messages = batch.messages.map((m) => ({ value: Buffer.from(JSON.stringify(JSON.parse(m.value!.toString('utf8'))), 'utf8') }));
      await producer.send({ topic: output, messages });
    },
  });
  // runs until the parent says stop (SIGTERM), then reports its peak RSS
  await new Promise<void>((resolve) => process.once('SIGTERM', () => resolve()));
  await consumer.disconnect();
  await producer.disconnect();
  process.stdout.write(JSON.stringify({ peak_rss_bytes: process.resourceUsage().maxRSS * 1024 }) + '\n');
}

// ---------------------------------------------------------------- the parent

export interface Running {
  children: ChildProcess[];
  stop(): Promise<{ peakRss?: number }>;
}

function spawnNode(args: string[]): { child: ChildProcess; out: () => string; exited: Promise<void> } {
  const child = spawn(process.execPath, args, {
    cwd: REPO,
    env: { ...process.env, EDDY_LOG: process.env.EDDY_LOG ?? 'warn' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
  const exited = new Promise<void>((r) => child.once('close', () => r()));
  return { child, out: () => out, exited };
}

function vmHwm(pid: number | undefined): number | undefined {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

function startRaw(broker: string, group: string, topics: string[], output: string): Running {
  const p = spawnNode([__filename, 'raw', broker, group, output, ...topics]);
  return {
    children: [p.child],
    async stop() {
      p.child.kill('SIGTERM');
      await p.exited;
      const line = p
        .out()
        .split('\n')
        .find((l) => l.startsWith('{'));
      return { peakRss: line ? (JSON.parse(line) as { peak_rss_bytes: number }).peak_rss_bytes : undefined };
    },
  };
}

function eddyConfig(broker: string, group: string, topics: string[], output: string, commit: 'ack' | 'auto'): string {
  return `onramp:
  - id: in
    type: kafka
    config:
      group_id: ${group}
      topics: [${topics.join(', ')}]
      brokers: ["${broker}"]
      rdkafka_options: { enable.auto.commit: "${commit === 'auto'}", auto.offset.reset: earliest }
offramp:
  - id: out
    type: kafka
    config: { topic: ${output}, brokers: ["${broker}"] }
binding:
  - id: relay
    links:
      "/onramp/in/{instance}/out": ["/pipeline/system::passthrough/{instance}/in"]
      "/pipeline/system::passthrough/{instance}/out": ["/offramp/out/{instance}/in"]
mapping:
  /binding/relay/main: { instance: main }
`;
}

export function startEddy(dir: string, processes: number, broker: string, group: string, topics: string[], output: string, commit: 'ack' | 'auto'): Running {
  const file = join(dir, `${group}.yaml`);
  writeFileSync(file, eddyConfig(broker, group, topics, output, commit));
  const ps = Array.from({ length: processes }, () => spawnNode([join(REPO, 'bin', 'eddy'), 'server', 'run', '-f', file, '--no-api']));
  return {
    children: ps.map((p) => p.child),
    async stop() {
      const peaks = ps.map((p) => vmHwm(p.child.pid) ?? 0);
      for (const p of ps) p.child.kill('SIGTERM');
      await Promise.all(ps.map((p) => p.exited));
      return { peakRss: Math.max(...peaks) || undefined };
    },
  };
}

export async function endOffsets(admin: Admin, topic: string): Promise<number> {
  const offsets = await admin.fetchTopicOffsets(topic);
  return offsets.reduce((sum, p) => sum + Number(p.high), 0);
}

/** Polls the output until `total` events are there; events/s between 10 % and 90 % of them, and the CPU the side used meanwhile. */
async function drain(admin: Admin, output: string, total: number, side: Running, timeoutMs: number): Promise<SideResult> {
  const deadline = Date.now() + timeoutMs;
  const cpu = () => side.children.reduce((sum, c) => sum + (cpuSeconds(c.pid) ?? NaN), 0);
  let start: { t: number; n: number; cpu: number } | undefined;
  let end: { t: number; n: number; cpu: number } | undefined;
  for (;;) {
    const n = await endOffsets(admin, output);
    const t = performance.now();
    if (!start && n >= total * 0.1) start = { t, n, cpu: cpu() };
    if (start && !end && n >= total * 0.9) end = { t, n, cpu: cpu() };
    if (n >= total) break;
    if (Date.now() > deadline) throw new Error(`${output}: ${n} of ${total} events after ${timeoutMs / 1000} s`);
    await sleep(50);
  }
  if (!start || !end || end.t === start.t) throw new Error(`${output}: too few polls to measure (raise BENCH_KAFKA_EVENTS)`);
  const seconds = (end.t - start.t) / 1000;
  const events = end.n - start.n;
  const cpuUsed = end.cpu - start.cpu;
  return { events, seconds, events_per_second: events / seconds, cpu_seconds: Number.isFinite(cpuUsed) ? cpuUsed : undefined };
}

/** Paced events into `paced` (which the side reads), their arrival in `output` timed here: p50 and p99 in ns. */
async function latency(kafka: Kafka, producer: Producer, paced: string, output: string, rate: number, seconds: number): Promise<{ p50: number; p99: number }> {
  const consumer: Consumer = kafka.consumer({ groupId: `${output}-latency`, maxWaitTimeInMs: 50 });
  const samples: number[] = [];
  let joined = false;
  consumer.on(consumer.events.GROUP_JOIN, () => (joined = true));
  await consumer.connect();
  await consumer.subscribe({ topics: [output], fromBeginning: false });
  await consumer.run({
    // kafkajs wants a promise; the batch is read synchronously
    eachBatch: ({ batch }) => {
      const t = now();
      for (const m of batch.messages) {
        const sent = (JSON.parse(m.value!.toString('utf8')) as { sent_ms?: number }).sent_ms;
        if (sent !== undefined) samples.push((t - sent) * 1e6);
      }
      return Promise.resolve();
    },
  });
  while (!joined) await sleep(20);
  // the reader's position is the end of the output: give its first fetch a moment so no paced event precedes it
  await sleep(500);
  const total = Math.round(rate * seconds);
  const perTick = Math.max(1, Math.round(rate / 100)); // 100 sends a second
  const t0 = performance.now();
  for (let sent = 0, tick = 0; sent < total; tick++) {
    const due = t0 + tick * 10;
    if (performance.now() < due) await sleep(due - performance.now());
    const messages = [];
    for (let i = 0; i < perTick && sent < total; i++, sent++) messages.push({ value: JSON.stringify({ sent_ms: now(), seq: sent }) });
    void producer.send({ topic: paced, messages });
  }
  const deadline = Date.now() + 30000;
  while (samples.length < total && Date.now() < deadline) await sleep(50);
  await consumer.disconnect();
  if (samples.length < total) throw new Error(`latency: ${samples.length} of ${total} paced events came through`);
  samples.sort((a, b) => a - b);
  return { p50: samples[Math.floor(samples.length * 0.5)], p99: samples[Math.min(samples.length - 1, Math.floor(samples.length * 0.99))] };
}

export async function main(): Promise<KafkaBenchResult> {
  const broker = `${process.env.EDDY_KAFKA_HOST ?? '127.0.0.1'}:${process.env.EDDY_KAFKA_PORT ?? '9092'}`;
  const total = Math.round(envNumber('BENCH_KAFKA_EVENTS', 50000, 1));
  const partitions = Math.round(envNumber('BENCH_KAFKA_PARTITIONS', 4, 1));
  const rate = envNumber('BENCH_KAFKA_RATE', 2000, 1);
  const pacedSecs = envNumber('BENCH_KAFKA_PACED_SECS', 3, 1);
  const commit = process.env.BENCH_KAFKA_COMMIT === 'auto' ? 'auto' : 'ack';
  const processes = (process.env.BENCH_KAFKA_PROCESSES ?? '1,2').split(',').map(Number);
  const load = loadavg()[0];
  process.stderr.write(
    `kafka: ${total} events, ${partitions} partitions, commit on ${commit === 'ack' ? 'ack' : 'reception'}, broker ${broker}\n` +
      `node ${process.version}, ${cpus().length} CPUs, load average ${load.toFixed(1)}\n`,
  );
  const run = `bench-${process.pid}-${Date.now().toString(36)}`;
  const dir = mkdtempSync(join(tmpdir(), 'eddy-kafka-bench-'));
  const kafka = new Kafka({ brokers: [broker], clientId: 'bench', logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
  await admin.connect();
  await producer.connect();
  const created: string[] = [];
  const topic = async (name: string) => {
    await admin.createTopics({ topics: [{ topic: name, numPartitions: partitions, replicationFactor: 1 }], waitForLeaders: true });
    created.push(name);
    return name;
  };
  try {
    const input = await topic(`${run}-in`);
    const lines = readFileSync(LINES_FILE, 'utf8')
      .split('\n')
      .filter((l) => l.length > 0);
    const t0 = performance.now();
    for (let i = 0; i < total; i += 2000) {
      const messages = [];
      for (let j = i; j < Math.min(total, i + 2000); j++) messages.push({ value: lines[j % lines.length], partition: j % partitions });
      await producer.send({ topic: input, messages });
    }
    process.stderr.write(`filled ${input} in ${((performance.now() - t0) / 1000).toFixed(1)} s\n`);

    const measure = async (name: string, start: (group: string, topics: string[], output: string) => Running): Promise<SideResult> => {
      const output = await topic(`${run}-${name}-out`);
      const paced = await topic(`${run}-${name}-paced`);
      const side = start(`${run}-${name}`, [input, paced], output);
      let result: SideResult;
      try {
        result = await drain(admin, output, total, side, 300000);
        const lat = await latency(kafka, producer, paced, output, rate, pacedSecs);
        result.p50_ns = lat.p50;
        result.p99_ns = lat.p99;
      } catch (err) {
        await side.stop();
        throw err;
      }
      result.peak_rss_bytes = (await side.stop()).peakRss;
      process.stderr.write(`${name}: ${Math.round(result.events_per_second)} events/s\n`);
      return result;
    };
    const raw = await measure('raw', (group, topics, output) => startRaw(broker, group, topics, output));
    const eddy = await measure('eddy', (group, topics, output) => startEddy(dir, 1, broker, group, topics, output, commit));
    const result: KafkaBenchResult = {
      events: total,
      partitions,
      commit,
      eddy,
      raw,
      ratio: eddy.events_per_second / raw.events_per_second,
      load_average: load,
    };
    if (eddy.cpu_seconds && raw.cpu_seconds) result.cpu_ratio = eddy.events / eddy.cpu_seconds / (raw.events / raw.cpu_seconds);
    if (processes.includes(2)) result.eddy_2 = await measure('eddy2', (group, topics, output) => startEddy(dir, 2, broker, group, topics, output, commit));
    process.stdout.write(table(result) + '\n');
    if (process.env.BENCH_JSON) writeFileSync(process.env.BENCH_JSON, JSON.stringify(result, null, 2) + '\n');
    return result;
  } finally {
    await admin.deleteTopics({ topics: created }).catch(() => undefined);
    await producer.disconnect();
    await admin.disconnect();
    rmSync(dir, { recursive: true, force: true });
  }
}

export function table(r: KafkaBenchResult): string {
  const ms = (ns: number | undefined) => (ns === undefined ? '-' : (ns / 1e6).toFixed(1));
  const row = (name: string, s: SideResult) =>
    [
      name.padEnd(7),
      Math.round(s.events_per_second).toLocaleString('en-US').padStart(10),
      (s.cpu_seconds === undefined ? '-' : Math.round(s.events / s.cpu_seconds).toLocaleString('en-US')).padStart(14),
      ms(s.p50_ns).padStart(8),
      ms(s.p99_ns).padStart(8),
      (s.peak_rss_bytes === undefined ? '-' : `${Math.round(s.peak_rss_bytes / 1048576)} MB`).padStart(9),
    ].join('  ');
  return [
    `${'side'.padEnd(7)}  ${'events/s'.padStart(10)}  ${'events/CPU-s'.padStart(14)}  ${'p50 ms'.padStart(8)}  ${'p99 ms'.padStart(8)}  ${'peak RSS'.padStart(9)}`,
    row('eddy', r.eddy),
    ...(r.eddy_2 ? [row('eddy x2', r.eddy_2)] : []),
    row('raw', r.raw),
    `eddy/raw: ${r.ratio.toFixed(2)} (events/s), ${r.cpu_ratio === undefined ? '-' : r.cpu_ratio.toFixed(2)} (events per CPU-second); ` +
      `${r.events} events, ${r.partitions} partitions, commit on ${r.commit === 'ack' ? 'ack' : 'reception'}, load average ${r.load_average.toFixed(1)}`,
  ].join('\n');
}

if (require.main === module) {
  const [role, ...args] = process.argv.slice(2);
  const fail = (err: Error) => {
    process.stderr.write(`kafka bench ${role ?? ''}: ${err.stack ?? err.message}\n`);
    process.exit(1);
  };
  if (role === 'raw') rawLoop(args[0], args[1], args.slice(3), args[2]).then(() => process.exit(0), fail);
  else main().then(() => process.exit(0), fail);
}
