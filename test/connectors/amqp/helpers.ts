import { createServer, connect as tcpConnect, type AddressInfo, type Socket } from 'node:net';
import { connect, type ChannelModel, type ConfirmChannel, type Options } from 'amqplib';
import type { ServiceAddress } from '../../helpers/services';
import { consumeWith, type Consumed, type SinkFn } from '../consume';
import { eventually } from '../../helpers/runtime';

/**
 * The test side of the amqp connector tests: a plain amqplib client that
 * publishes into and reads out of the real RabbitMQ that
 * `scripts/services start rabbitmq` runs, and names unique per test run so
 * runs never share a queue.
 */

let counter = 0;
/** A queue or routing-key name no other test or run uses. */
export function unique(what: string): string {
  return `eddy-test.${what}.${process.pid}.${Date.now().toString(36)}.${++counter}`;
}

export function amqpAddr({ host, port }: ServiceAddress): string {
  return `amqp://guest:guest@${host}:${port}/%2f`;
}

export interface Received {
  body: string;
  routingKey: string;
  exchange: string;
  headers: Record<string, unknown>;
  redelivered: boolean;
  persistent: boolean;
}

/** One test client: a connection and a confirm channel, reopened after the broker refused something. */
export class TestClient {
  private channel!: ConfirmChannel;
  private readonly queues: string[] = [];

  private constructor(private readonly connection: ChannelModel) {}

  static async open(address: ServiceAddress): Promise<TestClient> {
    const connection = await connect(amqpAddr(address));
    connection.on('error', () => undefined);
    const client = new TestClient(connection);
    await client.fresh();
    return client;
  }

  /** A queue deleted again on `close`. */
  async queue(name: string, options: Options.AssertQueue = {}): Promise<string> {
    await this.channel.assertQueue(name, options);
    this.queues.push(name);
    return name;
  }

  async bind(queue: string, exchange: string, key: string): Promise<void> {
    await this.channel.bindQueue(queue, exchange, key);
  }

  /** Publishes and waits for the broker's confirms. */
  async publish(exchange: string, key: string, bodies: (string | Buffer)[], options: Options.Publish = {}): Promise<void> {
    for (const body of bodies) this.channel.publish(exchange, key, Buffer.isBuffer(body) ? body : Buffer.from(body), options);
    await this.channel.waitForConfirms();
  }

  /** Ready messages and consumers of a queue (on a channel of its own: a missing queue closes it). */
  async depth(queue: string): Promise<{ messageCount: number; consumerCount: number }> {
    const channel = await this.connection.createChannel();
    channel.on('error', () => undefined);
    try {
      return await channel.checkQueue(queue);
    } finally {
      await channel.close().catch(() => undefined);
    }
  }

  /** Whether a queue exists and has `consumers` consumers. */
  async consumers(queue: string, consumers: number): Promise<boolean> {
    return this.depth(queue).then(
      (d) => d.consumerCount === consumers,
      () => false,
    );
  }

  /** Whether a queue exists. */
  async exists(queue: string): Promise<boolean> {
    return this.depth(queue).then(
      () => true,
      (err: unknown) => {
        if (err instanceof Error && err.message.includes('NOT_FOUND')) return false;
        throw err;
      },
    );
  }

  /** A queue some other party (the onramp) declares, deleted on `close` all the same. */
  track(name: string): string {
    this.queues.push(name);
    return name;
  }

  /** Takes every message ready in a queue now (and any that arrive meanwhile). */
  async drain(queue: string): Promise<Received[]> {
    const { messageCount } = await this.depth(queue);
    if (messageCount === 0) return [];
    const collecting = await this.collect(queue);
    await eventually(() => collecting.received.length >= messageCount, 30_000, `${messageCount} messages from ${queue}`);
    await collecting.stop();
    return collecting.received;
  }

  /** Consumes a queue (no acks) into `received` until `stop`. */
  async collect(queue: string): Promise<{ received: Received[]; stop(): Promise<void> }> {
    const received: Received[] = [];
    const { consumerTag } = await this.channel.consume(
      queue,
      (m) => {
        if (m === null) return;
        received.push({
          body: m.content.toString('utf8'),
          routingKey: m.fields.routingKey,
          exchange: m.fields.exchange,
          headers: m.properties.headers ?? {},
          redelivered: m.fields.redelivered,
          persistent: m.properties.deliveryMode === 2,
        });
      },
      { noAck: true },
    );
    return { received, stop: () => this.channel.cancel(consumerTag).then(() => undefined) };
  }

  /** Waits until a queue holds `count` ready messages, then takes them. */
  async take(queue: string, count: number, what = `${count} messages in ${queue}`): Promise<Received[]> {
    await eventually(async () => (await this.depth(queue)).messageCount >= count, 30_000, what);
    return this.drain(queue);
  }

  async deleteQueue(name: string): Promise<void> {
    await this.channel.deleteQueue(name);
  }

  /** Closes the connection, keeping the queues. */
  async disconnect(): Promise<void> {
    await this.connection.close().catch(() => undefined);
  }

  /** Deletes the queues it declared and closes the connection. */
  async close(): Promise<void> {
    try {
      await this.fresh();
      for (const q of this.queues) await this.channel.deleteQueue(q).catch(() => undefined);
    } finally {
      await this.connection.close().catch(() => undefined);
    }
  }

  private async fresh(): Promise<void> {
    this.channel = await this.connection.createConfirmChannel();
    this.channel.on('error', () => undefined);
  }
}

/**
 * A TCP relay on a loopback port in front of the broker, so a test can take
 * the server away from eddy without touching the broker: `cut` resets the
 * connections it carries, `refuse` makes new ones fail at once (as a server
 * that is down), `accept` lets them through again.
 */
export interface Relay {
  port: number;
  /** connections relayed since it started */
  readonly connections: number;
  cut(): void;
  refuse(): void;
  accept(): void;
  close(): Promise<void>;
}

export async function relay(target: ServiceAddress): Promise<Relay> {
  const sockets = new Set<Socket>();
  let refusing = false;
  let connections = 0;
  const server = createServer((client) => {
    if (refusing) return void client.resetAndDestroy();
    connections++;
    const upstream = tcpConnect(target.port, target.host);
    for (const [a, b] of [
      [client, upstream],
      [upstream, client],
    ]) {
      sockets.add(a);
      a.on('error', () => undefined);
      a.on('close', () => {
        sockets.delete(a);
        b.destroy();
      });
      a.pipe(b);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const cut = () => {
    for (const socket of sockets) socket.resetAndDestroy();
  };
  return {
    port: (server.address() as AddressInfo).port,
    get connections() {
      return connections;
    },
    cut,
    refuse() {
      refusing = true;
      cut();
    },
    accept() {
      refusing = false;
    },
    close: () =>
      new Promise<void>((resolve) => {
        cut();
        server.close(() => resolve());
      }),
  };
}

export { bodies, type Consumed, type SinkFn } from '../consume';

/** A amqp onramp in a consuming flow (see `consumeWith`). */
export const consume = (config: Record<string, unknown>, sink?: SinkFn, extra?: Record<string, unknown>): Promise<Consumed> =>
  consumeWith('amqp', config, sink, extra);
