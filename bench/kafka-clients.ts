/**
 * Which kafka client for eddy (issue 26): @platformatic/kafka and
 * @confluentinc/kafka-javascript (librdkafka), each doing the same work by
 * hand on the real broker, beside eddy's own kafka -> passthrough -> kafka
 * flow (on whichever client its connector uses). kafkajs, eddy's client
 * before issue 34, is no longer measured here: its figures are text in
 * bench/README.md. The topics, offsets, fills and read-backs of the bench
 * itself go through @platformatic/kafka (bench/kafka-common.ts).
 *
 *   npx tsc -p . && node dist/bench/kafka-clients.js [platformatic confluent eddy]
 *
 * Per client, each stage in a child process of its own (so its CPU is that
 * client's alone):
 * - produce: BENCH_KAFKA_EVENTS (200,000) JSON messages of ~100 bytes, each
 *   with a unique `seq`, into a fresh topic of BENCH_KAFKA_PARTITIONS (4)
 *   partitions: sends of 1,000 messages, up to 4 in flight, acks all.
 *   events/s and CPU-s per million from the child's process.cpuUsage.
 * - relay (consume -> produce, the stage eddy's flows pay): a consumer in a
 *   new group reads that topic from the start and produces every value as it
 *   came to a second topic (same partition, acks all). What one fetch
 *   brought for a partition is handed to the producer at once (requests of
 *   at most 1,000 messages), not awaited: several requests in flight, at
 *   most 10,000 messages unacknowledged, then the consumer pauses. An offset
 *   is committed only once the produce of every message before it on its
 *   partition was acknowledged, one commit request at a time (eddy's commit
 *   on ack, src/connectors/kafka/commits.ts); a rejoin drops what was not
 *   committed, to be read again. The child measures itself, from the first
 *   message handed over to the acknowledged commit that covers the last:
 *   events/s and CPU-s per million (process.cpuUsage, all its threads).
 * - rebalance: two members in one group on a fresh 4-partition topic (two
 *   relay processes of the client, or for `eddy` two `eddy server run`
 *   processes with bench/kafka-common.ts's config, whose assignment is read
 *   from the group with the admin client)
 *   fed BENCH_KAFKA_REBALANCE_EVENTS (60,000) messages evenly over
 *   BENCH_KAFKA_REBALANCE_SECS (10) once both joined; when a third of the
 *   output is written one of them leaves: `leave` (SIGTERM:
 *   it stops handing over, waits for its produces, commits, leaves the
 *   group) and then `crash` (SIGKILL, on a topic of its own). The other must
 *   take its partitions; once the group's commits reach the end of the
 *   input, the output is read back and each `seq` counted: missing (lost)
 *   or more than once (duplicates). BENCH_KAFKA_REBALANCE_EVENTS=0 skips it;
 *   BENCH_KAFKA_REBALANCE_ROUNDS (1) repeats the pair, kinds rotated.
 * - eddy: `eddy server run` with bench/kafka-common.ts's config (kafka
 *   onramp with commit on ack -> system::passthrough -> kafka offramp) over
 *   the input of a @platformatic/kafka produce stage. eddy is another process: measured from outside,
 *   from the first message in its output to the group's commits covering
 *   the input (polled every 50 ms), its CPU from /proc/<pid>/stat.
 * - install size: each client's dependency closure as installed (the
 *   packages it loads from, optional dependencies present included): its
 *   package count and apparent bytes (`du -s --apparent-size`'s measure).
 *
 * BENCH_KAFKA_ROUNDS (1) rounds, each in another order (rotated), so no
 * client always runs first. @confluentinc/kafka-javascript is loaded from
 * BENCH_CONFLUENT_DIR (default /tmp/confluent) when it is not in eddy's
 * node_modules. A client that is not installed is skipped, saying how to
 * install it. Every wait is bounded; topics and groups are named
 * `kcmp-<pid>-<time>-...` and deleted at the end.
 * The broker: EDDY_KAFKA_HOST / EDDY_KAFKA_PORT (default 127.0.0.1:9092).
 */
import { mkdtempSync, lstatSync, readFileSync, readdirSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Consumer, Producer, type Message, type MessagesStream } from '@platformatic/kafka';
import { envNumber, REPO } from './data';
import { cpuSeconds } from './child';
import { KafkaBench, bounded, brokerAddress, message, sleep, spawnNode, startEddy, until, type NodeChild, type Running } from './kafka-common';

type ClientName = 'platformatic' | 'confluent';
const CLIENTS: readonly ClientName[] = ['platformatic', 'confluent'];

interface ClientSpec {
  package: string;
  version: string;
  how: string;
}

const SPECS: Record<ClientName, ClientSpec> = {
  platformatic: { package: '@platformatic/kafka', version: '2.12.1', how: 'pure JavaScript' },
  confluent: {
    package: '@confluentinc/kafka-javascript',
    version: '1.10.1',
    how: 'librdkafka; its install downloads a prebuilt binary from github.com, or builds from source, which needs librdkafka >= 2.15 or downloads its dependencies',
  },
};

/** Messages unacknowledged beyond which a relay stops handing over (eddy's UNSETTLED_LIMIT). */
const UNSETTLED_LIMIT = 10_000;
/** Short enough that a crashed member's partitions move within the bench's bounds; the broker's minimum. */
const SESSION_TIMEOUT = 6000;
const PRODUCE_BATCH = 1000;
const PRODUCE_IN_FLIGHT = 4;
/** The largest fetch of a relay doing the JSON work (2 MB: ~20,000 messages of ~100 bytes). */
const JSON_FETCH_BYTES = 2 * 1048576;
/** A commit not answered in this time counts as failed (its offsets are committed again). */
const COMMIT_TIMEOUT = 15_000;

/** Where a client loads from (a directory whose node_modules has it), or undefined when it is not installed. */
function locate(name: ClientName): string | undefined {
  const dirs = [REPO];
  if (name === 'confluent') dirs.push(process.env.BENCH_CONFLUENT_DIR ?? '/tmp/confluent');
  for (const dir of dirs) {
    try {
      require.resolve(SPECS[name].package, { paths: [dir] });
      return dir;
    } catch {
      // not there
    }
  }
  return undefined;
}

/** @confluentinc/kafka-javascript is optional and not in eddy's node_modules: loaded only when installed, from where it is. */
function loadConfluent(): ConfluentModule {
  const dir = locate('confluent');
  if (dir === undefined) throw new Error(`${SPECS.confluent.package} is not installed`);
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- optional, from another directory
  return require(require.resolve(SPECS.confluent.package, { paths: [dir] })) as ConfluentModule;
}

// ---------------------------------------------------------------- commit on ack (in the child)

/** What one fetch brought for a partition, handed to the producer at once. */
interface Chunk {
  /** one past its last offset: what to commit once it and everything before it are acknowledged */
  readonly next: number;
  readonly count: number;
  readonly epoch: number;
  readonly track: Track;
  acked: boolean;
}

interface Track {
  readonly topic: string;
  readonly partition: number;
  chunks: Chunk[];
  committable: number | undefined;
  dirty: boolean;
  /** the client's leader epoch of the partition (platformatic commits it, KIP-320) */
  leaderEpoch: number;
}

/**
 * Per partition the chunks in offset order; the committable offset moves
 * over the acknowledged prefix only (as eddy's CommitTracker does per
 * message). A rejoin (`reset`) forgets everything: acks of chunks from
 * before it no longer count, their partitions are read again from the
 * committed offsets.
 */
class AckWindow {
  private tracks = new Map<string, Track>();
  private epoch = 0;
  /** messages handed to the producer and not acknowledged */
  unsettled = 0;
  /** produce requests not answered (stale ones too) */
  inFlight = 0;
  private waiters: (() => void)[] = [];

  add(topic: string, partition: number, next: number, count: number, leaderEpoch = -1): Chunk {
    const key = `${topic}\0${partition}`;
    let track = this.tracks.get(key);
    if (!track) this.tracks.set(key, (track = { topic, partition, chunks: [], committable: undefined, dirty: false, leaderEpoch }));
    track.leaderEpoch = leaderEpoch;
    const chunk: Chunk = { next, count, epoch: this.epoch, track, acked: false };
    track.chunks.push(chunk);
    this.unsettled += count;
    this.inFlight++;
    return chunk;
  }

  /** The produce of `chunk` was answered: acknowledged (ok) or not. */
  answered(chunk: Chunk, ok: boolean): void {
    this.inFlight--;
    if (chunk.epoch === this.epoch) {
      this.unsettled -= chunk.count;
      if (ok) {
        chunk.acked = true;
        const t = chunk.track;
        while (t.chunks.length > 0 && t.chunks[0].acked) {
          t.committable = t.chunks.shift()!.next;
          t.dirty = true;
        }
      }
      // a failed produce holds its partition's commits (the relay ends the stage on one)
    }
    for (const w of this.waiters.splice(0)) w();
  }

  reset(): void {
    this.epoch++;
    this.tracks.clear();
    this.unsettled = 0;
    for (const w of this.waiters.splice(0)) w();
  }

  /** A commit of these failed: their partitions are to be committed again. */
  retry(offsets: { topic: string; partition: number }[]): void {
    for (const o of offsets) {
      const t = this.tracks.get(`${o.topic}\0${o.partition}`);
      if (t) t.dirty = true;
    }
  }

  takeCommits(): { topic: string; partition: number; offset: number; leaderEpoch: number }[] {
    const out = [];
    for (const t of this.tracks.values()) {
      if (!t.dirty || t.committable === undefined) continue;
      t.dirty = false;
      out.push({ topic: t.topic, partition: t.partition, offset: t.committable, leaderEpoch: t.leaderEpoch });
    }
    return out;
  }

  /** Resolves at the next answer or reset, or after `ms`. */
  changed(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.waiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
}

interface RelayStats {
  event: 'stats';
  received: number;
  produced: number;
  produce_failures: number;
  commits: number;
  commit_failures: number;
  joins: number;
  /** messages of an older generation, or of a partition no longer assigned, not relayed (their owner reads them) */
  stale: number;
}

/** The shared machinery of a relay: the window, one commit request at a time, the stats, and the graceful stop. */
abstract class Relay {
  protected readonly window = new AckWindow();
  protected stopping = false;
  readonly stats: RelayStats = { event: 'stats', received: 0, produced: 0, produce_failures: 0, commits: 0, commit_failures: 0, joins: 0, stale: 0 };
  private committing: Promise<void> | undefined;
  private again = false;
  /** per input partition, the offset the broker acknowledged as committed */
  private readonly committedTo = new Map<string, number>();
  /** the first message handed over: when the stage's clock and CPU count start */
  private started: { t: number; cpu: NodeJS.CpuUsage } | undefined;
  private ended = false;

  /**
   * `total`: the stage ends when the commits cover this many messages (a
   * fresh topic: offsets from 0); 0 for never. `json`: each value goes
   * through JSON.parse and JSON.stringify on its way (the work eddy's json
   * codec would do if it did not pass an untouched frame through).
   */
  constructor(
    protected readonly output: string,
    private readonly total: number,
    private readonly json = false,
  ) {}

  protected get jsonWork(): boolean {
    return this.json;
  }

  abstract start(): Promise<void>;
  protected abstract produce(partition: number, values: Buffer[]): Promise<unknown>;
  protected abstract commit(offsets: { topic: string; partition: number; offset: number; leaderEpoch: number }[]): Promise<unknown>;
  /** leaves the group and closes the clients */
  protected abstract close(): Promise<void>;

  /** Hands one partition's chunk to the producer; commits when it and all before it are acknowledged. */
  protected relay(topic: string, partition: number, values: Buffer[], lastOffset: number, leaderEpoch?: number): void {
    this.started ??= { t: performance.now(), cpu: process.cpuUsage() };
    this.stats.received += values.length;
    if (this.json) values = values.map((v) => Buffer.from(JSON.stringify(JSON.parse(v.toString('utf8'))), 'utf8'));
    const chunk = this.window.add(topic, partition, lastOffset + 1, values.length, leaderEpoch);
    // a fetch can bring more than the broker takes in one produce request (message.max.bytes, 1 MB): requests of PRODUCE_BATCH at most
    const sends = [];
    for (let i = 0; i < values.length; i += PRODUCE_BATCH) sends.push(this.produce(partition, values.slice(i, i + PRODUCE_BATCH)));
    Promise.all(sends).then(
      () => {
        this.stats.produced += values.length;
        this.window.answered(chunk, true);
        this.flush();
      },
      (err: unknown) => {
        this.stats.produce_failures += values.length;
        this.window.answered(chunk, false);
        // its partition's commits would wait for ever: the stage fails now, saying why
        process.stderr.write(`relay: a produce failed: ${err instanceof Error ? err.message : String(err)}\n`);
        process.exit(1);
      },
    );
  }

  protected joined(partitions: number[]): void {
    this.stats.joins++;
    this.window.reset();
    process.stdout.write(JSON.stringify({ event: 'joined', partitions }) + '\n');
  }

  private flush(): void {
    if (this.committing) {
      this.again = true;
      return;
    }
    const offsets = this.window.takeCommits();
    if (offsets.length === 0) return;
    // bounded: a commit that never answers (seen once in ten runs of 2.5 M messages on a loaded machine)
    // would hold every later one; after COMMIT_TIMEOUT it counts as failed and the offsets go again
    this.committing = bounded('commit', this.commit(offsets), COMMIT_TIMEOUT)
      .then(
        () => {
          this.stats.commits++;
          for (const o of offsets) this.committedTo.set(`${o.topic}\0${o.partition}`, o.offset);
          this.checkEnd();
        },
        (err: unknown) => {
          // commit them again (with whatever was acknowledged meanwhile); say why, once
          this.window.retry(offsets);
          this.again = true;
          if (this.stats.commit_failures++ === 0) {
            const why = err instanceof Error ? `${err.message}${err.cause instanceof Error ? ` (${err.cause.message})` : ''}` : String(err);
            process.stderr.write(`relay: a commit failed: ${why}\n`);
          }
        },
      )
      .finally(() => {
        this.committing = undefined;
        if (this.again) {
          this.again = false;
          this.flush();
        }
      });
  }

  /** Every message relayed and committed: the stage's seconds and CPU (process.cpuUsage) since the first message. */
  private checkEnd(): void {
    if (this.ended || this.total === 0 || !this.started) return;
    let sum = 0;
    for (const offset of this.committedTo.values()) sum += offset;
    if (sum < this.total) return;
    this.ended = true;
    const cpu = process.cpuUsage(this.started.cpu);
    const seconds = (performance.now() - this.started.t) / 1000;
    process.stdout.write(JSON.stringify({ event: 'relayed', seconds, cpu_seconds: (cpu.user + cpu.system) / 1e6 }) + '\n');
  }

  /** SIGTERM: stop handing over, wait (bounded) for the produces, commit what they acknowledged, leave the group. */
  async stop(): Promise<RelayStats> {
    this.stopping = true;
    const deadline = Date.now() + 15000;
    while (this.window.inFlight > 0 && Date.now() < deadline) await this.window.changed(100);
    this.flush();
    while (this.committing) await this.committing;
    await this.close();
    return this.stats;
  }
}

// ---------------------------------------------------------------- librdkafka, through its KafkaJS API

/** The parts of the KafkaJS API a relay uses (@confluentinc/kafka-javascript's KafkaJS layer). */
interface ConsumerLike {
  connect(): Promise<void>;
  subscribe(s: { topics: string[] }): Promise<void>;
  run(config: { eachBatchAutoResolve: boolean; eachBatch: (p: BatchPayloadLike) => Promise<void> }): Promise<void>;
  commitOffsets(offsets: { topic: string; partition: number; offset: string }[]): Promise<unknown>;
  disconnect(): Promise<void>;
}

interface BatchPayloadLike {
  batch: { topic: string; partition: number; messages: { offset: string; value: Buffer | null }[] };
  resolveOffset: (offset: string) => void;
  heartbeat: () => Promise<void>;
  isRunning: () => boolean;
  isStale: () => boolean;
}

interface ProducerLike {
  connect(): Promise<void>;
  send(record: { topic: string; messages: { value: Buffer; partition: number }[] }): Promise<unknown>;
  disconnect(): Promise<void>;
}

/** A relay on the KafkaJS API: one `eachBatch` per fetched partition batch, handed over without waiting for its produce. */
class KafkaJsApiRelay extends Relay {
  constructor(
    private readonly consumer: ConsumerLike,
    private readonly producer: ProducerLike,
    private readonly inputs: string[],
    output: string,
    total: number,
    json: boolean,
  ) {
    super(output, total, json);
  }

  /** The group gave this member `partitions` of the input. */
  assigned(partitions: number[]): void {
    this.joined(partitions);
  }

  async start(): Promise<void> {
    await this.producer.connect();
    await this.consumer.connect();
    // the KafkaJS layer of librdkafka takes fromBeginning in the consumer's config, and refuses it here
    await this.consumer.subscribe({ topics: this.inputs });
    await this.consumer.run({
      eachBatchAutoResolve: false,
      eachBatch: async ({ batch, resolveOffset, heartbeat, isRunning, isStale }) => {
        // the window is full: wait here (heartbeating, so the group keeps this member)
        while (this.window.unsettled >= UNSETTLED_LIMIT && !this.stopping && isRunning() && !isStale()) {
          await this.window.changed(500);
          await heartbeat();
        }
        if (this.stopping || !isRunning() || isStale() || batch.messages.length === 0) return;
        const last = batch.messages[batch.messages.length - 1].offset;
        this.relay(
          batch.topic,
          batch.partition,
          batch.messages.map((m) => m.value ?? Buffer.alloc(0)),
          Number(last),
        );
        resolveOffset(last);
      },
    });
  }

  protected produce(partition: number, values: Buffer[]): Promise<unknown> {
    return this.producer.send({ topic: this.output, messages: values.map((value) => ({ value, partition })) });
  }

  protected commit(offsets: { topic: string; partition: number; offset: number }[]): Promise<unknown> {
    return this.consumer.commitOffsets(offsets.map((o) => ({ topic: o.topic, partition: o.partition, offset: String(o.offset) })));
  }

  protected async close(): Promise<void> {
    await this.consumer.disconnect();
    await this.producer.disconnect();
  }
}

/** What this bench uses of @confluentinc/kafka-javascript (its types are not in eddy's node_modules). */
interface ConfluentModule {
  CODES: { ERRORS: { ERR__ASSIGN_PARTITIONS: number } };
  KafkaJS: {
    Kafka: new (config: { kafkaJS: { brokers: string[]; clientId: string; logLevel: number } }) => {
      consumer(config: Record<string, unknown>): ConsumerLike;
      producer(config: Record<string, unknown>): ProducerLike;
    };
    logLevel: { NOTHING: number };
  };
}

function confluentClient(broker: string): InstanceType<ConfluentModule['KafkaJS']['Kafka']> {
  const { KafkaJS } = loadConfluent();
  return new KafkaJS.Kafka({ kafkaJS: { brokers: [broker], clientId: 'kcmp-confluent', logLevel: KafkaJS.logLevel.NOTHING } });
}

/** Its KafkaJS layer (the API a move from kafkajs keeps), producing with acks all. */
function confluentRelay(broker: string, group: string, inputs: string[], output: string, total: number, json: boolean): Relay {
  const { CODES } = loadConfluent();
  const kafka = confluentClient(broker);
  // the rebalance callback is part of the consumer's config, made before the relay
  const late: { relay?: KafkaJsApiRelay } = {};
  const consumer = kafka.consumer({
    kafkaJS: { groupId: group, fromBeginning: true, autoCommit: false, sessionTimeout: SESSION_TIMEOUT, heartbeatInterval: 2000, maxWaitTimeInMs: 100 },
    // eachBatch gets what librdkafka fetched for the partition, as kafkajs's does (the layer's default is 32 messages)
    'js.consumer.max.batch.size': -1,
    rebalance_cb: (err: { code: number }, assignment: { topic: string; partition: number }[]) => {
      if (err.code === CODES.ERRORS.ERR__ASSIGN_PARTITIONS) late.relay?.assigned(assignment.filter((a) => a.topic === inputs[0]).map((a) => a.partition));
    },
  });
  const producer = kafka.producer({ kafkaJS: { acks: -1, allowAutoTopicCreation: false } });
  late.relay = new KafkaJsApiRelay(consumer, producer, inputs, output, total, json);
  return late.relay;
}

async function confluentProduce(broker: string, topic: string, total: number, partitions: number): Promise<void> {
  const producer = confluentClient(broker).producer({ kafkaJS: { acks: -1, allowAutoTopicCreation: false } });
  await producer.connect();
  await produceAll(total, partitions, (batch) => producer.send({ topic, messages: batch }));
  await producer.disconnect();
}

// ---------------------------------------------------------------- @platformatic/kafka

/**
 * The best hand relay measured (issue 26): consume, hand what arrived in
 * one turn of the event loop per partition to the producer without
 * waiting, commit on ack. bench/kafka.ts's kafka row runs it as eddy's
 * baseline (with `json`: JSON.parse and JSON.stringify per message).
 */
class PlatformaticRelay extends Relay {
  private readonly consumer: Consumer;
  private readonly producer: Producer;
  private stream: MessagesStream<Buffer, Buffer, Buffer, Buffer> | undefined;
  /** what arrived in this turn of the event loop, per input partition: produced as one request */
  private pending = new Map<string, { topic: string; partition: number; values: Buffer[]; last: number; leaderEpoch: number }>();
  private flushScheduled = false;
  private paused = false;
  /** the input partitions (`topic:partition`) the group gave this member at the last join */
  private assignment = new Set<string>();

  constructor(
    broker: string,
    group: string,
    private readonly inputs: string[],
    output: string,
    total: number,
    json: boolean,
  ) {
    super(output, total, json);
    this.consumer = new Consumer({
      clientId: 'kcmp-platformatic',
      bootstrapBrokers: [broker],
      groupId: group,
      sessionTimeout: SESSION_TIMEOUT,
      heartbeatInterval: 2000,
    });
    this.producer = new Producer({ clientId: 'kcmp-platformatic', bootstrapBrokers: [broker], autocreateTopics: false });
    this.consumer.on('consumer:group:join', (p) => {
      this.assignment = new Set((p.assignments ?? []).flatMap((a) => a.partitions.map((n) => `${a.topic}:${n}`)));
      this.joined(p.assignments?.find((a) => a.topic === this.inputs[0])?.partitions ?? []);
    });
  }

  async start(): Promise<void> {
    const stream = await this.consumer.consume({
      topics: this.inputs,
      mode: 'committed',
      fallbackMode: 'earliest',
      autocommit: false,
      maxWaitTime: 100,
      // with the JSON work, a default fetch (up to 50 MB: half a million messages here, handled in one turn) held the
      // event loop for seconds on a loaded machine: one run wrote more than its input (re-read after a rejoin), then stalled
      ...(this.jsonWork ? { maxBytes: JSON_FETCH_BYTES } : {}),
    });
    this.stream = stream;
    stream.on('data', (m: Message) => this.received(m));
    stream.on('error', (err) => process.stderr.write(`platformatic stream: ${err.message}\n`));
  }

  private received(m: Message): void {
    if (this.stopping) return;
    // buffered before a rejoin, or fetched for a partition this member no longer has (a fetch sent before
    // the rebalance can answer after it, stamped with the new generation): whoever owns it reads it again
    const generation = (m.metadata as { consumer?: { generationId?: number } }).consumer?.generationId;
    const key = `${m.topic}:${m.partition}`;
    if ((generation !== undefined && generation !== this.consumer.generationId) || !this.assignment.has(key)) {
      this.stats.stale++;
      return;
    }
    let p = this.pending.get(key);
    if (!p) this.pending.set(key, (p = { topic: m.topic, partition: m.partition, values: [], last: 0, leaderEpoch: m.leaderEpoch }));
    p.values.push(m.value);
    p.last = Number(m.offset);
    p.leaderEpoch = m.leaderEpoch;
    if (!this.flushScheduled) {
      this.flushScheduled = true;
      setImmediate(() => this.flushPending());
    }
  }

  private flushPending(): void {
    this.flushScheduled = false;
    const pending = this.pending;
    this.pending = new Map();
    if (this.stopping) return;
    for (const p of pending.values()) this.relay(p.topic, p.partition, p.values, p.last, p.leaderEpoch);
    if (this.window.unsettled >= UNSETTLED_LIMIT && !this.paused) {
      this.paused = true;
      this.stream?.pause();
      void this.resumeWhenHalf();
    }
  }

  private async resumeWhenHalf(): Promise<void> {
    while (this.window.unsettled > UNSETTLED_LIMIT / 2 && !this.stopping) await this.window.changed(500);
    this.paused = false;
    if (!this.stopping) this.stream?.resume();
  }

  protected produce(partition: number, values: Buffer[]): Promise<unknown> {
    return this.producer.send({ acks: -1, messages: values.map((value) => ({ topic: this.output, partition, value })) });
  }

  protected commit(offsets: { topic: string; partition: number; offset: number; leaderEpoch: number }[]): Promise<unknown> {
    return this.consumer.commit({ offsets: offsets.map((o) => ({ ...o, offset: BigInt(o.offset) })) });
  }

  protected async close(): Promise<void> {
    this.stream?.pause();
    await this.stream?.close();
    await this.consumer.close();
    await this.producer.close();
  }
}

async function platformaticProduce(broker: string, topic: string, total: number, partitions: number): Promise<void> {
  const producer = new Producer({ clientId: 'kcmp-platformatic', bootstrapBrokers: [broker], autocreateTopics: false });
  await produceAll(total, partitions, (batch) => producer.send({ acks: -1, messages: batch.map(({ value, partition }) => ({ topic, partition, value })) }));
  await producer.close();
}

// ---------------------------------------------------------------- the children

/** Sends of PRODUCE_BATCH messages, PRODUCE_IN_FLIGHT at a time; message i to partition i % partitions. */
async function produceAll(total: number, partitions: number, send: (batch: { value: Buffer; partition: number }[]) => Promise<unknown>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < total) {
      const from = next;
      next = Math.min(total, next + PRODUCE_BATCH);
      const batch = [];
      for (let i = from; i < next; i++) batch.push({ value: message(i), partition: i % partitions });
      await send(batch);
    }
  };
  await Promise.all(Array.from({ length: PRODUCE_IN_FLIGHT }, worker));
}

async function childProduce(client: ClientName, broker: string, topic: string, total: number, partitions: number): Promise<void> {
  const produce = client === 'platformatic' ? platformaticProduce : confluentProduce;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await produce(broker, topic, total, partitions);
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  process.stdout.write(JSON.stringify({ event: 'produced', seconds, cpu_seconds: (cpu.user + cpu.system) / 1e6 }) + '\n');
}

/** A relay child: runs until SIGTERM, then stops gracefully and prints its stats. */
async function childRelay(client: ClientName, broker: string, group: string, inputs: string[], output: string, total: number, json: boolean): Promise<void> {
  const relay =
    client === 'platformatic' ? new PlatformaticRelay(broker, group, inputs, output, total, json) : confluentRelay(broker, group, inputs, output, total, json);
  const stop = new Promise<void>((resolve) => process.once('SIGTERM', () => resolve()));
  await relay.start();
  await stop;
  const stats = await relay.stop();
  process.stdout.write(JSON.stringify(stats) + '\n');
}

// ---------------------------------------------------------------- the parent

export interface Child extends NodeChild {
  /** the JSON lines of its stdout so far */
  lines: () => Record<string, unknown>[];
}

function spawnChild(args: string[]): Child {
  const c = spawnNode([__filename, ...args]);
  const lines = () =>
    c
      .out()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  return { ...c, lines };
}

/**
 * A relay child reading `inputs` into `output` in `group` (SIGTERM stops it
 * gracefully). `total`: when its commits cover that many input messages it
 * prints its own seconds and CPU (`event: relayed`); 0 for never. `json`:
 * JSON.parse and JSON.stringify each message (what eddy's json codec does).
 */
export function startRelay(
  client: ClientName,
  broker: string,
  group: string,
  inputs: string[],
  output: string,
  opts: { total?: number; json?: boolean } = {},
): Running & { c: Child } {
  const c = spawnChild(['relay', client, broker, group, inputs.join(','), output, String(opts.total ?? 0), opts.json ? 'json' : 'bytes']);
  return {
    c,
    children: [c.child],
    async stop() {
      if (c.child.exitCode === null && c.child.signalCode === null) c.child.kill('SIGTERM');
      await bounded('relay stop', c.exited, 30000).catch(() => c.child.kill('SIGKILL'));
    },
  };
}

interface StageResult {
  events_per_second: number;
  cpu_s_per_million?: number;
}

interface RebalanceResult {
  mode: 'leave' | 'crash';
  total: number;
  output: number;
  lost: number;
  duplicates: number;
  /** partitions the surviving member held at the end */
  survivor_partitions: number;
  survivor_joins: number;
  /** input partitions of the duplicated messages (message i went to partition i % partitions), and their seq range */
  duplicated_partitions: number[];
  duplicated_seqs?: [number, number];
  /** the relays' own counts (RelayStats): the one that left (none after a crash) and the survivor */
  leaver?: Record<string, unknown>;
  survivor?: Record<string, unknown>;
  seconds: number;
  error?: string;
}

interface ClientRow {
  client: string;
  skipped?: string;
  produce: StageResult[];
  relay: StageResult[];
  rebalance: RebalanceResult[];
  size?: { packages: number; bytes: number };
}

class Bench extends KafkaBench {
  constructor(
    broker: string,
    readonly total: number,
    partitions: number,
    run: string,
  ) {
    super(broker, partitions, run);
  }

  /** produce stage: a child of `client` fills a fresh topic with `total` messages. */
  async produce(client: ClientName, total = this.total): Promise<{ topic: string; result: StageResult }> {
    const topic = await this.topic(`${client}-in`);
    const c = spawnChild(['produce', client, this.broker, topic, String(total), String(this.partitions)]);
    const code = await bounded(`${client} produce`, c.exited, 300000).catch((err: unknown) => {
      c.child.kill('SIGKILL');
      throw err;
    });
    const line = c.lines().find((l) => l.event === 'produced') as { seconds: number; cpu_seconds: number } | undefined;
    if (code !== 0 || !line) throw new Error(`${client} produce: exit ${code}`);
    const end = await this.endOffsets(topic);
    if (end !== total) throw new Error(`${client} produce: ${end} of ${total} messages in ${topic}`);
    return { topic, result: { events_per_second: total / line.seconds, cpu_s_per_million: (line.cpu_seconds / total) * 1e6 } };
  }

  /** relay stage of a client: its child measures itself from the first message to the commit covering the last (process.cpuUsage). */
  async relayClient(client: ClientName, input: string): Promise<StageResult> {
    const output = await this.topic(`${client}-out`);
    const side = startRelay(client, this.broker, this.group(client), [input], output, { total: this.total });
    try {
      const relayed = () => side.c.lines().find((l) => l.event === 'relayed') as { seconds: number; cpu_seconds: number } | undefined;
      let exited = false;
      void side.c.exited.then(() => (exited = true));
      await until(`${client} relay: every message relayed and committed`, 300000, () => {
        if (exited && !relayed()) throw new Error(`${client} relay: the child exited before the end`);
        return relayed() !== undefined;
      });
      const line = relayed()!;
      const written = await this.endOffsets(output);
      if (written !== this.total) throw new Error(`${client} relay: ${written} messages in ${output}, not ${this.total}`);
      return { events_per_second: this.total / line.seconds, cpu_s_per_million: (line.cpu_seconds / this.total) * 1e6 };
    } finally {
      await side.stop();
    }
  }

  /**
   * relay stage of eddy (a process this bench cannot look into): from the
   * first message in the output to the group's commits covering the input,
   * polled every 50 ms; the CPU from /proc over the same span.
   */
  async relayEddy(dir: string, input: string): Promise<StageResult> {
    const output = await this.topic('eddy-out');
    const group = this.group('eddy');
    const side = startEddy(dir, 1, this.broker, group, [input], output);
    const pid = side.children[0].pid;
    try {
      let start: { t: number; cpu: number } | undefined;
      const deadline = Date.now() + 300000;
      for (;;) {
        if (side.children[0].exitCode !== null) throw new Error('eddy relay: eddy exited before the end');
        if (Date.now() > deadline) throw new Error('eddy relay: not done after 300 s');
        if (!start && (await this.endOffsets(output)) > 0) start = { t: performance.now(), cpu: cpuSeconds(pid) ?? NaN };
        if (start && (await this.committed(group, input)) >= this.total) {
          const seconds = (performance.now() - start.t) / 1000;
          const cpu = (cpuSeconds(pid) ?? NaN) - start.cpu;
          return { events_per_second: this.total / seconds, cpu_s_per_million: Number.isFinite(cpu) ? (cpu / this.total) * 1e6 : undefined };
        }
        await sleep(50);
      }
    } finally {
      await side.stop();
    }
  }

  /**
   * Two members in one group (two relay children of `who`, or two `eddy
   * server run` processes); the input is produced over `secs` seconds while
   * they run, and when a third of it is relayed one leaves (SIGTERM) or dies
   * (SIGKILL); the other must take all the partitions and relay the rest.
   * Then every seq is counted in the output.
   */
  async rebalance(who: ClientName | 'eddy', mode: 'leave' | 'crash', total: number, secs: number, dir: string): Promise<RebalanceResult> {
    const t0 = performance.now();
    const input = await this.topic(`${who}-rb-${mode}-in`);
    const output = await this.topic(`${who}-rb-${mode}-out`);
    const group = this.group(`${who}-rb-${mode}`);
    let members: { child: NodeChild['child']; exited: Promise<unknown> }[];
    let relays: (Running & { c: Child })[] = [];
    let eddy: (Running & { procs: NodeChild[] }) | undefined;
    // the partitions each member holds: a relay says so at each join; eddy's are read from the group (stable only)
    let held: () => Promise<number[]>;
    if (who === 'eddy') {
      eddy = startEddy(dir, 2, this.broker, group, [input], output);
      members = eddy.procs;
      held = async () => {
        const all = await this.members(group, input);
        return all.length === 0 ? [] : all;
      };
    } else {
      relays = [startRelay(who, this.broker, group, [input], output), startRelay(who, this.broker, group, [input], output)];
      members = relays.map((r) => r.c);
      const assigned = (c: Child) =>
        (
          c
            .lines()
            .filter((l) => l.event === 'joined')
            .pop() as { partitions: number[] } | undefined
        )?.partitions.length ?? 0;
      held = () => Promise.resolve(relays.filter((r) => r.c.child.exitCode === null && r.c.child.signalCode === null).map((r) => assigned(r.c)));
    }
    const result: RebalanceResult = {
      mode,
      total,
      output: 0,
      lost: 0,
      duplicates: 0,
      survivor_partitions: 0,
      survivor_joins: 0,
      duplicated_partitions: [],
      seconds: 0,
    };
    const same = (xs: number[], ys: number[]) => xs.length === ys.length && xs.every((x, i) => x === ys[i]);
    let filling: Promise<void> | undefined;
    try {
      // both in the group, sharing the partitions, before there is anything to read
      const half = this.partitions / 2;
      await until(`${who} rebalance: both members joined with ${half} partitions each`, 60000, async () => same(await held(), [half, half]));
      filling = this.fill(input, total, secs);
      filling.catch(() => undefined);
      await until(`${who} rebalance: a third of the output`, 120000, async () => (await this.endOffsets(output)) >= total / 3);
      members[0].child.kill(mode === 'leave' ? 'SIGTERM' : 'SIGKILL');
      await bounded(`${who} rebalance: the leaving member's exit`, members[0].exited, 30000);
      await until(`${who} rebalance: the other member taking all ${this.partitions} partitions`, 60000, async () => same(await held(), [this.partitions]));
      await bounded(`${who} rebalance: producing the input`, filling, 120000);
      await until(`${who} rebalance: commits reaching the end of the input`, 120000, async () => (await this.committed(group, input)) >= total);
      result.survivor_partitions = (await held())[0] ?? 0;
      if (relays.length > 0) result.survivor_joins = relays[1].c.lines().filter((l) => l.event === 'joined').length;
      const counts = await this.readBack(output, total);
      const dupPartitions = new Set<number>();
      counts.forEach((n, seq) => {
        if (n === 0) result.lost++;
        else result.duplicates += n - 1;
        result.output += n;
        if (n > 1) {
          dupPartitions.add(seq % this.partitions);
          result.duplicated_seqs = [result.duplicated_seqs?.[0] ?? seq, seq];
        }
      });
      result.duplicated_partitions = [...dupPartitions].sort();
    } catch (err) {
      result.error = (err as Error).message;
    } finally {
      await filling?.catch(() => undefined);
      for (const r of relays) await r.stop();
      await eddy?.stop();
    }
    if (relays.length > 0) {
      result.leaver = relays[0].c.lines().find((l) => l.event === 'stats');
      result.survivor = relays[1].c.lines().find((l) => l.event === 'stats');
    }
    result.seconds = (performance.now() - t0) / 1000;
    return result;
  }

  /** How often each seq is in the topic (the count saturates at 255); read from the start by a consumer of a group of its own. */
  private async readBack(topic: string, total: number): Promise<Uint8Array> {
    const counts = new Uint8Array(total);
    const end = await this.endOffsets(topic);
    const consumer = new Consumer({ clientId: 'kcmp-readback', bootstrapBrokers: [this.broker], groupId: this.group('readback') });
    let read = 0;
    try {
      const stream = await consumer.consume({ topics: [topic], mode: 'earliest', autocommit: false, maxWaitTime: 100 });
      stream.on('data', (m: Message) => {
        const seq = (JSON.parse(m.value.toString('utf8')) as { seq: number }).seq;
        if (counts[seq] < 255) counts[seq]++;
        read++;
      });
      await until(`reading back ${topic}`, 60000, () => read >= end);
      await stream.close();
    } finally {
      await consumer.close(true);
    }
    return counts;
  }
}

// ---------------------------------------------------------------- install size

/** A package's directory as Node resolves it from `from` (node_modules up the tree). */
function packageDir(name: string, from: string): string | undefined {
  for (let dir = from; ; dir = dirname(dir)) {
    const candidate = join(dir, 'node_modules', name);
    if (existsSync(join(candidate, 'package.json'))) return candidate;
    if (dirname(dir) === dir) return undefined;
  }
}

/** Apparent bytes of a directory (files and directories, as `du -s --apparent-size`), leaving out its node_modules. */
function apparentBytes(dir: string, top = true): number {
  let bytes = lstatSync(dir).size;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (top && entry.name === 'node_modules') continue;
    const path = join(dir, entry.name);
    bytes += entry.isDirectory() ? apparentBytes(path, false) : lstatSync(path).size;
  }
  return bytes;
}

/** The installed dependency closure of `name` (dependencies and the optional ones present): package count and apparent bytes. */
export function installSize(name: string, from: string): { packages: number; bytes: number } | undefined {
  const root = packageDir(name, from);
  if (!root) return undefined;
  const seen = new Set<string>();
  const walk = (dir: string) => {
    if (seen.has(dir)) return;
    seen.add(dir);
    const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { dependencies?: object; optionalDependencies?: object };
    for (const dep of Object.keys({ ...pkg.dependencies, ...pkg.optionalDependencies })) {
      const found = packageDir(dep, dir);
      if (found) walk(found);
    }
  };
  walk(root);
  let bytes = 0;
  for (const dir of seen) bytes += apparentBytes(dir);
  return { packages: seen.size, bytes };
}

// ---------------------------------------------------------------- main

export async function main(): Promise<ClientRow[]> {
  const broker = brokerAddress();
  const total = Math.round(envNumber('BENCH_KAFKA_EVENTS', 200000, 1000));
  const partitions = Math.round(envNumber('BENCH_KAFKA_PARTITIONS', 4, 2));
  const rounds = Math.round(envNumber('BENCH_KAFKA_ROUNDS', 1, 1));
  const rebalanceEvents = Math.round(envNumber('BENCH_KAFKA_REBALANCE_EVENTS', 60000, 0));
  const rebalanceSecs = envNumber('BENCH_KAFKA_REBALANCE_SECS', 10, 1);
  const rebalanceRounds = Math.round(envNumber('BENCH_KAFKA_REBALANCE_ROUNDS', 1, 1));
  const args = process.argv.slice(2);
  const wanted = args.length > 0 ? args : [...CLIENTS, 'eddy'];
  for (const w of wanted) if (w !== 'eddy' && !CLIENTS.includes(w as ClientName)) throw new Error(`unknown client ${w}: ${CLIENTS.join(', ')}, eddy`);
  const loads: string[] = [];
  const note = (what: string) => loads.push(`${what} ${loadavg()[0].toFixed(1)}`);
  process.stderr.write(
    `kafka clients: ${total} messages of ~100 bytes, ${partitions} partitions, ${rounds} round(s), broker ${broker}\n` +
      `node ${process.version}, ${cpus().length} CPUs, load average ${loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}\n`,
  );

  const rows = new Map<string, ClientRow>();
  const available: ClientName[] = [];
  for (const name of wanted.filter((w): w is ClientName => CLIENTS.includes(w as ClientName))) {
    const spec = SPECS[name];
    const row: ClientRow = { client: `${spec.package} ${spec.version}`, produce: [], relay: [], rebalance: [] };
    rows.set(name, row);
    const dir = locate(name);
    if (dir === undefined) {
      row.skipped = `not installed: \`npm install --no-save ${spec.package}@${spec.version}\` (${spec.how})`;
      process.stderr.write(`${name}: skipped, ${row.skipped}\n`);
      continue;
    }
    if (dir !== REPO) row.client += ` (from ${dir})`;
    row.size = installSize(spec.package, dir);
    available.push(name);
  }
  if (wanted.includes('eddy'))
    rows.set('eddy', { client: `eddy (${eddyKafkaClient()}): kafka -> passthrough -> kafka`, produce: [], relay: [], rebalance: [] });

  const run = `kcmp-${process.pid}-${Date.now().toString(36)}`;
  const bench = new Bench(broker, total, partitions, run);
  const dir = mkdtempSync(join(tmpdir(), 'eddy-kafka-clients-'));
  try {
    // the order given on the command line (rotated by round), so runs can alternate
    const order = wanted.filter((w) => w === 'eddy' || available.includes(w as ClientName));
    for (let round = 0; round < rounds; round++) {
      const turn = order.map((_, i) => order[(i + round) % order.length]);
      let eddyInput: string | undefined;
      for (const name of turn) {
        const row = rows.get(name)!;
        if (name === 'eddy') {
          eddyInput ??= (await bench.produce('platformatic')).topic;
          note(`round ${round + 1} eddy:`);
          const r = await bench.relayEddy(dir, eddyInput);
          row.relay.push(r);
          process.stderr.write(`round ${round + 1} eddy: relay ${Math.round(r.events_per_second)} ev/s\n`);
          continue;
        }
        const client = name as ClientName;
        note(`round ${round + 1} ${client}:`);
        const p = await bench.produce(client);
        row.produce.push(p.result);
        eddyInput ??= client === 'platformatic' ? p.topic : undefined;
        const r = await bench.relayClient(client, p.topic);
        row.relay.push(r);
        process.stderr.write(
          `round ${round + 1} ${client}: produce ${Math.round(p.result.events_per_second)} ev/s, relay ${Math.round(r.events_per_second)} ev/s\n`,
        );
      }
    }
    if (rebalanceEvents > 0) {
      // rounds of every member kind, leave then crash each: 3 rounds = the 18 checks of three kinds, or 6 per kind
      const kinds = [...available, ...(wanted.includes('eddy') ? (['eddy'] as const) : [])];
      for (let round = 0; round < rebalanceRounds; round++) {
        for (const who of kinds.map((_, i) => kinds[(i + round) % kinds.length])) {
          for (const mode of ['leave', 'crash'] as const) {
            note(`rebalance ${who} ${mode}:`);
            const r = await bench.rebalance(who, mode, rebalanceEvents, rebalanceSecs, dir);
            rows.get(who)!.rebalance.push(r);
            process.stderr.write(`rebalance ${who} ${mode}: ${r.error ?? `lost ${r.lost}, duplicates ${r.duplicates}`}\n`);
          }
        }
      }
    }
  } finally {
    await bench.cleanup();
    rmSync(dir, { recursive: true, force: true });
  }
  const out = [...rows.values()];
  process.stdout.write(table(out) + `\nload average (1 min) at each stage: ${loads.join(', ')}\n`);
  if (process.env.BENCH_JSON) writeFileSync(process.env.BENCH_JSON, JSON.stringify({ total, partitions, loads, rows: out }, null, 2) + '\n');
  return out;
}

/** Which client this build's kafka connector is on (the package its onramp loads), for the eddy row's name. */
export function eddyKafkaClient(): string {
  try {
    // the connector loads its client lazily, by name: requirePackage<...>('<package>', ...)
    const source = readFileSync(join(REPO, 'src', 'connectors', 'kafka', 'onramp.ts'), 'utf8');
    const named = /requirePackage<[^>]*>\(\s*'([^']+)'/.exec(source)?.[1];
    if (named) return named;
  } catch {
    // a build without the sources
  }
  return 'its kafka connector';
}

export function table(rows: ClientRow[]): string {
  const int = (n: number) => Math.round(n).toLocaleString('en-US');
  const list = (xs: (number | undefined)[], f: (n: number) => string) => (xs.length === 0 ? '-' : xs.map((x) => (x === undefined ? '-' : f(x))).join(' / '));
  /** events/s and CPU-s per million of a stage, each run's figure side by side */
  const stage = (runs: StageResult[]) => [
    list(
      runs.map((x) => x.events_per_second),
      int,
    ),
    list(
      runs.map((x) => x.cpu_s_per_million),
      (n) => n.toFixed(1),
    ),
  ];
  const lines = [
    '| client | relay ev/s | relay CPU-s per M | produce ev/s | produce CPU-s per M | rebalance: leave | rebalance: crash | installed |',
    '|---|---|---|---|---|---|---|---|',
  ];
  for (const r of rows) {
    if (r.skipped) {
      lines.push(`| ${r.client} | skipped: ${r.skipped} | | | | | | |`);
      continue;
    }
    const rb = (mode: 'leave' | 'crash') => {
      const xs = r.rebalance.filter((b) => b.mode === mode);
      if (xs.length === 0) return '-';
      // the same outcome of several rounds once, with how often
      const seen = new Map<string, number>();
      for (const x of xs) {
        const what = x.error ? `failed: ${x.error}` : `lost ${x.lost}, dup ${x.duplicates} (survivor: ${x.survivor_partitions} partitions)`;
        seen.set(what, (seen.get(what) ?? 0) + 1);
      }
      return [...seen].map(([what, n]) => (n > 1 ? `${what} x${n}` : what)).join('; ');
    };
    lines.push(
      [
        '',
        r.client,
        ...stage(r.relay),
        ...stage(r.produce),
        rb('leave'),
        rb('crash'),
        r.size ? `${r.size.packages} package${r.size.packages === 1 ? '' : 's'}, ${(r.size.bytes / 1048576).toFixed(1)} MB` : '-',
        '',
      ]
        .join(' | ')
        .trim(),
    );
  }
  return lines.join('\n');
}

if (require.main === module) {
  const [role, ...args] = process.argv.slice(2);
  const fail = (err: Error) => {
    process.stderr.write(`kafka-clients ${role ?? ''}: ${err.stack ?? err.message}\n`);
    process.exit(1);
  };
  if (role === 'produce') childProduce(args[0] as ClientName, args[1], args[2], Number(args[3]), Number(args[4])).then(() => process.exit(0), fail);
  else if (role === 'relay')
    childRelay(args[0] as ClientName, args[1], args[2], args[3].split(','), args[4], Number(args[5] ?? 0), args[6] === 'json').then(
      () => process.exit(0),
      fail,
    );
  else main().then(() => process.exit(0), fail);
}
