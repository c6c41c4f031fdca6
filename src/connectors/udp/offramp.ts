import { createSocket as dgramSocket, type Socket, type SocketType } from 'node:dgram';
import { lookup } from 'node:dns/promises';
import { isIPv6 } from 'node:net';
import type { Subscription } from '../../core/rx';
import type { EddyEvent } from '../../core/event';
import type { OfframpContext, OfframpType, Sink } from '../connector';
import { Backoff } from '../_shared/backoff';
import { s } from '../../schema/typed';
import type { Static } from '../../schema/typed';
import { connectHost, connectPort } from '../../schema/fields';

const configSchema = s.object(
  {
    // a local address to send from, not a listening one: any interface, so that any destination is reachable
    host: s.string({ minLength: 1, default: '0.0.0.0', description: 'local address to send from (:: for IPv6 destinations)' }),
    port: s.integer({ minimum: 0, maximum: 65535, default: 0, description: 'local port to send from; 0 picks a free one' }),
    dst_host: connectHost('destination host (resolved once, when the offramp starts)'),
    dst_port: connectPort({ description: 'destination port' }),
  },
  { description: 'Sends each event as one UDP datagram.', required: ['dst_host', 'dst_port'] },
);

export type UdpOfframpConfig = Static<typeof configSchema>;

/** How the sink makes its sockets; a test passes its own to take one away. */
export type SocketFactory = (type: SocketType) => Socket;

/**
 * udp: one datagram per payload, so one per event and one per batch member
 * (the machinery encodes and postprocesses each member separately). The
 * config is the spec's: `host`/`port` is the local address sent from,
 * `dst_host`/`dst_port` the destination. Both are settled in `create`: a
 * local address in use or a destination name that does not resolve fails
 * the activation; the name is resolved once, not per datagram.
 *
 * A datagram the kernel refuses (too large, no route) fails that event only.
 * Losing the socket itself (an 'error' event or an unexpected close)
 * triggers the circuit breaker; the sink rebinds with a bounded back-off and
 * restores the breaker once bound again; sends in between fail.
 * A send succeeds when the kernel took every datagram (the send callbacks):
 * then a transactional event is acked with meta `time` (ms).
 */
export const udpOfframp: OfframpType<UdpOfframpConfig> = {
  name: 'udp',
  defaultCodec: 'json',
  placement: 'every-worker', // one client socket per worker (docs/workers.md)
  autoAck: false,
  example: { host: '127.0.0.1', port: 0, dst_host: '127.0.0.1', dst_port: 12201 },
  configSchema,
  create: (config, ctx) => createUdpSink(config, ctx),
};

export async function createUdpSink(config: UdpOfframpConfig, ctx: OfframpContext, factory: SocketFactory = dgramSocket): Promise<Sink> {
  const type: SocketType = isIPv6(config.host) ? 'udp6' : 'udp4';
  const destination = await lookup(config.dst_host, { family: type === 'udp6' ? 6 : 4 }).catch((err: unknown) => {
    throw new Error(`cannot resolve dst_host ${config.dst_host}: ${err instanceof Error ? err.message : String(err)}`);
  });
  const sink = new UdpSender(config, ctx, factory, type, destination.address);
  await sink.start();
  return sink;
}

class UdpSender implements Sink {
  private socket: Socket | undefined;
  private closed = false;
  private retry: Subscription | undefined;
  private readonly backoff = new Backoff();
  private readonly local: string;

  constructor(
    private readonly config: UdpOfframpConfig,
    private readonly ctx: OfframpContext,
    private readonly factory: SocketFactory,
    private readonly type: SocketType,
    private readonly dstAddress: string,
  ) {
    this.local = `${config.host}:${config.port}`;
  }

  /** The first bind: a failure fails the activation. */
  async start(): Promise<void> {
    this.socket = await this.bind();
  }

  send(payloads: Buffer[], event: EddyEvent): Promise<void> {
    const socket = this.socket;
    if (!socket) throw new Error(`udp offramp: no socket bound to ${this.local} (rebinding)`);
    const started = performance.now();
    return new Promise<void>((resolve, reject) => {
      let waiting = payloads.length;
      let failure: Error | undefined;
      const sent = (err?: Error | null) => {
        if (err) failure ??= new Error(`udp offramp: send to ${this.config.dst_host}:${this.config.dst_port} failed: ${err.message}`);
        if (--waiting > 0) return;
        if (failure) return reject(failure);
        if (event.transactional) this.ctx.insight('ack', event, { time: performance.now() - started });
        resolve();
      };
      if (waiting === 0) {
        waiting = 1;
        return sent();
      }
      for (const payload of payloads) socket.send(payload, this.config.dst_port, this.dstAddress, sent);
    });
  }

  close(): Promise<void> {
    this.closed = true;
    this.retry?.unsubscribe();
    const socket = this.socket;
    this.socket = undefined;
    if (!socket) return Promise.resolve();
    return new Promise<void>((resolve) => {
      try {
        socket.close(() => resolve());
      } catch {
        resolve(); // already closed
      }
    });
  }

  private bind(): Promise<Socket> {
    return new Promise((resolve, reject) => {
      const socket = this.factory(this.type);
      const failed = (err: Error) => {
        try {
          socket.close();
        } catch {
          // the failed bind closed it already
        }
        reject(new Error(`cannot bind ${this.local}: ${err.message}`));
      };
      socket.once('error', failed);
      socket.bind(this.config.port, this.config.host, () => {
        socket.off('error', failed);
        socket.on('error', (err) => this.lost(socket, err.message));
        socket.once('close', () => this.lost(socket, 'closed'));
        resolve(socket);
      });
    });
  }

  /** The socket itself is gone: trigger the breaker and rebind with back-off. */
  private lost(socket: Socket, why: string): void {
    if (this.closed || this.socket !== socket) return;
    this.socket = undefined;
    try {
      socket.close();
    } catch {
      // already closed
    }
    this.ctx.logger.warn(`udp offramp ${this.ctx.url}: socket on ${this.local} lost (${why}); rebinding`);
    this.ctx.trigger();
    this.scheduleRebind();
  }

  private scheduleRebind(): void {
    this.retry = this.ctx.scheduler.schedule(() => {
      this.retry = undefined;
      if (this.closed) return;
      this.bind().then(
        (socket) => {
          if (this.closed) return void socket.close();
          this.socket = socket;
          this.backoff.reset();
          this.ctx.logger.info(`udp offramp ${this.ctx.url}: socket on ${this.local} bound again`);
          this.ctx.restore();
        },
        (err: unknown) => {
          this.ctx.logger.debug(`udp offramp ${this.ctx.url}: ${err instanceof Error ? err.message : String(err)}`);
          this.scheduleRebind();
        },
      );
    }, this.backoff.next());
  }
}
