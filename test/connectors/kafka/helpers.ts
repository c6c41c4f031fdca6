/**
 * Helpers for the kafka connector tests: names unique to this run, a raw
 * kafkajs client (the peer: topics, producing, reading a topic back) and a
 * runtime whose kafka onramp feeds an offramp that records, and can fail,
 * what it gets.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Kafka, Partitioners, logLevel, type Admin, type Consumer, type KafkaMessage, type Message, type Producer } from 'kafkajs';
import type { EddyEvent } from '../../../src/core/event';
import { createLogger } from '../../../src/core/logger';
import type { OfframpType } from '../../../src/connectors/connector';
import { Runtime } from '../../../src/runtime/runtime';
import { requireService, type ServiceAddress } from '../../helpers/services';
import { EDDY } from '../../helpers/cli';
import { eventually } from '../../helpers/runtime';
import { passthrough } from '../net-helpers';
import { createServedTopic } from './topics';

let counter = 0;
/** A topic or group name no other run and no other test uses. */
export function unique(prefix: string): string {
  return `${prefix}-${process.pid}-${Date.now().toString(36)}-${++counter}`;
}

export function brokerOf(address: ServiceAddress): string {
  return `${address.host}:${address.port}`;
}

/** The peer: a kafkajs client of its own, quiet. */
/**
 * The shared broker for a describe block: registers the hooks that find it
 * (the block's tests skip without it) and open a peer client on it before
 * them, and close the peer after them.
 */
export function useSharedKafka(): { broker: string; peer: Peer } {
  const kafka = {} as { broker: string; peer: Peer };
  before(async function () {
    kafka.broker = brokerOf(await requireService(this, 'kafka'));
    kafka.peer = new Peer(kafka.broker);
  });
  after(async () => kafka.peer?.close());
  return kafka;
}

export class Peer {
  readonly kafka: Kafka;
  private admin: Admin | undefined;
  private producer: Producer | undefined;

  constructor(readonly broker: string) {
    this.kafka = new Kafka({ brokers: [broker], clientId: 'eddy-test-peer', logLevel: logLevel.NOTHING, retry: { retries: 3, initialRetryTime: 100 } });
  }

  /** Creates `topic` and waits until its leaders serve every partition (createServedTopic): a produce right after it is not refused. */
  async createTopic(topic: string, numPartitions = 1, config: Record<string, string> = {}): Promise<void> {
    if (!this.admin) {
      this.admin = this.kafka.admin();
      await this.admin.connect();
    }
    const configEntries = Object.entries(config).map(([name, value]) => ({ name, value }));
    await createServedTopic(this.admin, { topic, numPartitions, replicationFactor: 1, configEntries });
  }

  async produce(topic: string, messages: Message[]): Promise<void> {
    if (!this.producer) {
      this.producer = this.kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
      await this.producer.connect();
    }
    for (let i = 0; i < messages.length; i += 1000) await this.producer.send({ topic, messages: messages.slice(i, i + 1000) });
  }

  /** Reads `topic` from the beginning (a fresh group) until `count` messages arrived; fails after `ms`. */
  async readTopic(topic: string, count: number, ms = 30000): Promise<(KafkaMessage & { partition: number })[]> {
    const consumer = this.kafka.consumer({ groupId: unique('reader'), maxWaitTimeInMs: 100 });
    const got: (KafkaMessage & { partition: number })[] = [];
    try {
      await consumer.connect();
      await consumer.subscribe({ topics: [topic], fromBeginning: true });
      await consumer.run({ eachMessage: async ({ message, partition }) => void got.push({ ...message, partition }) });
      await eventually(() => got.length >= count, ms, `${count} messages on ${topic} (have ${got.length})`);
      return got;
    } finally {
      await consumer.disconnect();
    }
  }

  /** Committed offsets of `group` on `topic`, by partition. */
  async committed(group: string, topic: string): Promise<Record<number, number>> {
    if (!this.admin) {
      this.admin = this.kafka.admin();
      await this.admin.connect();
    }
    const [entry] = await this.admin.fetchOffsets({ groupId: group, topics: [topic] });
    return Object.fromEntries(entry.partitions.map((p) => [p.partition, Number(p.offset)]));
  }

  async close(): Promise<void> {
    await this.producer?.disconnect();
    await this.admin?.disconnect();
  }
}

/** Events that reached the recording offramp. */
export interface Recorded {
  events: EddyEvent[];
  errors: EddyEvent[];
  /** sends refused by `failWhen`, in order */
  failed: EddyEvent[];
}

/**
 * An offramp type that records each event and acks it, unless `failWhen`
 * says no: then the send throws and the event fails back to its source.
 */
export function recorder(recorded: Recorded, failWhen: (event: EddyEvent) => boolean = () => false, autoAck = true): OfframpType<{ port: string }> {
  return {
    name: 'record',
    defaultCodec: 'json',
    autoAck,
    configSchema: {
      type: 'object',
      additionalProperties: false,
      required: ['port'],
      properties: { port: { type: 'string', description: 'out or err' } },
    },
    create: (config) => ({
      send(_payloads, event) {
        if (config.port === 'err') return void recorded.errors.push(event);
        if (failWhen(event)) {
          recorded.failed.push(event);
          throw new Error('refused by the test');
        }
        recorded.events.push(event);
      },
    }),
  };
}

export interface Flow {
  runtime: Runtime;
  recorded: Recorded;
  stop(): Promise<void>;
}

/** A runtime with a kafka onramp whose out and err ports go through passthroughs into the recorder. */
export async function consumeFlow(
  config: Record<string, unknown>,
  failWhen?: (event: EddyEvent) => boolean,
  extra: Record<string, unknown> = {},
  sink: { autoAck?: boolean } = {},
): Promise<Flow> {
  const recorded: Recorded = { events: [], errors: [], failed: [] };
  const runtime = new Runtime({ logger: createLogger(process.env.EDDY_TEST_LOG ?? 'silent') }).registerOfframp(recorder(recorded, failWhen, sink.autoAck));
  await runtime.start();
  runtime.publish('onramp', { id: 'in', type: 'kafka', config, ...extra });
  runtime.publish('pipeline', passthrough('p'));
  runtime.publish('offramp', { id: 'outs', type: 'record', config: { port: 'out' } });
  runtime.publish('offramp', { id: 'errs', type: 'record', config: { port: 'err' } });
  runtime.publish('binding', {
    id: 'flow',
    links: {
      '/onramp/in/{instance}/out': ['/pipeline/p/{instance}/in'],
      '/pipeline/p/{instance}/out': ['/offramp/outs/{instance}/in'],
      '/onramp/in/{instance}/err': ['/pipeline/p/errs/in'],
      '/pipeline/p/errs/out': ['/offramp/errs/{instance}/in'],
    },
  });
  await runtime.activate('binding', 'flow', 'main');
  return { runtime, recorded, stop: () => runtime.shutdown() };
}

/** `eddy server run -f FILE --no-api` in a child process, to be killed or stopped. */
export interface EddyChild {
  child: ChildProcess;
  stderr(): string;
  /** the partitions of the group's last assignment this process logged, as `topic/partition` */
  assigned(): string[];
  /** resolves with the exit code (or signal) */
  exited: Promise<number | string | null>;
  kill(signal?: NodeJS.Signals): Promise<number | string | null>;
}

export function spawnEddy(configFile: string, safetyMs = 60000): EddyChild {
  const child = spawn(process.execPath, [EDDY, 'server', 'run', '-f', configFile, '--no-api'], {
    env: { ...process.env, EDDY_LOG: 'info' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
  const exited = new Promise<number | string | null>((resolve) => child.once('close', (code, signal) => resolve(signal ?? code)));
  const killer = setTimeout(() => child.kill('SIGKILL'), safetyMs);
  void exited.then(() => clearTimeout(killer));
  return {
    child,
    stderr: () => err,
    assigned() {
      const lines = err.split('\n').filter((l) => l.includes('joined the group; assigned'));
      const last = lines[lines.length - 1];
      if (!last) return [];
      const out: string[] = [];
      for (const m of last.matchAll(/(\S+) \[([\d, ]*)\]/g)) for (const p of m[2].split(',').filter((x) => x.trim() !== '')) out.push(`${m[1]}/${p.trim()}`);
      return out.sort();
    },
    exited,
    async kill(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

/** A relay config file: kafka onramp (commit on ack) -> passthrough -> kafka offramp. */
export function relayConfig(dir: string, broker: string, group: string, input: string, output: string): string {
  const file = join(dir, `${group}.yaml`);
  writeFileSync(
    file,
    `onramp:
  - id: in
    type: kafka
    config:
      group_id: ${group}
      topics: [${input}]
      brokers: ["${broker}"]
      rdkafka_options: { enable.auto.commit: "false", auto.offset.reset: earliest, session.timeout.ms: "6000" }
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
`,
  );
  return file;
}

/** Reads a topic from the beginning in the background: what arrived so far, by value. */
export interface Tail {
  values: string[];
  /** the consumers kafkajs gave up (each replaced by a fresh one in the same group), for a failure message */
  givenUp: string[];
  close: () => Promise<void>;
}

/**
 * A tail keeps reading across a broker restart. kafkajs restarts a consumer
 * after a retriable error, but gives it up for good after any other (say a
 * member the restarted coordinator no longer knows, when its rejoin was
 * slow): then a fresh consumer in the same group reads on from the group's
 * commits (a value may arrive twice, never not at all).
 */
export async function tail(peer: Peer, topic: string): Promise<Tail> {
  const groupId = unique('tail');
  const values: string[] = [];
  const givenUp: string[] = [];
  let consumer: Consumer | undefined;
  let closed = false;
  const start = async (): Promise<void> => {
    // a short session: after a broker restart the group waits for the old member to time out before it takes this one back
    const c = peer.kafka.consumer({ groupId, maxWaitTimeInMs: 100, sessionTimeout: 6000, heartbeatInterval: 1000 });
    consumer = c;
    c.on(c.events.CRASH, ({ payload }) => {
      if (payload.restart || closed) return;
      givenUp.push(payload.error.message);
      replace();
    });
    await c.connect();
    await c.subscribe({ topics: [topic], fromBeginning: true });
    await c.run({
      eachBatch: async ({ batch }) => {
        for (const m of batch.messages) values.push(m.value?.toString() ?? '');
      },
    });
  };
  // the broker may still be starting: a fresh consumer that cannot join is given up too, and tried again
  const replace = (): void =>
    void start().catch((err: unknown) => {
      givenUp.push(`a fresh consumer: ${err instanceof Error ? err.message : String(err)}`);
      if (!closed) setTimeout(replace, 1000);
    });
  await start();
  return {
    values,
    givenUp,
    close: async () => {
      closed = true;
      await consumer?.disconnect();
    },
  };
}
