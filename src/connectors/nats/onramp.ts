import { Observable, type Subscriber, type Subscription as RxSubscription } from '../../core/rx';
import type { Msg, MsgHdrs, Subscription } from '@nats-io/nats-core';
import type { Consumer, ConsumerMessages, JsMsg } from '@nats-io/jetstream';
import type { EventId, Meta } from '../../core/event';
import type { Frame, OnrampContext, OnrampSource, OnrampType, SourceInputs } from '../connector';
import { Backoff } from '../_shared/backoff';
import { Settlements, type Outcome } from '../_shared/settlement';
import {
  closeConnection,
  describe,
  headersMeta,
  hostsSchema,
  natsConnect,
  optionsSchema,
  originHost,
  validateOptions,
  watchStatus,
  type NatsClient,
} from './connection';
import { requirePackage } from '../../core/packages';
import { s } from '../../schema/typed';
import { duration, durationMs } from '../../schema/duration';
import type { Static } from '../../schema/typed';

const { nanos } = requirePackage<typeof import('@nats-io/nats-core')>('@nats-io/nats-core', 'the nats connector');
const { AckPolicy, DeliverPolicy, jetstream, jetstreamManager, JetStreamApiCodes, JetStreamApiError } = requirePackage<typeof import('@nats-io/jetstream')>(
  '@nats-io/jetstream',
  'the nats connector',
);

/** The server's lower bound for a consumer's ack wait: 1 s. */
const ACK_WAIT = { default: 30000, minimumMs: 1000 } as const;

const jetstreamSchema = s.object(
  {
    stream: s.string({ minLength: 1, description: 'the stream to read (it must exist; eddy does not create streams)' }),
    durable: s.string({
      minLength: 1,
      pattern: '^[^\\s.*>]+$',
      description:
        'durable consumer name; created on the stream (filtered on `subject`, explicit acks) when absent; processes with the same name share its messages',
    }),
    batch: s.integer({
      minimum: 1,
      maximum: 10000,
      default: 100,
      description: 'messages per pull; at most this many arrive after the circuit breaker is triggered',
    }),
    ack_wait_ms: duration("when eddy creates the consumer: the time after which the server redelivers a message that was neither acked nor nak'ed", ACK_WAIT),
  },
  {
    required: ['stream', 'durable'],
    description: 'read a durable JetStream pull consumer with explicit acks instead of a core subscription (at least once)',
  },
);

type JetStreamConfig = Static<typeof jetstreamSchema>;

const configSchema = s.object(
  {
    hosts: hostsSchema,
    subject: s.string({ minLength: 1, pattern: '^[^\\s]+$', description: 'subject to subscribe to; `*` and `>` wildcards allowed' }),
    queue: s.string({
      minLength: 1,
      pattern: '^[^\\s]+$',
      description: 'queue group: each message goes to one member of the group (processes with the same config share the work); not with jetstream',
    }),
    options: optionsSchema,
    jetstream: jetstreamSchema,
  },
  { description: 'Subscribes to a NATS subject, or consumes a JetStream stream with acks.', required: ['hosts', 'subject'] },
);

type NatsOnrampConfig = Static<typeof configSchema>;

/** The type's `validate`, which `create` runs too. */
function validate(config: NatsOnrampConfig): void {
  validateOptions(config.options);
  if (config.jetstream && config.queue !== undefined) {
    throw new Error('queue and jetstream do not go together: processes share a JetStream consumer by using the same jetstream.durable');
  }
}

/** How long one JetStream pull waits for messages before the next is sent (nats.js's minimum is 1 s). */
const FETCH_EXPIRES_MS = 5000;
/** Messages awaiting their events' acks, beyond which the oldest are forgotten (the server redelivers them after ack_wait). */
const MAX_TRACKED = 65_536;
/** The stream key of every frame: each message is complete in itself (`end: true`), so one key serves all. */
const STREAM = 'nats';
/** Messages given back on close come again after this delay: by then this connection (and its pull request) is gone. */
const CLOSE_NAK_DELAY_MS = 1000;

/**
 * nats: subscribes to `subject` (wildcards allowed), optionally in a queue
 * group (`queue`: the servers hand each message to one member of the group,
 * so several eddy processes with the same config share the work). Every
 * message is one frame, complete in itself: the preprocessors see one
 * message at a time and are flushed after it, so a message never mixes with
 * the next. Meta `nats`: `reply` (the reply subject, when the sender set
 * one) and `headers` (name to list of values, when the message has any).
 *
 * Core NATS is at most once: the server pushes, has no acks, and drops what
 * a slow or absent subscriber cannot take. While the circuit breaker is
 * triggered the subscription stays, and what keeps arriving is held in
 * memory by the machinery and delivered, in order, on restore.
 *
 * With `jetstream`, the onramp reads a durable pull consumer of a stream
 * instead, and is transactional: a message is acked once every event it
 * produced was acked, nak'ed (redelivered) as soon as one failed, and
 * terminated (never redelivered) when it could not be decoded (it went to
 * `err`). It pulls `batch` messages at a time and pulls no more while the
 * breaker is triggered: real backpressure, with at most one batch held.
 */
export const natsOnramp: OnrampType<NatsOnrampConfig> = {
  name: 'nats',
  defaultCodec: 'json',
  // a queue group or a shared JetStream durable consumer shares the messages; a plain subscription would see each one in every worker
  placement: (config) => (config.queue !== undefined || config.jetstream !== undefined ? 'every-worker' : 'one-worker'),
  example: { hosts: ['127.0.0.1:4222'], subject: 'eddy.in', queue: 'eddy' },
  configSchema,
  validate,
  async create(config, ctx) {
    validate(config);
    const client = await natsConnect(config.hosts, config.options, `eddy ${ctx.url}`);
    const originUri = `svc-nats://${originHost(config.hosts[0])}/${config.subject}`;
    try {
      if (!config.jetstream) return coreSource(client, config, ctx, originUri);
      const consumer = await bindConsumer(client, config.subject, config.jetstream);
      return new JetStreamSource(client, consumer, config.jetstream, ctx, originUri);
    } catch (err) {
      await closeConnection(client.nc, ctx.logger, ctx.url);
      throw err;
    }
  },
};

/** A zero-copy Buffer over a message's payload. */
function payload(data: Uint8Array): Buffer {
  return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
}

function coreMeta(msg: Msg): Meta {
  const nats: Meta = {};
  if (msg.reply) nats.reply = msg.reply;
  const headers = headersMeta(msg.headers);
  if (headers) nats.headers = headers;
  return { nats };
}

/**
 * Core NATS: a plain (or queue group) subscription while the machinery is
 * subscribed; nats.js subscribes again by itself after a reconnect.
 */
function coreSource(client: NatsClient, config: NatsOnrampConfig, ctx: OnrampContext, originUri: string): OnrampSource {
  const { nc } = client;
  let subscriber: Subscriber<Frame> | undefined;
  let closing = false;
  endWhenGivenUp(client, ctx, () => (closing ? undefined : subscriber));
  const frames = new Observable<Frame>((sub) => {
    subscriber = sub;
    const subscription: Subscription = nc.subscribe(config.subject, {
      queue: config.queue,
      callback: (err: Error | null, msg: Msg) => {
        // an error here ends the subscription (a permissions violation): the onramp cannot go on
        if (err) return sub.error(new Error(`subscription to ${config.subject} ended: ${describe(err)}`));
        sub.next({ stream: STREAM, data: payload(msg.data), end: true, originUri, meta: coreMeta(msg) });
      },
    });
    return () => {
      subscriber = undefined;
      if (!nc.isClosed()) subscription.unsubscribe();
    };
  });
  return {
    frames,
    close: () => {
      closing = true;
      return closeConnection(nc, ctx.logger, ctx.url);
    },
  };
}

/**
 * JetStream: a durable pull consumer, bound (or created) in `create`. Pulls
 * batches while the machinery is subscribed and the breaker is not
 * triggered; the acks and fails of the events settle their messages.
 */
class JetStreamSource implements OnrampSource {
  readonly transactional = true;
  readonly frames: Observable<Frame>;
  /** messages whose events are not all acked yet: acked when they are, nak'ed at the first fail, terminated when undecodable */
  private readonly settlements = new Settlements<JsMsg>((msg, outcome) => this.settle(msg, outcome), MAX_TRACKED);
  private subscriber: Subscriber<Frame> | undefined;
  private paused = false;
  private closing = false;
  /** a pull loop runs */
  private running = false;
  /** the batch being pulled, to stop it */
  private batch: ConsumerMessages | undefined;
  /** the wait before pulling again after a failed pull */
  private retry: RxSubscription | undefined;
  private readonly backoff = new Backoff(100, 5000);

  constructor(
    private readonly client: NatsClient,
    private readonly consumer: Consumer,
    private readonly js: JetStreamConfig,
    private readonly ctx: OnrampContext,
    private readonly originUri: string,
  ) {
    endWhenGivenUp(client, ctx, () => (this.closing ? undefined : this.subscriber));
    this.frames = new Observable<Frame>((subscriber) => {
      this.subscriber = subscriber;
      void this.pull();
      return () => {
        this.subscriber = undefined;
        this.stopPulling();
      };
    });
  }

  pause(): void {
    // the batch in flight still arrives (the machinery holds it); no further pull is sent
    this.paused = true;
  }

  resume(): void {
    this.paused = false;
    void this.pull();
  }

  /** reading: a pull loop runs (a fetch may be in flight); it stops after its batch once paused */
  inputs(): SourceInputs {
    return { open: 1, reading: this.running ? 1 : 0 };
  }

  onAck(id: EventId): void {
    this.settlements.ack(id);
  }

  onFail(id: EventId): void {
    this.settlements.fail(id);
  }

  async close(): Promise<void> {
    this.closing = true;
    this.stopPulling();
    // what is still unacked goes back to the server now, for another member or the next run, instead of after ack_wait
    for (const msg of this.settlements.forgetAll()) this.respond(() => msg.nak(CLOSE_NAK_DELAY_MS));
    await closeConnection(this.client.nc, this.ctx.logger, this.ctx.url);
  }

  /** Pulls batch after batch until unsubscribed, paused or closed; a failed pull is retried after a back-off. */
  private async pull(): Promise<void> {
    if (this.running) return;
    this.running = true;
    const { js, ctx } = this;
    try {
      while (this.subscriber && !this.paused && !this.closing) {
        const to = this.subscriber;
        try {
          this.batch = await this.consumer.fetch({ max_messages: js.batch, expires: FETCH_EXPIRES_MS });
          for await (const msg of this.batch) this.deliver(msg, to);
          this.backoff.reset();
        } catch (err) {
          // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- checked before the await above; closed or unsubscribed meanwhile
          if (this.closing || !this.subscriber) break;
          const wait = this.backoff.next();
          ctx.logger.warn(`${ctx.url}: pulling from JetStream consumer ${js.stream}/${js.durable} failed: ${describe(err)}; again in ${wait} ms`);
          await new Promise<void>((resolve) => (this.retry = ctx.scheduler.schedule(() => resolve(), wait)));
          this.retry = undefined;
        } finally {
          this.batch = undefined;
        }
      }
    } finally {
      this.running = false;
    }
  }

  private stopPulling(): void {
    this.batch?.stop();
    this.retry?.unsubscribe();
  }

  private deliver(msg: JsMsg, to: Subscriber<Frame>): void {
    const nats: Meta = { jetstream: { stream: msg.info.stream, sequence: msg.seq, delivered: msg.info.deliveryCount } };
    // jetstream's declarations take MsgHdrs from '@nats-io/nats-core/internal', which Node10 resolution cannot follow (any there)
    const headers = headersMeta(msg.headers as MsgHdrs | undefined);
    if (headers) nats.headers = headers;
    to.next({ stream: STREAM, data: payload(msg.data), end: true, originUri: this.originUri, meta: { nats }, done: this.settlements.done(msg) });
  }

  /** All its events acked: ack. A failed event: nak, the whole message comes again, now. Undecodable (on `err` now): term, never redelivered. */
  private settle(msg: JsMsg, outcome: Outcome): void {
    this.respond(() => (outcome === 'acked' ? msg.ack() : outcome === 'failed' ? msg.nak() : msg.term()));
  }

  private respond(act: () => void): void {
    try {
      act();
    } catch (err) {
      // the connection is closed: the server redelivers after ack_wait
      this.ctx.logger.debug(`${this.ctx.url}: cannot answer a JetStream message: ${describe(err)}`);
    }
  }
}

/**
 * The durable pull consumer: the existing one when it fits (pull, explicit
 * acks, filtered on `subject` or unfiltered), else created. Errors name the
 * stream, the consumer and what is wrong, so the activation says it.
 */
async function bindConsumer({ nc }: NatsClient, subject: string, js: JetStreamConfig): Promise<Consumer> {
  const where = `JetStream consumer ${js.stream}/${js.durable}`;
  let jsm;
  try {
    jsm = await jetstreamManager(nc, { timeout: 5000 });
  } catch (err) {
    throw new Error(`JetStream is not available on the server: ${describe(err)}`);
  }
  let info;
  try {
    info = await jsm.consumers.info(js.stream, js.durable);
  } catch (err) {
    const code = err instanceof JetStreamApiError ? err.code : undefined;
    if (code === JetStreamApiCodes.StreamNotFound) throw new Error(`stream '${js.stream}' not found (eddy does not create streams)`);
    if (code !== JetStreamApiCodes.ConsumerNotFound) throw new Error(`${where}: ${describe(err)}`);
  }
  if (info) {
    const c = info.config;
    if (c.deliver_subject) throw new Error(`${where} is a push consumer; eddy reads pull consumers`);
    if (c.ack_policy !== AckPolicy.Explicit) throw new Error(`${where} has ack_policy '${c.ack_policy}'; eddy needs 'explicit'`);
    const filter = c.filter_subject ?? '';
    if (filter !== '' && filter !== subject) throw new Error(`${where} filters on '${filter}', not on subject '${subject}'`);
  } else {
    try {
      await jsm.consumers.add(js.stream, {
        durable_name: js.durable,
        ack_policy: AckPolicy.Explicit,
        deliver_policy: DeliverPolicy.All,
        filter_subject: subject,
        ack_wait: nanos(durationMs(js.ack_wait_ms, 'jetstream.ack_wait_ms', ACK_WAIT)),
      });
    } catch (err) {
      throw new Error(`${where}: cannot create it: ${describe(err)}`);
    }
  }
  try {
    return await jetstream(nc).consumers.get(js.stream, js.durable);
  } catch (err) {
    throw new Error(`${where}: ${describe(err)}`);
  }
}

/** When nats.js gives up reconnecting (max_reconnects), the source ends with an error, unless it is closing anyway. */
function endWhenGivenUp(client: NatsClient, ctx: OnrampContext, reading: () => Subscriber<Frame> | undefined): void {
  watchStatus(client, ctx.logger, ctx.url, {
    down: () => undefined,
    up: () => undefined,
    closed: (err) => reading()?.error(new Error(`the NATS connection closed for good${err ? `: ${describe(err)}` : ''} (max_reconnects reached)`)),
  });
}
