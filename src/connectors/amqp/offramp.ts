import type { ChannelModel, ConfirmChannel, Options } from 'amqplib';
import type { EddyEvent } from '../../core/event';
import type { OfframpContext, OfframpType, Sink } from '../connector';
import { Reconnector } from '../_shared/reconnector';
import { s } from '../../schema/typed';
import type { Static } from '../../schema/typed';
import { amqpAddr, closeConnection, describe, openConnection, redact, validateAddr } from './client';

const configSchema = s.object(
  {
    amqp_addr: amqpAddr(),
    exchange: s.string({ default: '', description: 'exchange to publish to; empty: the default exchange, which routes to the queue named by the routing key' }),
    routing_key: s.string({ default: '', description: 'routing key of every message, unless the event sets meta `amqp.routing_key`' }),
    persistent: s.boolean({
      default: true,
      description: 'publish persistent messages (delivery mode 2): a durable queue keeps them across a broker restart',
    }),
  },
  { description: 'Publishes events to an AMQP 0.9.1 exchange (RabbitMQ) with publisher confirms.', required: ['amqp_addr'] },
);

export type AmqpOfframpConfig = Static<typeof configSchema>;

/**
 * amqp (AMQP 0.9.1 publisher, e.g. RabbitMQ): publishes every payload (each
 * batch member) to `exchange` with `routing_key` (meta `amqp.routing_key`
 * overrides it, `amqp.headers` become the message's headers) on a channel
 * in confirm mode. An event is acked (meta `time`, ms) when the broker has
 * confirmed every one of its messages, and fails when it refuses one (a
 * nack) or the channel goes before the confirm.
 *
 * Opened in `create`: a server that cannot be reached, or an `exchange`
 * that does not exist, fails the activation. A lost connection or channel
 * triggers the circuit breaker; sends while it is down fail (nothing is
 * buffered out of sight), the connection is reopened with back-off and the
 * breaker restored. The breaker is also triggered while the broker blocks
 * publishers (a memory or disk alarm) and while the client's write buffer
 * is full.
 */
export const amqpOfframp: OfframpType<AmqpOfframpConfig> = {
  name: 'amqp',
  defaultCodec: 'json',
  placement: 'every-worker', // publishers write in parallel (docs/workers.md)
  autoAck: false,
  example: { amqp_addr: 'amqp://guest:guest@127.0.0.1:5672/%2f', exchange: 'amq.topic', routing_key: 'events.out' },
  configSchema,
  validate(config) {
    validateAddr(config.amqp_addr);
  },
  async create(config, ctx) {
    const publisher = new Publisher(config, ctx);
    await publisher.open();
    return publisher;
  },
};

/** The sink of one amqp offramp instance: one connection with a confirm channel, reopened when lost. */
class Publisher implements Sink {
  private connection: ChannelModel | undefined;
  private channel: ConfirmChannel | undefined;
  /** the broker blocks publishers (connection.blocked) */
  private blocked = false;
  /** the client's write buffer is full: waiting for 'drain' */
  private full = false;
  private triggered = false;
  private closed = false;
  private readonly where: string;
  private readonly reconnector: Reconnector<{ connection: ChannelModel; channel: ConfirmChannel }>;

  constructor(
    private readonly config: AmqpOfframpConfig,
    private readonly ctx: OfframpContext,
  ) {
    this.where = `exchange '${config.exchange}' at ${redact(config.amqp_addr)}`;
    this.reconnector = new Reconnector({
      label: `amqp offramp ${ctx.url}: ${this.where}`,
      again: 'publishing again',
      logger: ctx.logger,
      scheduler: ctx.scheduler,
      connect: () => this.connect(),
      connected: ({ connection, channel }) => this.attach(connection, channel),
      describe,
    });
  }

  /** Connects and checks the exchange; a failure is the activation's. */
  async open(): Promise<void> {
    const { connection, channel } = await this.connect();
    this.attach(connection, channel);
  }

  send(payloads: Buffer[], event: EddyEvent): Promise<void> {
    const channel = this.channel;
    // down: the event fails back to its source rather than waiting in a buffer nobody bounds
    if (!channel) throw new Error(`amqp offramp: not connected to ${this.where}`);
    const started = performance.now();
    const meta = event.meta.amqp as { routing_key?: unknown; headers?: unknown } | undefined;
    const routingKey = typeof meta?.routing_key === 'string' ? meta.routing_key : this.config.routing_key;
    const options: Options.Publish = { persistent: this.config.persistent };
    if (meta?.headers !== null && typeof meta?.headers === 'object' && !Array.isArray(meta.headers)) options.headers = meta.headers;
    const confirms = payloads.map(
      (payload) =>
        new Promise<void>((resolve, reject) => {
          const room = channel.publish(this.config.exchange, routingKey, payload, options, (err) => {
            if (err) reject(new Error(`amqp offramp: ${this.where} did not take a message: ${describe(err)}`));
            else resolve();
          });
          if (!room && !this.full) this.fullUntilDrain(channel);
        }),
    );
    return Promise.all(confirms).then(() => {
      if (event.transactional) this.ctx.insight('ack', event, { time: performance.now() - started });
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    const late = await this.reconnector.stop();
    if (late) await closeConnection(late.connection, late.channel);
    const { connection, channel } = this;
    this.connection = this.channel = undefined;
    if (connection) await closeConnection(connection, channel);
  }

  private async connect(): Promise<{ connection: ChannelModel; channel: ConfirmChannel }> {
    const connection = await openConnection(this.config.amqp_addr, `eddy ${this.ctx.url}`);
    // errors are reported by 'close' and the failed calls; without a listener an 'error' event would be thrown
    connection.on('error', (err) => this.ctx.logger.debug(`amqp offramp ${this.ctx.url}: ${describe(err)}`));
    try {
      const channel = await connection.createConfirmChannel();
      channel.on('error', (err) => this.ctx.logger.warn(`amqp offramp ${this.ctx.url}: channel: ${describe(err)}`));
      // publishing to an exchange that does not exist closes the channel: refuse the activation instead
      if (this.config.exchange !== '') {
        await channel.checkExchange(this.config.exchange).catch((err: unknown) => {
          throw new Error(`cannot publish to ${this.where}: ${describe(err)}`);
        });
      }
      return { connection, channel };
    } catch (err) {
      await closeConnection(connection);
      throw err;
    }
  }

  private attach(connection: ChannelModel, channel: ConfirmChannel): void {
    this.connection = connection;
    this.channel = channel;
    this.full = this.blocked = false;
    const lost = (why: string) => () => {
      if (this.channel === channel) this.lost(why);
    };
    connection.on('close', lost('the connection closed'));
    channel.on('close', lost('the channel closed'));
    connection.on('blocked', (reason: string) => {
      if (this.channel !== channel) return;
      this.ctx.logger.warn(`amqp offramp ${this.ctx.url}: the broker blocks publishers: ${reason}`);
      this.blocked = true;
      this.update();
    });
    connection.on('unblocked', () => {
      if (this.channel !== channel) return;
      this.blocked = false;
      this.update();
    });
    this.update();
  }

  private fullUntilDrain(channel: ConfirmChannel): void {
    this.full = true;
    this.update();
    channel.once('drain', () => {
      if (this.channel !== channel) return;
      this.full = false;
      this.update();
    });
  }

  /** The unconfirmed messages of the lost channel fail (amqplib rejects them); the breaker stays triggered until reconnected. */
  private lost(why: string): void {
    const { connection, channel } = this;
    this.connection = this.channel = undefined;
    if (connection) void closeConnection(connection, channel);
    if (this.closed) return;
    this.update();
    this.reconnector.lost(why);
  }

  /** The breaker is triggered while disconnected, blocked by the broker, or waiting for the write buffer to drain. */
  private update(): void {
    const down = this.channel === undefined || this.blocked || this.full;
    if (down === this.triggered) return;
    this.triggered = down;
    if (down) this.ctx.trigger();
    else this.ctx.restore();
  }
}
