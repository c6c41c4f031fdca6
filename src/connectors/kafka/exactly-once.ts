/**
 * The kafka onramp with `guarantee: exactly_once` (docs/design-exactly-once.md):
 * what the flow made of its messages (the kafka offramps' records, the
 * stateful nodes' changelog records) and the consumed offsets are committed
 * in one Kafka transaction per `commit_interval`.
 *
 * The source runs in phases. `running`: messages are handed over; the
 * stateful nodes take them into their state and ack them, the offramps
 * hand their records here and ack them. `committing` (each interval): no
 * message is handed over (the stream is paused, what it still delivers is
 * held) until every event handed over is settled, then one transaction.
 * `restoring` (at the start, after a rebalance, after anything failed):
 * the state downstream is dropped and read back from the changelogs for
 * the partitions this member holds, and a fresh stream reads from the
 * committed offsets, read with requireStable so a partition's new owner
 * never starts behind a transaction still being committed.
 *
 * Every phase change runs in one queue (`serial`), so a rebalance in the
 * middle of a commit waits for it (whose offsets the broker then refuses
 * for the old generation: it aborts, and the restore that follows reads
 * the state the last committed transaction left).
 */
import { hostname } from 'node:os';
import { BehaviorSubject, Observable, Subject, distinctUntilChanged, type Subscriber } from '../../core/rx';
import type { Admin, Consumer, GroupAssignment, Message, MessagesStream } from '@platformatic/kafka';
import type { Downstream, Frame, OnrampContext, OnrampSource, SourceInputs, TransactionalSink } from '../connector';
import { ChangelogStore, changelogRecords, changelogTopic } from './changelog';
import { baseOptions, platformatic, rootMessage, type KafkaSettings } from './options';
import { KafkaTransactions, type ConsumedOffset, type Record_ } from './transactions';
import { kafkaMeta, reachTopics } from './consumer-common';
import { GroupRejoin } from './rejoin';

/** What the exactly-once source reads of the onramp's config (onramp.ts checked it). */
export interface ExactlyOnceConfig {
  readonly group_id: string;
  readonly topics: string[];
  readonly brokers: string[];
  /** poll_interval, in ms */
  readonly poll_interval: number;
  /** commit_interval, in ms */
  readonly commitIntervalMs: number;
}

const { Consumer: ConsumerClass, Admin: AdminClass } = platformatic('the kafka onramp (guarantee: exactly_once)');

type KafkaMessage = Message;
type Stream = MessagesStream<Buffer, Buffer, Buffer, Buffer>;

/** How long a commit waits for the events handed over to settle before it says so in the log (it goes on waiting). */
const SETTLE_WARNING_MS = 30_000;
const EMPTY = Buffer.alloc(0);

type Phase = 'starting' | 'restoring' | 'running' | 'committing' | 'closed';

export class ExactlyOnceSource implements OnrampSource {
  readonly frames: Observable<Frame>;
  readonly transactional = true;
  private readonly released = new Subject<string[]>();
  readonly partitionsReleased = this.released.asObservable();
  /** false outside `running` (a restore, a commit): the stateful nodes' idle clocks stand still meanwhile */
  private readonly readingNow = new BehaviorSubject<boolean>(false);
  readonly readingChanges = this.readingNow.pipe(distinctUntilChanged());

  private readonly consumer: Consumer;
  private readonly rejoin: GroupRejoin;
  private readonly admin: Admin;
  private readonly store: ChangelogStore;
  private readonly transactions: KafkaTransactions;
  private readonly group: string;
  private downstream: Downstream = { stateful: [], sinks: [] };
  private subscriber: Subscriber<Frame> | undefined;
  private stream: Stream | undefined;
  private phase: Phase = 'starting';
  private gated = false;
  /** every phase change, one after another */
  private serial: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;
  /** the flow's output records since the last commit (the offramps joined to this source) */
  private writes: Record_[] = [];
  /** events handed over and not settled, by seq */
  private readonly pending = new Set<number>();
  private settledWaiter: (() => void) | undefined;
  /** why an event failed since the last commit: the interval's work is aborted and done again */
  private failure: string | undefined;
  /** per partition, the last message handed over since the last commit, with the generation it was fetched in */
  private readonly progress = new Map<string, ConsumedOffset>();
  /** messages the stream delivered during a commit: handed over after it */
  private held: KafkaMessage[] = [];
  /** `topic/partition` per (topic, partition), built once */
  private readonly names = new Map<string, string[]>();
  /** the partitions assigned at the last join */
  private assignment: GroupAssignment[] = [];
  private readonly originPrefix: string;

  constructor(
    private readonly config: ExactlyOnceConfig,
    private readonly settings: KafkaSettings,
    private readonly brokers: string[],
    private readonly ctx: OnrampContext,
    private readonly who: string,
  ) {
    const c = settings.consumer;
    this.group = c.groupId ?? config.group_id;
    this.originPrefix = `svc-kafka://${config.brokers[0].trim()}/`;
    const base = baseOptions(settings, brokers, hostname());
    this.consumer = new ConsumerClass({
      ...base,
      groupId: this.group,
      sessionTimeout: c.sessionTimeout,
      heartbeatInterval: c.heartbeatInterval ?? Math.min(3000, Math.floor(c.sessionTimeout / 3)),
      rebalanceTimeout: c.rebalanceTimeout ?? Math.max(60000, c.sessionTimeout),
    });
    this.admin = new AdminClass(base);
    this.store = new ChangelogStore(settings, brokers, hostname(), ctx.logger);
    this.transactions = new KafkaTransactions(settings, brokers, hostname(), this.group, this.transactionTimeout(), ctx.logger, who);
    this.consumer.on('consumer:group:join', (payload) => this.joined(payload.assignments ?? []));
    this.rejoin = new GroupRejoin(
      this.consumer,
      ctx.logger,
      who,
      () => this.phase !== 'closed' && this.subscriber !== undefined,
      (err) => {
        this.enter('closed');
        this.subscriber?.error(new Error(`${this.who}: cannot rejoin the group: ${rootMessage(err)}`));
      },
    );
    this.frames = new Observable<Frame>((subscriber) => {
      this.subscriber = subscriber;
      this.queue('start', () => this.start());
      return () => {
        this.subscriber = undefined;
        this.queue('stop', () => this.stop());
      };
    });
  }

  /**
   * Takes what its events reach: every sink must write to this cluster and
   * joins the transactions; every stateful node's changelog topics exist.
   */
  async attachDownstream(downstream: Downstream): Promise<void> {
    const cluster = (await this.consumer.metadata({ topics: this.config.topics })).id;
    const joining: TransactionalSink[] = [];
    for (const { url, type, sink } of downstream.sinks) {
      if (!sink.transactional) throw new Error(`${this.who} (guarantee: exactly_once): ${url}, a ${type} offramp, cannot take part in its transactions`);
      joining.push(sink.transactional);
      const theirs = await sink.transactional.cluster();
      if (theirs !== cluster) {
        throw new Error(
          `${this.who} (guarantee: exactly_once): ${url} writes to another Kafka cluster (${theirs}, not ${cluster}): a transaction spans one cluster`,
        );
      }
    }
    await this.store.ensure(
      downstream.stateful.flatMap(({ pipeline, node }) =>
        this.config.topics.map((source) => ({ changelog: changelogTopic(this.group, pipeline, node, source), source })),
      ),
    );
    for (const transactional of joining) transactional.join((record) => void this.writes.push(record as Record_));
    // an event in a window (or a reduction) is done once there: that state is committed with the offsets
    for (const { state } of downstream.stateful) state.savedWithSources?.();
    this.downstream = downstream;
  }

  /** Reaches the brokers and learns the topics: what must work for the activation to succeed. */
  async open(): Promise<void> {
    await reachTopics(this.consumer, this.config.topics, this.config.brokers, () => this.phase === 'closed');
  }

  pause(): void {
    this.gated = true;
    this.applyPause();
  }

  resume(): void {
    this.gated = false;
    this.applyPause();
  }

  inputs(): SourceInputs {
    return { open: 1, reading: this.stream !== undefined && this.phase === 'running' && !this.gated ? 1 : 0 };
  }

  onEvent(id: { seq: number }): void {
    this.pending.add(id.seq);
  }

  onAck(id: { seq: number }): void {
    if (this.pending.delete(id.seq) && this.pending.size === 0) this.settledWaiter?.();
  }

  onFail(id: { seq: number }, insight: { meta?: Record<string, unknown> }): void {
    if (!this.pending.delete(id.seq)) return;
    this.failure ??= typeof insight.meta?.error === 'string' ? insight.meta.error : 'an event failed';
    if (this.pending.size === 0) this.settledWaiter?.();
  }

  async close(): Promise<void> {
    this.queue('close', async (): Promise<void> => {
      this.enter('closed');
      clearInterval(this.timer);
      this.rejoin.stop();
      this.retire();
      await this.consumer.close(true).catch((err: unknown) => this.ctx.logger.debug(`${this.who}: close: ${rootMessage(err)}`));
      await this.admin.close().catch(() => undefined);
      await this.store.close();
      await this.transactions.close();
    });
    await this.serial;
  }

  /** Joins the group: the join (joined) restores and opens the stream that counts. */
  private async start(): Promise<void> {
    if (this.phase === 'closed' || !this.subscriber) return;
    this.enter('starting');
    // a stream joins the group; what it reads before the join's restore is dropped (read again after it)
    await this.openStream([]);
    this.timer ??= setInterval(() => this.queue('commit', () => this.commit()), this.config.commitIntervalMs).unref();
  }

  /** The last commit of what settled, then out of the group. */
  private async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    if (this.phase === 'running') await this.commit();
    this.retire();
    // forced: a stream still closing is closed with it, rather than refusing to leave
    await new Promise<void>((resolve) =>
      this.consumer.leaveGroup(true, (err) => {
        if (err) this.ctx.logger.debug(`${this.who}: leaving the group: ${rootMessage(err)}`);
        resolve();
      }),
    );
  }

  /** A (re)join: partitions gone are released downstream; all the state is read back for those held. */
  private joined(assignments: GroupAssignment[]): void {
    const before = new Set(this.partitionNames(this.assignment));
    const now = new Set(this.partitionNames(assignments));
    this.assignment = assignments;
    const gone = [...before].filter((p) => !now.has(p));
    if (gone.length > 0) this.released.next(gone);
    const parts = assignments.map((a) => `${a.topic} [${a.partitions.join(', ')}]`);
    this.ctx.logger.info(`${this.who}: joined the group; assigned ${parts.join(', ') || 'nothing'}`);
    // nothing of the old generation is committed any more: its transaction would be refused; state and offsets come back
    this.queue('rebalance', () => this.restore('the group was rejoined'));
  }

  /** One commit interval's transaction. */
  private async commit(): Promise<void> {
    if (this.phase !== 'running') return;
    this.enter('committing');
    this.stream?.pause();
    await this.settled();
    if (this.failure !== undefined) return this.restore(`an event failed (${this.failure}); the interval is done again`);
    const records = this.writes;
    this.writes = [];
    for (const { pipeline, node, state } of this.downstream.stateful) {
      for (const [partition, changes] of state.takeChanges()) {
        const [topic, number] = splitPartition(partition);
        records.push(...changelogRecords(changelogTopic(this.group, pipeline, node, topic), number, changes));
      }
    }
    const offsets = [...this.progress.values()];
    this.progress.clear();
    try {
      await this.transactions.commit(records, offsets, this.consumer);
    } catch (err) {
      return this.restore((err as Error).message);
    }
    this.enter('running');
    const held = this.held;
    this.held = [];
    for (const m of held) this.handOver(m);
    this.applyPause();
  }

  /** Until every event handed over is settled; logs (and goes on waiting) when that takes long. */
  private async settled(): Promise<void> {
    if (this.pending.size === 0) return;
    const warn = setInterval(
      () => this.ctx.logger.warn(`${this.who}: the commit waits for ${this.pending.size} events to be acked or failed (an operator holding them?)`),
      SETTLE_WARNING_MS,
    );
    await new Promise<void>((resolve) => (this.settledWaiter = resolve));
    this.settledWaiter = undefined;
    clearInterval(warn);
  }

  /**
   * Drops everything since the last commit (its transaction never
   * happened), reads the state of the held partitions back from the
   * changelogs, and reads on from the committed offsets.
   */
  private async restore(why: string): Promise<void> {
    if (this.phase === 'closed' || !this.subscriber) return;
    this.enter('restoring');
    // nothing more from the current stream; it is closed once the next one is open (closing a consumer's last stream
    // would make it leave the group, and its rejoin would come back here)
    this.stream?.removeAllListeners('data');
    this.stream?.pause();
    this.ctx.logger.info(`${this.who}: ${why}: state and offsets from the last commit`);
    this.writes = [];
    this.held = [];
    this.pending.clear();
    this.failure = undefined;
    this.progress.clear();
    for (const { state } of this.downstream.stateful) for (const p of state.partitions()) state.release(p);
    const began = Date.now();
    try {
      for (const { topic, partitions } of this.assignment) {
        for (const partition of partitions) {
          for (const { pipeline, node, state } of this.downstream.stateful) {
            const entries = await this.store.restore(changelogTopic(this.group, pipeline, node, topic), partition);
            if (entries.size > 0) state.restore(`${topic}/${partition}`, entries);
          }
        }
      }
      await this.openStream(await this.committedOffsets());
      // a restore waits behind an open transaction of a member that died (up to its timeout): worth seeing in the log
      this.ctx.logger.info(`${this.who}: restored the state of ${this.assignmentText()} in ${Date.now() - began} ms; reading`);
    } catch (err) {
      // the flow cannot go on without its state: it stops, saying why (never silently at least once)
      this.enter('closed');
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- checked before the awaits above; it may have unsubscribed meanwhile
      this.subscriber?.error(new Error(`${this.who}: cannot restore the state of ${this.assignmentText()}: ${rootMessage(err)}`));
      return;
    }
    this.enter('running');
    this.applyPause();
  }

  /** The group's committed offsets of the assigned partitions, stable: none still pending in a transaction. */
  private async committedOffsets(): Promise<{ topic: string; partition: number; offset: bigint }[]> {
    if (this.assignment.length === 0) return [];
    // an answer without the group: undefined
    const group = (
      await this.admin.listConsumerGroupOffsets({
        groups: [{ groupId: this.group, topics: this.assignment.map((a) => ({ name: a.topic, partitionIndexes: a.partitions })) }],
        requireStable: true,
      })
    ).at(0);
    return (group?.topics ?? []).flatMap((t) =>
      t.partitions.filter((p) => p.committedOffset >= 0n).map((p) => ({ topic: t.name, partition: p.partitionIndex, offset: p.committedOffset })),
    );
  }

  /** A fresh stream from `offsets` (the others from auto.offset.reset); the old one goes once it is open. */
  private async openStream(offsets: { topic: string; partition: number; offset: bigint }[]): Promise<void> {
    const c = this.settings.consumer;
    const stream = await this.consumer.consume({
      topics: this.config.topics,
      mode: 'manual',
      offsets,
      fallbackMode: c.fromBeginning ? 'earliest' : 'latest',
      autocommit: false,
      maxWaitTime: c.maxWaitTime ?? this.config.poll_interval,
      minBytes: c.minBytes,
      maxBytes: c.maxBytes,
      maxBytesPerPartition: c.maxBytesPerPartition,
      isolationLevel: 1,
    });
    const old = this.stream;
    this.stream = stream;
    stream.on('data', (m: KafkaMessage) => this.received(m, stream));
    stream.on('error', (err: Error) => {
      if (stream === this.stream) this.queue('stream failure', () => this.restore(`the fetch stream failed (${rootMessage(err)})`));
    });
    if (old) this.close_(old);
  }

  private received(m: KafkaMessage, stream: Stream): void {
    if (stream !== this.stream || !this.subscriber) return;
    if (this.phase === 'committing') this.held.push(m);
    else if (this.phase === 'running') this.handOver(m);
    // starting or restoring: the stream that follows the restore reads it again
  }

  private handOver(m: KafkaMessage): void {
    // unsubscribed while a commit held it: neither handed over nor counted in the offsets to commit
    const subscriber = this.subscriber;
    if (!subscriber) return;
    const name = this.partitionName(m.topic, m.partition);
    const consumer = (m.metadata as { consumer?: ConsumedOffset['consumer'] } | undefined)?.consumer;
    if (consumer) {
      // one entry per partition and interval, moved on by each message (the map is emptied at each commit)
      const entry = this.progress.get(name);
      if (entry === undefined) this.progress.set(name, { topic: m.topic, partition: m.partition, offset: m.offset, consumer });
      else {
        entry.offset = m.offset;
        entry.consumer = consumer;
      }
    }
    const offset = Number(m.offset);
    // a tombstone's value is null, whatever the client's type says
    const data = (m.value as Buffer | null) ?? EMPTY;
    subscriber.next({
      stream: name,
      partition: name,
      data,
      originUri: `${this.originPrefix}${name}/${offset}`,
      meta: { kafka: kafkaMeta(m, offset) },
    });
  }

  private applyPause(): void {
    const stream = this.stream;
    if (!stream) return;
    if (this.gated || this.phase !== 'running') stream.pause();
    else if (stream.isPaused()) stream.resume();
  }

  private enter(phase: Phase): void {
    this.phase = phase;
    this.readingNow.next(phase === 'running');
  }

  /** Stops reading the current stream and closes it. */
  private retire(): void {
    const stream = this.stream;
    this.stream = undefined;
    if (stream) this.close_(stream);
  }

  private close_(stream: Stream): void {
    stream.removeAllListeners('data');
    stream.removeAllListeners('error');
    stream.on('error', () => undefined);
    stream.close((err) => {
      if (err) this.ctx.logger.debug(`${this.who}: closing a stream: ${rootMessage(err)}`);
    });
  }

  /** Runs `work` after every phase change queued before it; a failure is logged, the queue goes on. */
  private queue(what: string, work: () => Promise<void>): void {
    this.serial = this.serial.then(work).catch((err: unknown) => {
      this.ctx.logger.warn(`${this.who}: ${what}: ${rootMessage(err)}`);
      if (what !== 'close' && what !== 'stop') this.queue('retry', () => this.restore(`${what} failed`));
    });
  }

  /** The transaction timeout: longer than an interval and a slow restore, shorter than waiting minutes for a dead member's. */
  private transactionTimeout(): number {
    return Math.max(30_000, 10 * this.config.commitIntervalMs);
  }

  private partitionName(topic: string, partition: number): string {
    let perTopic = this.names.get(topic);
    if (!perTopic) this.names.set(topic, (perTopic = []));
    return (perTopic[partition] ??= `${topic}/${partition}`);
  }

  private partitionNames(assignments: readonly GroupAssignment[]): string[] {
    return assignments.flatMap((a) => a.partitions.map((p) => this.partitionName(a.topic, p)));
  }

  private assignmentText(): string {
    return this.partitionNames(this.assignment).join(', ') || 'no partition';
  }
}

/** `topic/partition` -> [topic, partition]; the topic may contain '/' (it cannot in Kafka, but the last one splits). */
function splitPartition(name: string): [string, number] {
  const slash = name.lastIndexOf('/');
  return [name.slice(0, slash), Number(name.slice(slash + 1))];
}
