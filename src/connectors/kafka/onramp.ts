import { hostname } from 'node:os';
import { Observable, Subject, type Subscriber } from '../../core/rx';
import type { Consumer, GroupAssignment, Message, MessagesStream } from '@platformatic/kafka';
import type { Frame, FrameResult, OnrampContext, OnrampSource, OnrampType, SourceInputs } from '../connector';
import { Backoff } from '../_shared/backoff';
import { CommitTracker, type CommitOffset, type Entry } from './commits';
import { GroupRejoin } from './rejoin';
import {
  baseOptions,
  brokerAddress,
  isConnectionError,
  isTransientError,
  kafkaSettings,
  platformatic,
  rdkafkaOptions,
  rootMessage,
  type KafkaSettings,
} from './options';
import { s } from '../../schema/typed';
import { durationMs, duration } from '../../schema/duration';
import { ExactlyOnceSource } from './exactly-once';
import { kafkaMeta, reachTopics } from './consumer-common';
export type { KafkaMeta } from './consumer-common';
import type { Static } from '../../schema/typed';

const { Consumer: ConsumerClass } = platformatic('the kafka onramp');

/** guarantee exactly_once: a transaction per this many ms unless commit_interval says otherwise */
export const DEFAULT_COMMIT_INTERVAL = 100;

/** Messages handed over but not settled, beyond which a transactional consumer stops fetching (see the docs). */
export const UNSETTLED_LIMIT = 10_000;
/** A partition whose oldest unsettled message waited this long is logged: its events are neither acked nor failed. */
const STALL_WARNING_MS = 30_000;

const configSchema = s.object(
  {
    group_id: s.string({
      minLength: 1,
      description: 'consumer group: processes with the same group_id share the partitions of the topics (rdkafka_options group.id overrides it)',
    }),
    topics: s.array(s.string({ minLength: 1 }), { minItems: 1, description: 'topics to consume' }),
    brokers: s.array(s.string({ minLength: 1 }), {
      minItems: 1,
      description: 'bootstrap brokers, host:port (port 9092 when left out); the first one names the origin URI',
    }),
    rdkafka_options: rdkafkaOptions(
      'librdkafka option names mapped onto the client (see docs/connectors/kafka.md): client.id, group.id, enable.auto.commit (false: commit on ack), auto.offset.reset, session.timeout.ms, security.protocol, sasl.*, ssl.* and more; any other name is refused',
    ),
    retry_failed_events: s.boolean({
      default: true,
      description: 'with enable.auto.commit false: a failed event seeks its partition back to it, so it is read again; false gives it up and commits past it',
    }),
    guarantee: s.literals(['at_least_once', 'exactly_once'], {
      description:
        'at_least_once (default): commits as rdkafka_options say; exactly_once: what the flow made of the messages (kafka offramps, stateful operators) and the offsets are committed in one Kafka transaction per commit_interval (docs/design-exactly-once.md)',
    }),
    commit_interval: duration('guarantee exactly_once: how often a transaction commits (default 100ms)'),
    poll_interval: duration('how long a fetch waits at the broker for new messages when there are none (also how often a paused consumer heartbeats)', {
      default: 100,
    }),
  },
  { description: 'Consumes Kafka topics as a member of a consumer group.', required: ['group_id', 'topics', 'brokers'] },
);

export type KafkaOnrampConfig = Static<typeof configSchema>;

/**
 * kafka: a consumer in the group `group_id` on `topics` (@platformatic/kafka). Every
 * message is one frame (one stream per topic and partition, so each keeps
 * its own preprocessor state) with meta `kafka`
 * {topic, partition, offset, timestamp, key?, headers?} and origin
 * `svc-kafka://<first broker>/<topic>/<partition>/<offset>`.
 *
 * Commits: with `enable.auto.commit` true (the default) an offset is
 * committed when its batch was handed over, whatever becomes of the events.
 * With false the events are transactional and an offset is committed only
 * once every message up to it has all its events acked (`CommitTracker`);
 * a fail seeks the partition back to the failed message
 * (`retry_failed_events`) or gives it up. A rebalance that leaves a
 * partition with this member does not hand its messages in flight over
 * again when they are read again from the committed offset.
 *
 * The brokers are reached in `create`: none answering fails the activation
 * after the client's bounded retries. The group is joined when the frames
 * are subscribed. Pausing pauses the message stream: what it holds waits
 * there until the resume, while the client heartbeats on its own timer.
 */
export const kafkaOnramp: OnrampType<KafkaOnrampConfig> = {
  name: 'kafka',
  defaultCodec: 'json',
  placement: 'every-worker', // a consumer group shares the partitions (docs/workers.md)
  example: {
    group_id: 'eddy',
    topics: ['eddy-in'],
    brokers: ['127.0.0.1:9092'],
    rdkafka_options: { 'enable.auto.commit': 'false', 'auto.offset.reset': 'earliest' },
  },
  configSchema,
  validate(config) {
    consumerSettings(config);
  },
  commitsDownstream: (config) => config.guarantee === 'exactly_once',
  async create(config, ctx) {
    const settings = consumerSettings(config);
    const brokers = config.brokers.map(brokerAddress);
    const who = `kafka onramp ${ctx.url}`;
    if (config.guarantee === 'exactly_once') {
      const commitIntervalMs = durationMs(config.commit_interval ?? DEFAULT_COMMIT_INTERVAL, 'commit_interval');
      const source = new ExactlyOnceSource(
        { ...config, poll_interval: durationMs(config.poll_interval, 'poll_interval'), commitIntervalMs },
        settings,
        brokers,
        ctx,
        who,
      );
      await source.open();
      return source;
    }
    const source = new KafkaSource(config, settings, brokers, ctx, who);
    await source.open();
    return source;
  },
};

/** The settings, checked: the poll must come round before the session would expire, or a paused consumer drops out of its group. */
function consumerSettings(config: KafkaOnrampConfig): KafkaSettings {
  const settings = kafkaSettings('onramp', config.rdkafka_options);
  const c = settings.consumer;
  if (config.guarantee === 'exactly_once') {
    if (String(config.rdkafka_options['enable.auto.commit']) === 'true') {
      throw new Error('rdkafka_options.enable.auto.commit: true cannot be used with guarantee exactly_once: offsets are committed in its transactions');
    }
    if (c.readUncommitted) {
      throw new Error(
        'rdkafka_options.isolation.level: read_uncommitted cannot be used with guarantee exactly_once: it would read what upstream transactions may still abort',
      );
    }
    durationMs(config.commit_interval ?? DEFAULT_COMMIT_INTERVAL, 'commit_interval');
  } else if (config.commit_interval !== undefined) {
    throw new Error('commit_interval: only with guarantee exactly_once (at least once commits as rdkafka_options say)');
  }
  const wait = c.maxWaitTime ?? durationMs(config.poll_interval, 'poll_interval');
  if (wait >= c.sessionTimeout) {
    const name = c.maxWaitTime === undefined ? 'poll_interval' : 'rdkafka_options.fetch.wait.max.ms';
    throw new Error(`${name}: ${wait} ms must be below session.timeout.ms (${c.sessionTimeout}): the consumer heartbeats between fetches`);
  }
  return settings;
}

type KafkaMessage = Message;

interface PartitionState {
  readonly stream: string;
  readonly origin: string;
  /** auto commit: one past the last offset handed over (-1: none yet), and what was last committed */
  next: number;
  committed: number;
  leaderEpoch: number;
}
type Stream = MessagesStream<Buffer, Buffer, Buffer, Buffer>;

const EMPTY = Buffer.alloc(0);

/**
 * A frame whose message the tracker follows (commit on ack): `done` is a
 * method, so a message costs no closure (the machinery calls `frame.done`).
 */
class TrackedFrame implements Frame {
  constructor(
    readonly stream: string,
    readonly partition: string,
    readonly data: Buffer,
    readonly originUri: string,
    readonly meta: Frame['meta'],
    private readonly tracker: CommitTracker,
    private readonly entry: Entry,
  ) {}

  done(result: FrameResult): void {
    this.tracker.decoded(this.entry, result.ids);
  }
}

class KafkaSource implements OnrampSource {
  readonly frames: Observable<Frame>;
  readonly transactional: boolean;
  private readonly consumer: Consumer;
  private readonly tracker: CommitTracker | undefined;
  private readonly originPrefix: string;
  /** per topic, per partition: the frame's stream name and the origin URI's prefix (built once, not per message), and with auto commit what to commit */
  private readonly partitions = new Map<string, PartitionState[]>();
  /** auto commit: a commit of what was handed over is due at the end of this turn */
  private receivedCommitScheduled = false;
  private subscriber: Subscriber<Frame> | undefined;
  /** `topic/partition` of the partitions assigned to this member at its last join */
  private held = new Set<string>();
  private readonly released = new Subject<string[]>();
  readonly partitionsReleased = this.released.asObservable();
  /** the stream messages come from; replaced after a rejoin or a seek (transactional), or after it failed */
  private stream: Stream | undefined;
  /** a stream is being opened */
  private opening = false;
  /** the group was rejoined while a stream was being opened: that one is dropped and another opened */
  private reopen = false;
  /** paused by the circuit breaker */
  private gated = false;
  /** paused because too many messages are unsettled (transactional only) */
  private full = false;
  private committing: Promise<void> | undefined;
  private commitAgain = false;
  private stopping: Promise<void> | undefined;
  private closed = false;
  private readonly backoff = new Backoff();
  private readonly rejoin: GroupRejoin;
  private restartTimer: NodeJS.Timeout | undefined;
  private stallTimer: NodeJS.Timeout | undefined;
  /** the oldest unsettled message of each partition, with when it was first seen there */
  private stalled = new Map<string, number>();
  /** heads already logged as stalled */
  private readonly warned = new Set<string>();

  constructor(
    private readonly config: KafkaOnrampConfig,
    private readonly settings: KafkaSettings,
    brokers: string[],
    private readonly ctx: OnrampContext,
    private readonly who: string,
  ) {
    const c = settings.consumer;
    this.transactional = !c.autoCommit;
    this.tracker = this.transactional ? new CommitTracker(config.retry_failed_events) : undefined;
    this.originPrefix = `svc-kafka://${config.brokers[0].trim()}/`;
    this.consumer = new ConsumerClass({
      ...baseOptions(settings, brokers, hostname()),
      groupId: c.groupId ?? config.group_id,
      sessionTimeout: c.sessionTimeout,
      // below the session timeout, as the broker wants; a third of it at most, as Kafka recommends
      heartbeatInterval: c.heartbeatInterval ?? Math.min(3000, Math.floor(c.sessionTimeout / 3)),
      // kafkajs's 60 s, as eddy had (the client's default is 102 s): how long a rebalance waits for the members to rejoin
      rebalanceTimeout: c.rebalanceTimeout ?? Math.max(60000, c.sessionTimeout),
    });
    this.consumer.on('consumer:group:join', (payload) => this.joined(payload.assignments ?? []));
    this.consumer.on('consumer:heartbeat:error', (payload) => this.ctx.logger.debug(`${this.who}: heartbeat: ${rootMessage(payload.error)}`));
    this.rejoin = new GroupRejoin(
      this.consumer,
      ctx.logger,
      who,
      () => !this.closed && this.subscriber !== undefined,
      (err) => this.joinFailed(err),
    );
    this.frames = new Observable<Frame>((subscriber) => {
      this.subscriber = subscriber;
      // subscribed again after an unsubscribe: the consumer must have left the group first
      void (this.stopping ?? Promise.resolve()).then(() => this.run());
      return () => {
        this.subscriber = undefined;
        this.stopping = this.stop();
      };
    });
  }

  /** Reaches the brokers and learns the topics: what must work for the activation to succeed. */
  async open(): Promise<void> {
    await reachTopics(this.consumer, this.config.topics, this.config.brokers, () => this.closed);
  }

  pause(): void {
    this.gated = true;
    this.applyPause();
  }

  resume(): void {
    this.gated = false;
    this.applyPause();
  }

  /** reading: a stream is there and not paused */
  inputs(): SourceInputs {
    return { open: 1, reading: this.stream !== undefined && !this.gated && !this.full ? 1 : 0 };
  }

  onAck(id: { seq: number }): void {
    if (!this.tracker) return;
    this.tracker.ack(id.seq);
    this.settled(this.tracker);
  }

  onFail(id: { seq: number }): void {
    if (!this.tracker) return;
    const seek = this.tracker.fail(id.seq);
    if (seek) {
      this.ctx.logger.debug(`${this.who}: an event failed; reading ${seek.topic}/${seek.partition} again from offset ${seek.offset}`);
      // the client cannot seek: a fresh stream reads every partition from its committed offset, which is at or before
      // the failed message; what was handed over and still counts is skipped (the tracker), the failed one and what
      // follows it are handed over again. The current stream stops now: the rest of what it holds would be taken
      // for the messages after the failed one.
      this.replaceStream('a failed event is read again', false);
    }
    this.settled(this.tracker);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.rejoin.stop();
    clearTimeout(this.restartTimer);
    clearInterval(this.stallTimer);
    await this.stopping;
    while (this.committing) await this.committing;
    await this.consumer.close(true).catch((err: unknown) => this.ctx.logger.debug(`${this.who}: close: ${rootMessage(err)}`));
  }

  private run(): void {
    if (this.closed || !this.subscriber) return;
    const tracker = this.tracker;
    if (tracker) this.stallTimer = setInterval(() => this.checkStall(tracker), STALL_WARNING_MS / 6).unref();
    void this.openStream();
  }

  /**
   * Joins the group (the first time) and opens a stream from the committed
   * offsets. A failure (the brokers went away) is tried again after a
   * bounded back-off, logged each time.
   */
  private async openStream(): Promise<void> {
    if (this.closed || !this.subscriber) return;
    if (this.opening) {
      this.reopen = true;
      return;
    }
    this.opening = true;
    const c = this.settings.consumer;
    let stream: Stream | undefined;
    try {
      stream = await this.consumer.consume({
        topics: this.config.topics,
        mode: 'committed',
        fallbackMode: c.fromBeginning ? 'earliest' : 'latest',
        // eddy commits by hand: on ack the tracker's offsets; with auto commit what was handed over (the client's own
        // autocommit would commit what a fetch brought, also while it waits in the paused stream)
        autocommit: false,
        maxWaitTime: c.maxWaitTime ?? durationMs(this.config.poll_interval, 'poll_interval'),
        minBytes: c.minBytes,
        maxBytes: c.maxBytes,
        maxBytesPerPartition: c.maxBytesPerPartition,
        isolationLevel: c.readUncommitted ? 0 : 1,
      });
    } catch (err) {
      this.opening = false;
      this.reopen = false;
      this.joinFailed(err);
      return;
    }
    this.opening = false;
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- checked before the await above; closed or unsubscribed meanwhile
    if (this.closed || !this.subscriber) {
      await stream.close().catch(() => undefined);
      return;
    }
    if (this.reopen) {
      // the group was rejoined while this one was being opened: it may have fetched for the old assignment
      this.reopen = false;
      this.retire(stream);
      void this.openStream();
      return;
    }
    const old = this.stream;
    this.stream = stream;
    if (this.gated || this.full) stream.pause();
    stream.on('data', (m: KafkaMessage) => this.received(m, stream));
    stream.on('error', (err: Error) => this.streamFailed(stream, err));
    // the old one goes only now: a stream of this consumer is always open, so closing it does not make the client rejoin
    if (old) this.retire(old);
    this.backoff.reset();
    // what could not be committed while the brokers were away
    this.flushCommits();
  }

  /**
   * A fresh stream in place of the current one (transactional: after a
   * rejoin or a seek); what the old one holds is dropped, and read again by
   * the new one. A stream being opened already reads from the committed
   * offsets, which are before any seek asked for meanwhile, so a burst of
   * fails opens one stream; after a rejoin (`always`) a stream opened before
   * it is replaced all the same, as it may have fetched for the old
   * assignment.
   */
  private replaceStream(why: string, always: boolean): void {
    if (this.closed || !this.subscriber) return;
    // nothing more from the old stream, from now: not even the rest of what the current fetch brought
    this.stream?.removeAllListeners('data');
    if (this.opening && !always) return;
    this.ctx.logger.debug(`${this.who}: ${why}: reading from the committed offsets`);
    void this.openStream();
  }

  /** Closes a stream no longer read; its buffered messages and its fetch in flight are dropped. */
  private retire(stream: Stream): void {
    stream.removeAllListeners('data');
    stream.removeAllListeners('error');
    stream.on('error', () => undefined);
    stream.close((err) => {
      if (err) this.ctx.logger.debug(`${this.who}: closing a stream: ${rootMessage(err)}`);
    });
  }

  /** The stream failed (the brokers went away, or a commit the group refused while it rebalanced): a fresh one after a back-off. */
  private streamFailed(stream: Stream, err: Error): void {
    if (stream !== this.stream) return;
    this.stream = undefined;
    this.retire(stream);
    this.restartAfter(err);
  }

  /**
   * Joining (or opening a stream, which joins) failed. The brokers away, or
   * answering what waiting may cure: try again after a back-off. The group
   * refused this member (authorisation, a member of another client whose
   * protocols do not match): trying again would not help, the source fails
   * saying why.
   */
  private joinFailed(err: unknown): void {
    if (isTransientError(err)) this.restartAfter(err);
    else this.subscriber?.error(new Error(`${this.who}: cannot join the group: ${rootMessage(err)}`));
  }

  private restartAfter(err: unknown): void {
    if (this.closed || !this.subscriber) return;
    const delay = this.backoff.next();
    const what = isConnectionError(err) ? `the consumer lost the brokers ${this.config.brokers.join(', ')}` : 'the consumer failed';
    this.ctx.logger.warn(`${this.who}: ${what} (${rootMessage(err)}); restarting in ${delay} ms`);
    clearTimeout(this.restartTimer);
    this.restartTimer = setTimeout(() => void this.openStream(), delay);
  }

  /** Leaves the group; a transactional consumer first commits what was acked. */
  private async stop(): Promise<void> {
    clearInterval(this.stallTimer);
    clearTimeout(this.restartTimer);
    const stream = this.stream;
    this.stream = undefined;
    if (stream) {
      stream.removeAllListeners('data');
      await stream.close().catch((err: unknown) => this.ctx.logger.debug(`${this.who}: closing the stream: ${rootMessage(err)}`));
    }
    this.flushCommits();
    while (this.committing) await this.committing;
    // forced: a stream still closing (one replaced a moment ago) is closed with it, rather than refusing to leave
    await new Promise<void>((resolve) =>
      this.consumer.leaveGroup(true, (err) => {
        if (err) this.ctx.logger.debug(`${this.who}: leaving the group: ${rootMessage(err)}`);
        resolve();
      }),
    );
  }

  /**
   * One message: one frame. The hot path: no closure or array per message
   * beyond the frame itself (and the tracker's entry, with commit on ack).
   */
  private received(m: KafkaMessage, stream: Stream): void {
    const subscriber = this.subscriber;
    if (!subscriber || stream !== this.stream) return;
    const { topic, partition } = m;
    const offset = Number(m.offset);
    const tracker = this.tracker;
    let entry: Entry | undefined;
    if (tracker) {
      entry = tracker.received(topic, partition, offset, m.leaderEpoch);
      // read again after a rejoin or a seek: handed over before, and in flight or acked still (or no longer this member's partition)
      if (!entry) return;
    }
    const state = this.stateOf(topic, partition);
    // a tombstone's value is null, whatever the client's type says
    const data = (m.value as Buffer | null) ?? EMPTY;
    const meta = { kafka: kafkaMeta(m, offset) };
    const originUri = `${state.origin}${offset}`;
    let frame: Frame;
    // the stream names the partition: `topic/partition`, the events' partition too (stateful operators keep state per partition)
    if (tracker && entry) frame = new TrackedFrame(state.stream, state.stream, data, originUri, meta, tracker, entry);
    else {
      frame = { stream: state.stream, partition: state.stream, data, originUri, meta };
      // auto commit: on reception, whatever becomes of the events; gathered per turn, so one request per fetch
      state.next = offset + 1;
      state.leaderEpoch = m.leaderEpoch;
      if (!this.receivedCommitScheduled) {
        this.receivedCommitScheduled = true;
        setImmediate(() => {
          this.receivedCommitScheduled = false;
          this.flushCommits();
        });
      }
    }
    subscriber.next(frame);
    // the window of unsettled messages is full: pause here, in the middle of what the stream holds
    if (tracker && !this.full && tracker.unsettled >= UNSETTLED_LIMIT) this.settled(tracker);
  }

  private stateOf(topic: string, partition: number): PartitionState {
    let perTopic = this.partitions.get(topic);
    if (!perTopic) this.partitions.set(topic, (perTopic = []));
    return (perTopic[partition] ??= {
      stream: `${topic}/${partition}`,
      origin: `${this.originPrefix}${topic}/${partition}/`,
      next: -1,
      committed: -1,
      leaderEpoch: -1,
    });
  }

  /** Auto commit: the offsets after what was handed over, where they moved since the last commit. */
  private takeReceived(): CommitOffset[] {
    const out: CommitOffset[] = [];
    for (const [topic, perTopic] of this.partitions) {
      perTopic.forEach((p, partition) => {
        if (p.next === p.committed) return;
        p.committed = p.next;
        out.push({ topic, partition, offset: BigInt(p.next), leaderEpoch: p.leaderEpoch });
      });
    }
    return out;
  }

  /** After acks, fails and hand-overs: commit what became committable, and pause or resume for the window. */
  private settled(tracker: CommitTracker): void {
    const full = tracker.unsettled >= UNSETTLED_LIMIT ? true : tracker.unsettled <= UNSETTLED_LIMIT / 2 ? false : this.full;
    if (full !== this.full) {
      this.full = full;
      if (full) this.ctx.logger.debug(`${this.who}: ${UNSETTLED_LIMIT} messages wait for acks; fetching paused`);
      this.applyPause();
    }
    this.flushCommits();
  }

  /**
   * One commit request at a time; what becomes committable meanwhile goes in
   * the next. With auto commit: what was handed over. It carries only this member's partitions (the tracker forgets
   * the others at a rejoin). A commit the group refuses because it is
   * rebalancing is sent again by the client once it rejoined, and may then
   * carry a partition that moved: the offset it commits is one this member
   * delivered everything before, so that costs duplicates at worst, never a
   * gap.
   */
  private flushCommits(): void {
    if (this.committing) {
      this.commitAgain = true;
      return;
    }
    const offsets = this.tracker ? this.tracker.takeCommits() : this.takeReceived();
    if (offsets.length === 0) return;
    this.committing = this.consumer
      .commit({ offsets })
      .catch((err: unknown) => {
        // sent again with the next commit, or when a stream opens again after the brokers came back
        this.tracker?.commitFailed(offsets);
        this.ctx.logger.debug(`${this.who}: commit failed (the next one carries it): ${rootMessage(err)}`);
      })
      .finally(() => {
        this.committing = undefined;
        if (this.commitAgain) {
          this.commitAgain = false;
          this.flushCommits();
        }
      });
  }

  private applyPause(): void {
    const stream = this.stream;
    if (!stream) return;
    // the client's heartbeat runs on a timer of its own: a paused stream keeps its member in the group
    if (this.gated || this.full) stream.pause();
    else if (stream.isPaused()) stream.resume();
  }

  /**
   * A (re)join (a rebalance, or the client rejoined after losing the
   * brokers). With commit on ack the tracker keeps the messages in flight on
   * the partitions this member still holds and forgets the others; a fresh
   * stream reads the assigned partitions from their committed offsets (the
   * old one may hold messages fetched before the rebalance, and a fetch of
   * it in flight would answer for the old assignment), and what was handed
   * over already is skipped.
   */
  private joined(assignments: GroupAssignment[]): void {
    this.backoff.reset();
    const assignment: Record<string, number[]> = {};
    for (const a of assignments) assignment[a.topic] = a.partitions;
    if (this.tracker) {
      this.tracker.rejoined(assignment);
      this.ctx.logger.debug(`${this.who}: ${this.tracker.unsettled} messages in flight on the partitions kept; read again, they are skipped`);
      // the first join happens while the first stream is being opened: nothing to replace then
      if (this.stream) this.replaceStream('the group was rejoined', true);
      this.settled(this.tracker);
    }
    const parts = Object.entries(assignment).map(([topic, partitions]) => `${topic} [${partitions.join(', ')}]`);
    this.ctx.logger.info(`${this.who}: joined the group; assigned ${parts.join(', ') || 'nothing'}`);
    // partitions another member reads now: the state kept for them downstream goes (OnrampSource.partitionsReleased)
    const held = new Set(Object.entries(assignment).flatMap(([topic, partitions]) => partitions.map((p) => `${topic}/${p}`)));
    const released = [...this.held].filter((p) => !held.has(p));
    this.held = held;
    if (released.length > 0) {
      this.ctx.logger.info(`${this.who}: no longer reads ${released.join(', ')}: their windows and other state are dropped here, counted by their new reader`);
      this.released.next(released);
    }
  }

  /** Logs (once) each partition whose oldest unsettled message has waited too long: its events were neither acked nor failed. */
  private checkStall(tracker: CommitTracker): void {
    const now = Date.now();
    const seen = new Map<string, number>();
    const stuck: string[] = [];
    for (const h of tracker.heads()) {
      const head = `${h.topic}/${h.partition} offset ${h.offset}`;
      const since = this.stalled.get(head) ?? now;
      seen.set(head, since);
      if (now - since >= STALL_WARNING_MS && !this.warned.has(head)) {
        this.warned.add(head);
        stuck.push(head);
      }
    }
    for (const head of this.warned) if (!seen.has(head)) this.warned.delete(head);
    this.stalled = seen;
    if (stuck.length > 0) {
      this.ctx.logger.warn(
        `${this.who}: no ack or fail for ${STALL_WARNING_MS / 1000} s for ${stuck.join(', ')}; commits on those partitions wait (an event dropped in a pipeline is never acked)`,
      );
    }
  }
}
