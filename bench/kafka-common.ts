/**
 * What bench/kafka.ts and bench/kafka-clients.ts share: the broker, topics
 * and group offsets through @platformatic/kafka's admin client (the bench
 * needs no kafkajs, so it runs on either of eddy's kafka connectors), the
 * JSON messages, filling a topic, and `eddy server run` with a kafka flow.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Admin, Producer } from '@platformatic/kafka';
import { REPO } from './data';

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
/** Wall-clock milliseconds with a fraction, one clock for both ends of a latency. */
export const nowMs = () => performance.timeOrigin + performance.now();

export function brokerAddress(): string {
  return `${process.env.EDDY_KAFKA_HOST ?? '127.0.0.1'}:${process.env.EDDY_KAFKA_PORT ?? '9092'}`;
}

/** Keys of the messages (`key`: k-0 .. k-999): what kafka -> window::aggregate -> kafka groups by. */
export const KEYS = 1000;

/**
 * A JSON line of ~100 bytes with a unique `seq` (the rebalancing checks
 * count them) and a `key`; `ts` is the time it was sent when a latency is
 * measured from it.
 */
export function message(seq: number, ts = 1764241200000 + seq): Buffer {
  const line = JSON.stringify({ seq, ts, key: `k-${seq % KEYS}`, host: 'bench-host-01', level: 'info', msg: `event ${seq}`, pad: '' });
  return Buffer.from(line.replace('"pad":""', `"pad":"${'x'.repeat(Math.max(0, 100 - line.length))}"`), 'utf8');
}

export async function bounded<T>(what: string, p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: no end after ${ms / 1000} s`)), ms)));
  try {
    return await Promise.race([p, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

export async function until(what: string, ms: number, check: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what}: not after ${ms / 1000} s`);
    await sleep(100);
  }
}

/** Topics and groups of one bench run: named `<run>-<what>-<n>`, all deleted by `cleanup`. */
export class KafkaBench {
  readonly admin: Admin;
  private readonly topics = new Set<string>();
  private readonly groups = new Set<string>();
  private seq = 0;

  constructor(
    readonly broker: string,
    readonly partitions: number,
    private readonly run: string,
  ) {
    this.admin = new Admin({ clientId: 'bench-admin', bootstrapBrokers: [broker] });
  }

  name(what: string): string {
    return `${this.run}-${what}-${++this.seq}`;
  }

  group(what: string): string {
    const g = this.name(what);
    this.groups.add(g);
    return g;
  }

  /** A fresh topic of `partitions` partitions, once its leaders answer (a list of its offsets succeeds). */
  async topic(what: string): Promise<string> {
    const t = this.name(what);
    await this.admin.createTopics({ topics: [t], partitions: this.partitions, replicas: 1 });
    this.topics.add(t);
    await until(`topic ${t}: leaders`, 30000, () =>
      this.endOffsets(t).then(
        () => true,
        () => false,
      ),
    );
    return t;
  }

  /** Deletes a topic now (a long run frees the broker's disk as it goes). */
  async drop(topic: string): Promise<void> {
    await this.admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
    this.topics.delete(topic);
  }

  /** The messages in a topic: its end offsets summed (a fresh topic starts at 0). */
  async endOffsets(topic: string): Promise<number> {
    const partitions = Array.from({ length: this.partitions }, (_, partitionIndex) => ({ partitionIndex, timestamp: -1n }));
    const [t] = await this.admin.listOffsets({ topics: [{ name: topic, partitions }] });
    return t.partitions.reduce((sum, p) => sum + Number(p.offset), 0);
  }

  /** The group's committed offsets summed over the topic (a partition never committed counts 0). */
  async committed(group: string, topic: string): Promise<number> {
    const [g] = await this.admin.listConsumerGroupOffsets({ groups: [group] });
    const t = g?.topics.find((x) => x.name === topic);
    return (t?.partitions ?? []).reduce((sum, p) => sum + Math.max(0, Number(p.committedOffset)), 0);
  }

  /** Per member of a stable group, how many partitions of `topic` it holds; [] while the group rebalances. */
  async members(group: string, topic: string): Promise<number[]> {
    const groups = await this.admin.describeGroups({ groups: [group] });
    const g = groups.get(group);
    if (g?.state.toUpperCase() !== 'STABLE') return [];
    return [...g.members.values()].map((m) => m.assignments?.get(topic)?.partitions.length ?? 0);
  }

  /**
   * Fills a topic with messages seq `from` .. `from + total - 1` (seq i to
   * partition i % partitions): sends of 1,000, four in flight, acks all; over
   * `secs` seconds evenly when given, else as fast as the broker takes them.
   */
  async fill(topic: string, total: number, secs?: number, from = 0): Promise<void> {
    const producer = new Producer({ clientId: 'bench-fill', bootstrapBrokers: [this.broker], autocreateTopics: false });
    try {
      const t0 = performance.now();
      let next = 0;
      const worker = async () => {
        while (next < total) {
          const start = next;
          next = Math.min(total, next + 1000);
          if (secs !== undefined) {
            const due = t0 + (start / total) * secs * 1000;
            if (performance.now() < due) await sleep(due - performance.now());
          }
          const messages = [];
          for (let i = from + start; i < from + next; i++) messages.push({ topic, partition: i % this.partitions, value: message(i) });
          await producer.send({ acks: -1, messages });
        }
      };
      await Promise.all(Array.from({ length: secs === undefined ? 4 : 1 }, worker));
    } finally {
      await producer.close();
    }
  }

  async cleanup(): Promise<void> {
    if (this.topics.size > 0) await this.admin.deleteTopics({ topics: [...this.topics] }).catch(() => undefined);
    if (this.groups.size > 0) await this.admin.deleteGroups({ groups: [...this.groups] }).catch(() => undefined);
    await this.admin.close();
  }
}

// ---------------------------------------------------------------- eddy

/** What eddy does between its kafka onramp and offramp. */
export type Flow = 'passthrough' | 'window' | 'window-eos' | 'window-eos-1s';

/** Every flow, in the order the table shows them. */
export const FLOWS: readonly Flow[] = ['passthrough', 'window', 'window-eos', 'window-eos-1s'];

/**
 * The kafka onramp with commit on ack (`enable.auto.commit: false`) ->
 * the flow -> the kafka offramp. `window`: a 1 s tumbling processing-time
 * window per `key` counting its events (one output per key and second).
 * The session timeout is the broker's minimum (6 s), so that a killed
 * member's partitions move within the rebalancing check's bounds.
 * Only names of rdkafka_options both connectors (kafkajs and
 * @platformatic/kafka) give the same meaning.
 */
export function eddyConfig(broker: string, group: string, topics: string[], output: string, flow: Flow): string {
  const pipeline = flow === 'passthrough' ? 'system::passthrough' : 'window';
  // window-eos: the same window, exactly once (one transaction per commit_interval: 100 ms, or 1 s)
  const eos =
    flow === 'window-eos' ? '\n      guarantee: exactly_once' : flow === 'window-eos-1s' ? '\n      guarantee: exactly_once\n      commit_interval: 1s' : '';
  const windowPipeline = `pipeline:
  - id: window
    interface: { inputs: [in], outputs: [out] }
    nodes:
      - id: count
        type: "window::aggregate"
        config:
          window: { size: 1s }
          group_by: { key: "event.key" }
          aggregate: { n: "count()" }
    links:
      in: [count]
      count: [out]
`;
  return `onramp:
  - id: in
    type: kafka
    config:
      group_id: ${group}
      topics: [${topics.join(', ')}]
      brokers: ["${broker}"]${eos}
      rdkafka_options: { enable.auto.commit: "false", auto.offset.reset: earliest, session.timeout.ms: "6000", heartbeat.interval.ms: "2000" }
offramp:
  - id: out
    type: kafka
    config: { topic: ${output}, brokers: ["${broker}"] }
${flow === 'passthrough' ? '' : windowPipeline}binding:
  - id: relay
    links:
      "/onramp/in/{instance}/out": ["/pipeline/${pipeline}/{instance}/in"]
      "/pipeline/${pipeline}/{instance}/out": ["/offramp/out/{instance}/in"]
mapping:
  /binding/relay/main: { instance: main }
`;
}

export interface NodeChild {
  child: ChildProcess;
  /** its stdout so far */
  out: () => string;
  /** its exit code (null after a signal) once it closed */
  exited: Promise<number | null>;
}

/** BENCH_NODE_ARGS: node flags for every side's processes, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof` (as bench/sinks.ts) */
const NODE_ARGS = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter((a) => a !== '');

export function spawnNode(args: string[], env: NodeJS.ProcessEnv = process.env): NodeChild {
  const child = spawn(process.execPath, [...NODE_ARGS, ...args], { cwd: REPO, env, stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
  const exited = new Promise<number | null>((r) => child.once('close', (code) => r(code)));
  return { child, out: () => out, exited };
}

/** A side under measurement: its processes (their CPU and RSS are read from /proc) and how to stop it. */
export interface Running {
  children: ChildProcess[];
  stop(): Promise<void>;
}

/** `eddy server run -f <dir>/<group>.yaml --no-api`, `processes` of them in one group. */
export function startEddy(
  dir: string,
  processes: number,
  broker: string,
  group: string,
  topics: string[],
  output: string,
  flow: Flow = 'passthrough',
): Running & { procs: NodeChild[] } {
  const file = join(dir, `${group}.yaml`);
  writeFileSync(file, eddyConfig(broker, group, topics, output, flow));
  const env = { ...process.env, EDDY_LOG: process.env.EDDY_LOG ?? 'warn' };
  const procs = Array.from({ length: processes }, () => spawnNode([join(REPO, 'bin', 'eddy'), 'server', 'run', '-f', file, '--no-api'], env));
  return {
    procs,
    children: procs.map((p) => p.child),
    async stop() {
      for (const p of procs) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGTERM');
      await bounded('eddy stop', Promise.all(procs.map((p) => p.exited)), 30000).catch(() => {
        for (const p of procs) p.child.kill('SIGKILL');
      });
    },
  };
}

/** VmRSS of a live process in bytes, from /proc (undefined when gone). */
export function rssBytes(pid: number | undefined): number | undefined {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** VmHWM (peak RSS) of a live process in bytes. */
export function peakRssBytes(pid: number | undefined): number | undefined {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}
