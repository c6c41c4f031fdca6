import type { ClientConfig, Message, PubSub, Subscription } from '@google-cloud/pubsub';
import { checkInstalled, requirePackage } from '../../core/packages';
import { Observable, type Subscriber, type Subscription as RxSubscription } from '../../core/rx';
import type { EventId, Meta } from '../../core/event';
import type { Frame, OnrampContext, OnrampSource, OnrampType, SourceInputs } from '../connector';
import { Backoff } from '../_shared/backoff';
import { Settlements, type Outcome } from '../_shared/settlement';
import { s } from '../../schema/typed';
import type { Static } from '../../schema/typed';
import { checkNames, clientPlan, describe, subscriptionProperties, type ClientPlan } from './client';
import { authClientOf } from './credentials';

// Google's client is loaded at activation (see create); publishing checks that it is there
checkInstalled('@google-cloud/pubsub', 'the pubsub onramp');

const configSchema = s.object(
  {
    ...subscriptionProperties,
    max_messages: s.integer({
      minimum: 1,
      maximum: 100000,
      default: 256,
      description: 'messages delivered to eddy and not yet acked or nacked, at most (flow control); the client stops pulling at this limit',
    }),
    max_bytes: s.integer({
      minimum: 1024,
      default: 67108864,
      description:
        'bytes of message data delivered to eddy and not yet acked or nacked, at most (flow control; one message is let through even when it is larger)',
    }),
    on_decode_error: {
      // `type` beside the enum, as it always was: a value that is not a string is told "must be string"
      type: 'string',
      ...s.literals(['ack', 'nack'], {
        default: 'ack',
        description:
          'what becomes of a message that could not be decoded (its error, with the first KiB of it, goes to the err port): ack (it is gone) or nack (Pub/Sub redelivers it; use with a dead-letter topic on the subscription)',
      }),
    },
  },
  { description: 'Pulls messages from a Google Cloud Pub/Sub subscription, acking each once its events are acked.', required: ['subscription'] },
);

export type PubsubOnrampConfig = Static<typeof configSchema>;

/** The activation's check that the subscription exists: one request, this long at most. */
const PROBE_TIMEOUT_MS = 5000;
/** The whole activation (credentials, project lookup, the probe) gives up after this long. */
const ACTIVATION_TIMEOUT_MS = 10_000;
/** Closing the subscriber: the nacks of the messages still held are sent within this, then the client lets go. */
const CLOSE_TIMEOUT_S = 5;

/**
 * pubsub (Google Cloud Pub/Sub subscriber): streaming pull on
 * `subscription` through the official client (`@google-cloud/pubsub`), with
 * its flow control (`max_messages`, `max_bytes`: messages delivered to eddy
 * and not yet acked, at most) and its lease management (the ack deadline of
 * a message in flight is extended until eddy settles it). Each message is
 * one frame, its own stream, so preprocessors never carry state from one
 * message to the next. Credentials: `pem`, else Application Default
 * Credentials (GOOGLE_APPLICATION_CREDENTIALS, ...); with
 * PUBSUB_EMULATOR_HOST set the client talks plaintext to that emulator and
 * sends no credentials.
 *
 * Delivery: the events are transactional. A message is acked to Pub/Sub
 * when every event it made is acked, and nacked at the first fail (Pub/Sub
 * redelivers it, after the subscription's retry policy). A message that
 * made no event because it could not be decoded (its error went to `err`)
 * is acked or nacked as `on_decode_error` says; one that decoded to nothing
 * is acked.
 *
 * The activation fails (a 400 naming the onramp) when the credentials file
 * cannot be read, or when the subscription does not exist or cannot be
 * reached within a bounded time. pause() holds the messages that arrive
 * while the breaker is triggered (they stay leased; they count against the
 * flow control, so the client stops pulling once `max_messages` are out)
 * and resume() passes them on in order: none is nacked or lost.
 */
export const pubsubOnramp: OnrampType<PubsubOnrampConfig> = {
  name: 'pubsub',
  defaultCodec: 'json',
  placement: 'every-worker', // pulls on one subscription share the messages (docs/workers.md)
  example: { subscription: 'projects/my-project/subscriptions/eddy-events', pem: '/etc/eddy/pubsub-service-account.json', max_messages: 256 },
  configSchema,
  validate(config) {
    checkNames(config);
  },
  async create(config, ctx) {
    const plan = clientPlan(config);
    // loaded on first use: Google's client (gRPC, protobufs, auth) takes seconds and tens of MB to load,
    // which an eddy that runs no pubsub onramp should not pay at every start
    const lib = requirePackage<typeof import('@google-cloud/pubsub')>('@google-cloud/pubsub', 'the pubsub onramp');
    // credentials eddy read and checked, as the client of their type (never a file for the auth library to interpret)
    // (typed as google-gax's copy of the auth library, which Pub/Sub's GoogleAuth, made from its own copy, does not use)
    if (plan.credentials && config.pem !== undefined)
      plan.options.authClient = authClientOf(plan.credentials, config.pem) as unknown as ClientConfig['authClient'];
    const source = new PubsubSource(config, ctx, plan, lib);
    try {
      await source.open();
    } catch (err) {
      await source.close();
      throw err;
    }
    return source;
  },
};

/** The source of one pubsub onramp instance: a client, and a streaming subscriber while `frames` is subscribed. */
class PubsubSource implements OnrampSource {
  readonly transactional = true;
  readonly frames: Observable<Frame>;
  private readonly client: PubSub;
  private subscription: Subscription | undefined;
  private subscriber: Subscriber<Frame> | undefined;
  private paused = false;
  /** messages that arrived while paused, in order */
  private held: Message[] = [];
  /** the messages in flight: acked when all their events are, nacked at the first fail */
  private readonly settlements = new Settlements<Message>((message, outcome) => this.settle(message, outcome));
  private streams = 0;
  private originUri: string;
  private name: string;
  private closed = false;
  private closing: Promise<void> | undefined;
  /** a reopen after the client gave up on its stream (a non-retryable error) */
  private retry: RxSubscription | undefined;
  private readonly backoff = new Backoff(100, 5000);
  /** resolves two event-loop turns (check phases) after the streaming pull was last opened (see stop()) */
  private setupSettled: Promise<void> = Promise.resolve();

  constructor(
    private readonly config: PubsubOnrampConfig,
    private readonly ctx: OnrampContext,
    plan: ClientPlan,
    private readonly lib: typeof import('@google-cloud/pubsub'),
  ) {
    this.client = new lib.PubSub(plan.options);
    this.name = plan.name;
    this.originUri = origin(plan.name);
    this.frames = new Observable<Frame>((subscriber) => {
      this.subscriber = subscriber;
      this.start();
      return () => {
        this.subscriber = undefined;
        void this.stop();
      };
    });
  }

  /**
   * Checks that the subscription exists (and so that the service answers and
   * the credentials are accepted): one GetSubscription request, no retries,
   * within a bounded time.
   */
  async open(): Promise<void> {
    const probe = this.client.subscription(this.name);
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${ACTIVATION_TIMEOUT_MS} ms`)), ACTIVATION_TIMEOUT_MS);
    });
    try {
      const [metadata] = await Promise.race([probe.getMetadata({ timeout: PROBE_TIMEOUT_MS, retry: { retryCodes: [] } }), deadline]);
      // the full name, also when the project came from the auth library
      if (typeof metadata.name === 'string' && metadata.name !== '') {
        this.name = metadata.name;
        this.originUri = origin(metadata.name);
      }
    } catch (err) {
      throw new Error(`cannot use subscription '${this.config.subscription}': ${describe(err)}`);
    } finally {
      clearTimeout(timer);
    }
  }

  pause(): void {
    this.paused = true;
  }

  /** the streaming pull cannot be paused (its flow control bounds it): what arrives while paused is held here */
  inputs(): SourceInputs {
    return { open: this.subscription ? 1 : 0, reading: this.subscription ? 1 : 0, held: this.held.length };
  }

  resume(): void {
    this.paused = false;
    const held = this.held;
    this.held = [];
    for (const message of held) this.deliver(message);
  }

  onAck(id: EventId): void {
    this.settlements.ack(id);
  }

  onFail(id: EventId): void {
    this.settlements.fail(id);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.subscriber = undefined;
    await this.stop();
    this.settlements.forgetAll();
    // the gRPC channels; bounded like the subscriber's close
    await this.client.close().catch((err: unknown) => this.ctx.logger.debug(`pubsub onramp ${this.ctx.url}: closing the client: ${describe(err)}`));
  }

  /** The first fail: the message comes back with all its events. Undecodable: as `on_decode_error` says. */
  private settle(message: Message, outcome: Outcome): void {
    const ack = outcome === 'acked' || (outcome === 'undecodable' && this.config.on_decode_error === 'ack');
    // both are batched by the client; a message its subscriber already let go (closed, lease expired) is a no-op
    if (ack) message.ack();
    else message.nack();
  }

  /** Opens the streaming pull: the client starts pulling when a message listener is attached. */
  private start(): void {
    if (this.closed || this.subscription) return;
    const subscription = this.client.subscription(this.name, {
      flowControl: { maxMessages: this.config.max_messages, maxBytes: this.config.max_bytes, allowExcessMessages: false },
      // on close (deactivation), what eddy still holds goes back to Pub/Sub at once rather than at its ack deadline
      closeOptions: { behavior: 'NACK', timeout: this.lib.Duration.from({ seconds: CLOSE_TIMEOUT_S }) },
    });
    this.subscription = subscription;
    this.setupSettled = new Promise((resolve) => setImmediate(() => setImmediate(resolve)));
    subscription.on('message', (message: Message) => {
      if (this.subscription !== subscription) return message.nack();
      this.backoff.reset();
      if (this.paused) this.held.push(message);
      else this.deliver(message);
    });
    subscription.on('error', (err) => {
      if (this.subscription === subscription) this.ctx.logger.warn(`pubsub onramp ${this.ctx.url}: ${this.name}: ${describe(err)}`);
    });
    // the client closes its subscriber itself after an error it does not retry (the subscription was deleted, access revoked)
    subscription.on('close', () => {
      if (this.subscription !== subscription || this.closed || this.subscriber === undefined) return;
      const delay = this.backoff.next();
      this.ctx.logger.warn(`pubsub onramp ${this.ctx.url}: the subscriber of ${this.name} closed; pulling again in ${delay} ms`);
      this.retry?.unsubscribe();
      this.retry = this.ctx.scheduler.schedule(() => {
        this.retry = undefined;
        if (this.subscription === subscription && !this.closed) subscription.open();
      }, delay);
    });
  }

  /** Closes the streaming pull: held messages are nacked (they were never passed on), and so are the ones in flight. */
  private stop(): Promise<void> {
    this.retry?.unsubscribe();
    this.retry = undefined;
    const subscription = this.subscription;
    this.subscription = undefined;
    for (const message of this.held.splice(0)) message.nack();
    if (!subscription) return this.closing ?? Promise.resolve();
    subscription.on('error', () => undefined);
    // The streaming pulls the client opens when the listener is attached are gRPC calls whose metadata
    // is prepared asynchronously; grpc-js (1.14) starts such a call even when it was cancelled before
    // its metadata was ready, and the started call's HTTP/2 stream then outlives the client and keeps
    // the process alive. Closing the subscriber only after the setup's turn lets every call start
    // first, so that closing cancels started calls: a deactivation in the same turn as the
    // activation included. (Removing the last message listener closes the subscriber too, so the
    // listener stays until then; it nacks what still arrives, since this.subscription moved on.)
    this.closing = this.setupSettled
      .then(() => subscription.close())
      .catch((err: unknown) => this.ctx.logger.debug(`pubsub onramp ${this.ctx.url}: closing the subscriber: ${describe(err)}`));
    return this.closing;
  }

  /** The frame of one message; `done` learns which events it made. */
  private deliver(message: Message): void {
    if (!this.subscriber) return message.nack();
    const frame: Frame = {
      stream: ++this.streams,
      data: message.data,
      end: true,
      originUri: this.originUri,
      meta: messageMeta(message),
      done: this.settlements.done(message),
    };
    this.subscriber.next(frame);
  }
}

/** `svc-pubsub://<project>/<subscription id>`, or `svc-pubsub://_/<id>` while the project is not known. */
function origin(name: string): string {
  const full = /^projects\/([^/]+)\/subscriptions\/([^/]+)$/.exec(name);
  return full ? `svc-pubsub://${encodeURIComponent(full[1])}/${encodeURIComponent(full[2])}` : `svc-pubsub://_/${encodeURIComponent(name)}`;
}

/**
 * The meta of a message: `message_id` and `acknowledgement_id` (the spec's),
 * `attributes` (the message's attributes, a record of strings, often used
 * for routing), `publish_time` (RFC 3339 with nanoseconds, as Pub/Sub keeps
 * it), and when set `ordering_key` and `delivery_attempt` (only counted on
 * subscriptions with a dead-letter policy).
 */
function messageMeta(message: Message): Meta {
  const meta: Meta = {
    message_id: message.id,
    acknowledgement_id: message.ackId,
    attributes: { ...message.attributes },
    publish_time: message.publishTime.toISOString(),
  };
  if (message.orderingKey) meta.ordering_key = message.orderingKey;
  if (message.deliveryAttempt > 0) meta.delivery_attempt = message.deliveryAttempt;
  return meta;
}
