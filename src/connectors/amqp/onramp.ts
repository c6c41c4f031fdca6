import type { Channel, ChannelModel, ConsumeMessage } from 'amqplib';
import { Observable, type Subscriber } from '../../core/rx';
import type { EventId } from '../../core/event';
import type { Frame, OnrampContext, OnrampSource, OnrampType } from '../connector';
import { Reconnector } from '../_shared/reconnector';
import { Settlements, type Outcome } from '../_shared/settlement';
import { s } from '../../schema/typed';
import type { Static } from '../../schema/typed';
import { amqpAddr, closeConnection, describe, openConnection, redact, serverOf, validateAddr } from './client';

const configSchema = s.object(
  {
    amqp_addr: amqpAddr(),
    exchange: s.string({
      default: '',
      description: 'exchange to bind the queue to; empty: the default exchange, which routes by queue name and takes no binding',
    }),
    routing_key: s.string({ default: '', description: 'routing key (binding pattern for a topic exchange) of the binding' }),
    queue_name: s.string({ minLength: 1, description: 'queue to declare, bind and consume' }),
    queue_options: s.object(
      {
        passive: s.boolean({ default: false, description: 'only check that the queue exists (activation fails if not); the other options are then ignored' }),
        durable: s.boolean({ default: false, description: 'the queue survives a broker restart (its persistent messages too)' }),
        exclusive: s.boolean({ default: false, description: 'the queue belongs to this connection and is deleted when it closes' }),
        auto_delete: s.boolean({ default: false, description: 'the queue is deleted when its last consumer goes away' }),
        nowait: s.boolean({
          default: false,
          description: 'must be false: eddy always waits for the server to confirm the declaration, so that a failed one fails the activation',
        }),
      },
      { description: 'how the queue is declared' },
    ),
    prefetch: s.integer({
      minimum: 1,
      maximum: 65535,
      default: 64,
      description: 'messages delivered to eddy and not yet acked, at most (AMQP basic.qos prefetch count)',
    }),
    requeue_failed: s.boolean({
      default: true,
      description: 'a message whose event failed is requeued (and redelivered); false: rejected (dead-lettered if the queue has a dead-letter exchange)',
    }),
  },
  {
    description: 'Consumes an AMQP 0.9.1 queue (RabbitMQ), settling each message once its events are acked or failed.',
    required: ['amqp_addr', 'queue_name', 'queue_options'],
  },
);

export type AmqpOnrampConfig = Static<typeof configSchema>;

/**
 * amqp (AMQP 0.9.1 consumer, e.g. RabbitMQ): declares `queue_name` (or,
 * `passive`, checks that it exists), binds it to `exchange` with
 * `routing_key`, and consumes it with manual acknowledgements and a
 * `prefetch` limit. Each message is one frame (its own stream, so
 * preprocessors never carry state from one message to the next).
 *
 * Delivery (the original acked every message on receipt; eddy acks on
 * delivery, so a message the broker forgot was really delivered): the
 * events are transactional; when every event a message made is acked, the
 * message is acked to the broker; the first fail nacks it, requeued unless
 * `requeue_failed` is false. A message that made no event because it could
 * not be decoded is rejected without requeue (dead-lettered if the queue
 * has a dead-letter exchange); one that decoded to nothing is acked.
 *
 * Opened in `create`: a server that cannot be reached, a queue that cannot
 * be declared or a binding the server refuses fails the activation.
 * Afterwards a lost connection (or channel, or a consumer the server
 * cancelled) is reopened with back-off, declaring and binding again; the
 * messages not yet acked are redelivered by the broker, and the acks and
 * fails of events read over the old connection are dropped (AMQP acks are
 * per channel): at least once. pause() cancels the consumer and resume()
 * consumes again; what is already delivered is bounded by `prefetch`.
 */
export const amqpOnramp: OnrampType<AmqpOnrampConfig> = {
  name: 'amqp',
  defaultCodec: 'json',
  // competing consumers of one queue; an exclusive queue belongs to one connection (docs/workers.md)
  placement: (config) => (config.queue_options.exclusive ? 'one-worker' : 'every-worker'),
  example: {
    amqp_addr: 'amqp://guest:guest@127.0.0.1:5672/%2f',
    exchange: 'amq.topic',
    routing_key: 'events.#',
    queue_name: 'eddy-events',
    queue_options: { durable: true },
  },
  configSchema,
  validate(config) {
    validateAddr(config.amqp_addr);
    if (config.queue_options.nowait) {
      throw new Error(
        'queue_options.nowait: true is not supported: eddy waits for the declaration to be confirmed, so that a queue that cannot be declared fails the activation',
      );
    }
  },
  async create(config, ctx) {
    const consumer = new Consumer(config, ctx);
    await consumer.open();
    return consumer;
  },
};

/** One broker message on its way through eddy, with the channel it came on: acks go back on that channel only. */
interface Delivered {
  readonly message: ConsumeMessage;
  readonly channel: Channel;
}

/** The source of one amqp onramp instance: a connection, a channel and a consumer, reopened when lost. */
class Consumer implements OnrampSource {
  readonly transactional = true;
  readonly frames: Observable<Frame>;
  private connection: ChannelModel | undefined;
  private channel: Channel | undefined;
  private consumerTag: string | undefined;
  private subscriber: Subscriber<Frame> | undefined;
  private paused = false;
  private closed = false;
  /** consume and cancel calls, one at a time and in order */
  private syncing: Promise<void> = Promise.resolve();
  /** the messages in flight: acked when all their events are, nacked at the first fail */
  private readonly settlements = new Settlements<Delivered>((delivered, outcome) => this.settle(delivered, outcome));
  private streams = 0;
  private readonly originUri: string;
  private readonly where: string;
  private readonly reconnector: Reconnector<{ connection: ChannelModel; channel: Channel }>;

  constructor(
    private readonly config: AmqpOnrampConfig,
    private readonly ctx: OnrampContext,
  ) {
    this.originUri = `svc-amqp://${serverOf(config.amqp_addr)}/${encodeURIComponent(config.queue_name)}`;
    this.where = `queue '${config.queue_name}' at ${redact(config.amqp_addr)}`;
    this.reconnector = new Reconnector({
      label: `amqp onramp ${ctx.url}: ${this.where}`,
      again: 'consuming again',
      logger: ctx.logger,
      scheduler: ctx.scheduler,
      connect: () => this.connect(),
      connected: ({ connection, channel }) => this.attach(connection, channel),
      describe,
    });
    this.frames = new Observable<Frame>((subscriber) => {
      this.subscriber = subscriber;
      this.sync();
      return () => {
        this.subscriber = undefined;
        this.sync();
      };
    });
  }

  /** Connects, declares and binds; a failure is the activation's. */
  async open(): Promise<void> {
    const { connection, channel } = await this.connect();
    this.attach(connection, channel);
  }

  pause(): void {
    this.paused = true;
    this.sync();
  }

  resume(): void {
    this.paused = false;
    this.sync();
  }

  onAck(id: EventId): void {
    this.settlements.ack(id);
  }

  onFail(id: EventId): void {
    this.settlements.fail(id);
  }

  async close(): Promise<void> {
    this.closed = true;
    const late = await this.reconnector.stop();
    if (late) await closeConnection(late.connection, late.channel);
    const { connection, channel } = this;
    this.connection = this.channel = this.consumerTag = undefined;
    this.settlements.forgetAll();
    // the acks sent so far reach the broker first; closing returns every unacked message to the queue
    if (connection) await closeConnection(connection, channel);
  }

  /**
   * All its events acked: ack. The first fail: the message comes back (or
   * goes to the dead letters) with all its events. Undecodable (its error
   * went to `err`): rejected, dead-lettered if the queue has a dead-letter exchange.
   */
  private settle({ message, channel }: Delivered, outcome: Outcome): void {
    // a message of an earlier channel was returned to the queue when that channel went: it is redelivered, not settled
    if (channel !== this.channel) return;
    const how = outcome === 'acked' ? 'ack' : outcome === 'failed' && this.config.requeue_failed ? 'requeue' : 'reject';
    try {
      if (how === 'ack') channel.ack(message);
      else channel.nack(message, false, how === 'requeue');
    } catch (err) {
      // the channel is closing: the broker redelivers the message
      this.ctx.logger.debug(`amqp onramp ${this.ctx.url}: cannot ${how} a message: ${describe(err)}`);
    }
  }

  /** The frame of one message; `done` learns which events it made. */
  private frame(message: ConsumeMessage, channel: Channel): Frame {
    return {
      stream: ++this.streams,
      data: message.content,
      end: true,
      originUri: this.originUri,
      meta: { amqp: messageMeta(message) },
      done: this.settlements.done({ message, channel }),
    };
  }

  private async connect(): Promise<{ connection: ChannelModel; channel: Channel }> {
    const { config } = this;
    const connection = await openConnection(config.amqp_addr, `eddy ${this.ctx.url}`);
    // errors are reported by 'close' and the failed calls; without a listener an 'error' event would be thrown
    connection.on('error', (err) => this.ctx.logger.debug(`amqp onramp ${this.ctx.url}: ${describe(err)}`));
    try {
      const channel = await connection.createChannel();
      channel.on('error', (err) => this.ctx.logger.debug(`amqp onramp ${this.ctx.url}: channel: ${describe(err)}`));
      await channel.prefetch(config.prefetch);
      const q = config.queue_options;
      const declare = q.passive
        ? channel.checkQueue(config.queue_name)
        : channel.assertQueue(config.queue_name, { durable: q.durable, exclusive: q.exclusive, autoDelete: q.auto_delete });
      await declare.catch((err: unknown) => {
        throw new Error(`cannot ${q.passive ? 'find' : 'declare'} ${this.where}: ${describe(err)}`);
      });
      // every queue is bound to the default exchange by its name; the server refuses explicit bindings to it
      if (config.exchange !== '') {
        await channel.bindQueue(config.queue_name, config.exchange, config.routing_key).catch((err: unknown) => {
          throw new Error(`cannot bind ${this.where} to exchange '${config.exchange}' with routing key '${config.routing_key}': ${describe(err)}`);
        });
      }
      return { connection, channel };
    } catch (err) {
      await closeConnection(connection);
      throw err;
    }
  }

  private attach(connection: ChannelModel, channel: Channel): void {
    this.connection = connection;
    this.channel = channel;
    this.consumerTag = undefined;
    const lost = (why: string) => () => {
      if (this.channel === channel) this.lost(why);
    };
    connection.on('close', lost('the connection closed'));
    channel.on('close', lost('the channel closed'));
    this.sync();
  }

  /** Forgets the connection and what came over it; its unacked messages go back to the queue. */
  private detach(): void {
    const { connection, channel } = this;
    this.connection = this.channel = this.consumerTag = undefined;
    this.settlements.forgetAll();
    if (connection) void closeConnection(connection, channel);
  }

  private lost(why: string): void {
    this.detach();
    if (this.closed) return;
    this.reconnector.lost(why);
  }

  /** Brings the consumer in line with what is wanted, one broker call at a time. */
  private sync(): void {
    this.syncing = this.syncing.then(
      () => this.reconcile(),
      () => this.reconcile(),
    );
  }

  private async reconcile(): Promise<void> {
    const channel = this.channel;
    if (!channel) return;
    // cancelling the last consumer of an auto-delete queue deletes it: there, pausing leaves the
    // consumer in place and the prefetch limit alone stops the deliveries (the machinery holds the few in flight)
    const pauses = !this.config.queue_options.auto_delete;
    const wanted = this.subscriber !== undefined && !(this.paused && pauses);
    try {
      if (wanted && this.consumerTag === undefined) {
        const { consumerTag } = await channel.consume(this.config.queue_name, (message) => this.deliver(message, channel), { noAck: false });
        if (this.channel === channel) this.consumerTag = consumerTag;
      } else if (!wanted && this.consumerTag !== undefined) {
        const tag = this.consumerTag;
        this.consumerTag = undefined;
        await channel.cancel(tag);
      }
    } catch (err) {
      // the channel went away meanwhile ('close' reconnects) or refused: start over on a new connection
      if (this.channel === channel) this.lost(`cannot ${wanted ? 'consume' : 'cancel'}: ${describe(err)}`);
    }
  }

  private deliver(message: ConsumeMessage | null, channel: Channel): void {
    if (channel !== this.channel) return;
    // null: the server cancelled the consumer (the queue was deleted): reconnect, which declares it again
    if (message === null) return this.lost('the server cancelled the consumer');
    const frame = this.frame(message, channel);
    if (this.subscriber) this.subscriber.next(frame);
    // delivered after an unsubscribe (before the cancel took effect): back to the queue
    else channel.nack(message, false, true);
  }
}

/**
 * Meta `amqp` of a consumed message: `delivery` (where it came from),
 * `headers` and `properties` (the AMQP basic properties that are set, in
 * snake case). The offramp reads `amqp.headers` (and `amqp.routing_key`,
 * which is deliberately not set here: a passthrough to an amqp offramp keeps
 * the headers but publishes with the offramp's own routing key).
 */
function messageMeta(message: ConsumeMessage): Record<string, unknown> {
  const { fields, properties } = message;
  const props: Record<string, unknown> = {};
  const names: [keyof typeof properties, string][] = [
    ['contentType', 'content_type'],
    ['contentEncoding', 'content_encoding'],
    ['deliveryMode', 'delivery_mode'],
    ['priority', 'priority'],
    ['correlationId', 'correlation_id'],
    ['replyTo', 'reply_to'],
    ['expiration', 'expiration'],
    ['messageId', 'message_id'],
    ['timestamp', 'timestamp'],
    ['type', 'type'],
    ['userId', 'user_id'],
    ['appId', 'app_id'],
  ];
  for (const [from, to] of names) if (properties[from] !== undefined) props[to] = properties[from];
  return {
    delivery: { exchange: fields.exchange, routing_key: fields.routingKey, delivery_tag: fields.deliveryTag, redelivered: fields.redelivered },
    headers: properties.headers ?? {},
    properties: props,
  };
}
