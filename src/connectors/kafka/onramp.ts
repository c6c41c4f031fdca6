import { hostname } from 'node:os';
import { Observable, type Subscriber } from '../../core/rx';
import type * as KafkaJs from 'kafkajs';
import type { Consumer, EachBatchPayload, KafkaMessage } from 'kafkajs';
import { requirePackage } from '../../core/packages';
import type { Frame, OnrampContext, OnrampSource, OnrampType, SourceInputs } from '../connector';
import { Backoff } from '../_shared/backoff';
import { CommitTracker, type Entry } from './commits';
import { brokerAddress, clientConfig, kafkaSettings, rdkafkaOptions, rootMessage, type KafkaSettings } from './options';
import { s } from '../../schema/typed';
import type { Static } from '../../schema/typed';

const { Kafka } = requirePackage<typeof KafkaJs>('kafkajs', 'the kafka onramp');

/** The spec's `$kafka`. */
export interface KafkaMeta {
  topic: string;
  partition: number;
  offset: number;
  /** ms since the epoch (the message's CreateTime or LogAppendTime) */
  timestamp: number;
  /** absent when the message has none */
  key?: Buffer;
  /** absent when the message has none */
  headers?: Record<string, Buffer | string | (Buffer | string)[] | undefined>;
}

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
    poll_interval: s.integer({
      minimum: 1,
      default: 100,
      description: 'ms a fetch waits at the broker for new messages when there are none (also how often a paused consumer heartbeats)',
    }),
  },
  { required: ['group_id', 'topics', 'brokers'] },
);

export type KafkaOnrampConfig = Static<typeof configSchema>;

/**
 * kafka: a consumer in the group `group_id` on `topics` (kafkajs). Every
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
 * again when kafkajs reads them again from the committed offset.
 *
 * The brokers are reached in `create`: none answering fails the activation
 * after kafkajs's bounded retries. The group is joined when the frames are
 * subscribed. Pausing pauses every topic in the consumer and holds the
 * batch at hand where it is until the resume.
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
  async create(config, ctx) {
    const settings = consumerSettings(config);
    const brokers = config.brokers.map(brokerAddress);
    const who = `kafka onramp ${ctx.url}`;
    const kafka = new Kafka(clientConfig(settings, brokers, hostname(), ctx.logger, who));
    const source = new KafkaSource(config, settings, kafka, ctx, who);
    await source.open();
    return source;
  },
};

/** The settings, checked: the poll must come round before the session would expire, or a paused consumer drops out of its group. */
function consumerSettings(config: KafkaOnrampConfig): KafkaSettings {
  const settings = kafkaSettings('onramp', config.rdkafka_options);
  const c = settings.consumer;
  const wait = c.maxWaitTimeInMs ?? config.poll_interval;
  if (wait >= c.sessionTimeout) {
    const name = c.maxWaitTimeInMs === undefined ? 'poll_interval' : 'rdkafka_options.fetch.wait.max.ms';
    throw new Error(`${name}: ${wait} ms must be below session.timeout.ms (${c.sessionTimeout}): the consumer heartbeats between fetches`);
  }
  return settings;
}

class KafkaSource implements OnrampSource {
  readonly frames: Observable<Frame>;
  readonly transactional: boolean;
  private readonly consumer: Consumer;
  private readonly tracker: CommitTracker | undefined;
  private readonly originPrefix: string;
  private readonly topicList: { topic: string }[];
  private subscriber: Subscriber<Frame> | undefined;
  /** paused by the circuit breaker */
  private gated = false;
  /** paused because too many messages are unsettled (transactional only) */
  private full = false;
  /** what the consumer was last told */
  private consumerPaused = false;
  private running: Promise<void> | undefined;
  private stopping: Promise<void> | undefined;
  private committing: Promise<void> | undefined;
  private commitAgain = false;
  private closed = false;
  private readonly backoff = new Backoff();
  private restartTimer: NodeJS.Timeout | undefined;
  private restartWake: (() => void) | undefined;
  /** seeks asked for so far (a batch in hand checks whether it went stale only after one) */
  private seeks = 0;
  /** ends the wait of a batch paused in the middle */
  private wake: (() => void) | undefined;
  private stallTimer: NodeJS.Timeout | undefined;
  /** the oldest unsettled message of each partition, with when it was first seen there */
  private stalled = new Map<string, number>();
  /** heads already logged as stalled */
  private readonly warned = new Set<string>();

  constructor(
    private readonly config: KafkaOnrampConfig,
    private readonly settings: KafkaSettings,
    kafka: KafkaJs.Kafka,
    private readonly ctx: OnrampContext,
    private readonly who: string,
  ) {
    const c = settings.consumer;
    this.transactional = !c.autoCommit;
    this.tracker = this.transactional ? new CommitTracker(config.retry_failed_events) : undefined;
    this.originPrefix = `svc-kafka://${config.brokers[0].trim()}/`;
    this.topicList = config.topics.map((topic) => ({ topic }));
    this.consumer = kafka.consumer({
      groupId: c.groupId ?? config.group_id,
      sessionTimeout: c.sessionTimeout,
      // kafkajs refuses a heartbeat interval that is not below the session timeout; a third of it, as it recommends
      heartbeatInterval: c.heartbeatInterval ?? Math.min(3000, Math.floor(c.sessionTimeout / 3)),
      rebalanceTimeout: c.rebalanceTimeout,
      maxWaitTimeInMs: c.maxWaitTimeInMs ?? config.poll_interval,
      minBytes: c.minBytes,
      maxBytes: c.maxBytes,
      maxBytesPerPartition: c.maxBytesPerPartition,
      readUncommitted: c.readUncommitted,
      metadataMaxAge: settings.metadataMaxAge,
      retry: { ...settings.retry, restartOnFailure: (err) => this.restartAfter(err) },
    });
    this.consumer.on(this.consumer.events.GROUP_JOIN, (e) => this.joined(e.payload.memberAssignment));
    this.consumer.on(this.consumer.events.CRASH, (e) => {
      if (!e.payload.restart && !this.closed) this.subscriber?.error(new Error(`${this.who}: the consumer stopped: ${rootMessage(e.payload.error)}`));
    });
    this.frames = new Observable<Frame>((subscriber) => {
      this.subscriber = subscriber;
      // subscribed again after an unsubscribe: the consumer must have left the group first
      const stopped = this.stopping ?? Promise.resolve();
      this.running = stopped.then(() => this.run());
      return () => {
        this.subscriber = undefined;
        this.wake?.();
        this.stopping = this.stop();
      };
    });
  }

  /** Reaches the brokers and learns the topics: what must work for the activation to succeed. */
  async open(): Promise<void> {
    try {
      await this.consumer.connect();
    } catch (err) {
      await this.consumer.disconnect().catch(() => undefined);
      throw new Error(`cannot reach the kafka brokers ${this.config.brokers.join(', ')}: ${rootMessage(err)}`);
    }
    // a topic the broker creates on first use (auto.create.topics.enable) is unknown for a moment: ask again, a few times
    const backoff = new Backoff(100, 1000);
    for (let attempt = 1; ; attempt++) {
      try {
        await this.consumer.subscribe({ topics: this.config.topics, fromBeginning: this.settings.consumer.fromBeginning });
        return;
      } catch (err) {
        const unknown = (err as { type?: string }).type === 'UNKNOWN_TOPIC_OR_PARTITION' || (err as { type?: string }).type === 'LEADER_NOT_AVAILABLE';
        if (unknown && attempt < 8 && !this.closed) {
          await new Promise((resolve) => setTimeout(resolve, backoff.next()));
          continue;
        }
        await this.consumer.disconnect().catch(() => undefined);
        const what = unknown ? 'the broker does not have them and did not create them' : rootMessage(err);
        throw new Error(`cannot subscribe to the kafka topics ${this.config.topics.join(', ')}: ${what}`);
      }
    }
  }

  pause(): void {
    this.gated = true;
    this.applyPause();
  }

  resume(): void {
    this.gated = false;
    this.applyPause();
  }

  /** reading: the consumer fetches and a batch in hand is handed over (kafkajs pauses the fetches, the batch loop waits) */
  inputs(): SourceInputs {
    const fetching = this.consumer.paused().length === 0;
    return { open: 1, reading: fetching || !this.consumerPaused ? 1 : 0 };
  }

  onAck(id: { seq: number }): void {
    if (!this.tracker) return;
    this.tracker.ack(id.seq);
    this.settled();
  }

  onFail(id: { seq: number }): void {
    if (!this.tracker) return;
    const seek = this.tracker.fail(id.seq);
    if (seek) {
      this.ctx.logger.debug(`${this.who}: an event failed; reading ${seek.topic}/${seek.partition} again from offset ${seek.offset}`);
      this.seeks++;
      try {
        this.consumer.seek({ topic: seek.topic, partition: seek.partition, offset: String(seek.offset) });
      } catch (err) {
        // not running (stopped or restarting): it resumes from the committed offset, which is before this one
        this.ctx.logger.debug(`${this.who}: seek: ${(err as Error).message}`);
      }
    }
    this.settled();
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.restartTimer);
    this.restartWake?.();
    this.wake?.();
    clearInterval(this.stallTimer);
    await this.stopping;
    await this.committing;
    await this.consumer.disconnect().catch((err: Error) => this.ctx.logger.debug(`${this.who}: disconnect: ${err.message}`));
  }

  private async run(): Promise<void> {
    if (this.closed || !this.subscriber) return;
    if (this.tracker) this.stallTimer = setInterval(() => this.checkStall(), STALL_WARNING_MS / 6).unref();
    try {
      await this.consumer.run({
        autoCommit: !this.transactional,
        // offsets are resolved by hand: only what was handed over, so a pause in the middle of a batch loses nothing
        eachBatchAutoResolve: false,
        eachBatch: async (payload) => this.batch(payload),
      });
    } catch (err) {
      this.subscriber?.error(new Error(`${this.who}: cannot join the group: ${rootMessage(err)}`));
    }
  }

  /** Leaves the group; a transactional consumer first commits what was acked. */
  private async stop(): Promise<void> {
    clearInterval(this.stallTimer);
    await this.running;
    this.flushCommits();
    await this.committing;
    await this.consumer.stop().catch((err: Error) => this.ctx.logger.debug(`${this.who}: stop: ${err.message}`));
  }

  /**
   * Hands over the messages of one batch, and resolves what it handed over.
   * While paused it waits in the middle of the batch (heartbeating, so the
   * group keeps it) and goes on from there on resume: nothing is held
   * beyond the event that triggered the pause, and no fetch round is lost.
   * It stops early when the batch went stale (a seek) or the consumer stops;
   * the rest is fetched again.
   */
  private async batch(payload: EachBatchPayload): Promise<void> {
    const { topic, partition, messages } = payload.batch;
    const stream = `${topic}/${partition}`;
    const prefix = `${this.originPrefix}${topic}/${partition}/`;
    let last: KafkaMessage | undefined;
    // isStale builds a key per call: ask once per batch, and again only after this onramp asked for a seek
    let seeks = -1;
    try {
      for (let i = 0; i < messages.length; i++) {
        if (this.consumerPaused) await this.whilePaused(payload);
        const subscriber = this.subscriber;
        if (!subscriber || !payload.isRunning()) break;
        if (seeks !== this.seeks) {
          seeks = this.seeks;
          if (payload.isStale()) break;
        }
        const message = messages[i];
        last = message;
        const entry = this.tracker?.received(topic, partition, Number(message.offset));
        // read again after a rejoin: handed over before, and in flight or acked still (or no longer this member's partition)
        if (this.tracker && !entry) continue;
        const frame: Frame = {
          stream,
          data: message.value ?? Buffer.alloc(0),
          originUri: prefix + message.offset,
          meta: { kafka: kafkaMeta(topic, partition, message) },
        };
        if (entry) frame.done = (result) => this.decoded(entry, result.ids);
        subscriber.next(frame);
        // the window of unsettled messages is full: pause here, in the middle of the batch
        if (this.tracker && !this.full && this.tracker.unsettled >= UNSETTLED_LIMIT) this.settled();
      }
    } finally {
      // also when a heartbeat says the group is rebalancing: what was handed over is not fetched again by this member
      if (last !== undefined) payload.resolveOffset(last.offset);
      if (this.tracker) this.settled();
    }
  }

  /** Waits for the resume; heartbeats meanwhile (a rebalance throws out of the batch, as kafkajs wants). */
  private async whilePaused(payload: EachBatchPayload): Promise<void> {
    while (this.consumerPaused && this.subscriber && !this.closed && payload.isRunning() && !payload.isStale()) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          this.wake = undefined;
          resolve();
        }, 500);
        this.wake = () => {
          clearTimeout(timer);
          this.wake = undefined;
          resolve();
        };
      });
      await payload.heartbeat();
    }
  }

  private decoded(entry: Entry, ids: readonly { seq: number }[]): void {
    this.tracker!.decoded(entry, ids as { uid: number; seq: number }[]);
  }

  /** After acks, fails and hand-overs: commit what became committable, and pause or resume for the window. */
  private settled(): void {
    const full = this.tracker!.unsettled >= UNSETTLED_LIMIT ? true : this.tracker!.unsettled <= UNSETTLED_LIMIT / 2 ? false : this.full;
    if (full !== this.full) {
      this.full = full;
      if (full) this.ctx.logger.debug(`${this.who}: ${UNSETTLED_LIMIT} messages wait for acks; fetching paused`);
      this.applyPause();
    }
    this.flushCommits();
  }

  /** One commit request at a time; what becomes committable meanwhile goes in the next. */
  private flushCommits(): void {
    if (!this.tracker) return;
    if (this.committing) {
      this.commitAgain = true;
      return;
    }
    const offsets = this.tracker.takeCommits();
    if (offsets.length === 0) return;
    this.committing = this.consumer
      .commitOffsets(offsets)
      .catch((err: Error) => this.ctx.logger.debug(`${this.who}: commit failed (the next one covers it): ${rootMessage(err)}`))
      .finally(() => {
        this.committing = undefined;
        if (this.commitAgain) {
          this.commitAgain = false;
          this.flushCommits();
        }
      });
  }

  private applyPause(): void {
    const pause = this.gated || this.full;
    if (pause === this.consumerPaused) return;
    this.consumerPaused = pause;
    if (!pause) this.wake?.();
    try {
      if (pause) this.consumer.pause(this.topicList);
      else this.consumer.resume(this.topicList);
    } catch {
      // not running yet (or restarting): `joined` applies it once the consumer is in the group
    }
  }

  /**
   * A (re)join (a rebalance, or the client restarted): kafkajs reads the
   * assigned partitions again from their committed offsets. The tracker keeps
   * the messages in flight on the partitions this member still holds (a
   * re-read skips them) and forgets the others.
   */
  private joined(assignment: Record<string, number[]>): void {
    this.backoff.reset();
    if (this.tracker) {
      this.tracker.rejoined(assignment);
      this.ctx.logger.debug(`${this.who}: ${this.tracker.unsettled} messages in flight on the partitions kept; read again, they are skipped`);
      // kafkajs drops a commit silently until its runner runs, which a restart's first join precedes: commit on the next turn
      setImmediate(() => {
        if (!this.closed) this.settled();
      });
    }
    const parts = Object.entries(assignment).map(([topic, partitions]) => `${topic} [${partitions.join(', ')}]`);
    this.ctx.logger.info(`${this.who}: joined the group; assigned ${parts.join(', ') || 'nothing'}`);
    if (this.consumerPaused) {
      try {
        this.consumer.pause(this.topicList);
      } catch {
        // cannot happen after a join; nothing to do if it does
      }
    }
  }

  /** kafkajs restarts a crashed consumer (a broker went away) when this resolves true: after a bounded back-off. */
  private restartAfter(err: Error): Promise<boolean> {
    if (this.closed) return Promise.resolve(false);
    const delay = this.backoff.next();
    this.ctx.logger.warn(`${this.who}: the consumer lost the brokers (${rootMessage(err)}); restarting in ${delay} ms`);
    return new Promise((resolve) => {
      this.restartWake = () => resolve(false);
      this.restartTimer = setTimeout(() => {
        this.restartWake = undefined;
        resolve(!this.closed);
      }, delay);
    });
  }

  /** Logs (once) each partition whose oldest unsettled message has waited too long: its events were neither acked nor failed. */
  private checkStall(): void {
    const now = Date.now();
    const seen = new Map<string, number>();
    const stuck: string[] = [];
    for (const h of this.tracker!.heads()) {
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

function kafkaMeta(topic: string, partition: number, message: KafkaMessage): KafkaMeta {
  const meta: KafkaMeta = { topic, partition, offset: Number(message.offset), timestamp: Number(message.timestamp) };
  if (message.key !== null && message.key !== undefined) meta.key = message.key;
  if (message.headers && Object.keys(message.headers).length > 0) meta.headers = message.headers;
  return meta;
}
