import { createSocket, type RemoteInfo, type Socket } from 'node:dgram';
import { isIPv6 } from 'node:net';
import { interval, Observable, type Subscriber, type Subscription } from '../../core/rx';
import { nowNs } from '../../core/clock';
import { uriHost } from '../_shared/net';
import type { Frame, OnrampContext, OnrampSource, OnrampType, SourceInputs } from '../connector';
import { KernelDrops } from './kernel-drops';
import { KERNEL_DROPS_POLL_MS, KernelDropLog } from './kernel-drop-log';
import { s } from '../../schema/typed';
import type { Static } from '../../schema/typed';
import { listenHost, listenPort } from '../../schema/fields';

const configSchema = s.object(
  {
    host: listenHost('address to receive on; the default takes only local senders, 0.0.0.0 (or ::) every interface'),
    port: listenPort({ description: 'port to receive on; 0 picks a free one' }),
    receive_buffer_size: s.integer({
      minimum: 1,
      maximum: 2147483647,
      description:
        "the socket's receive buffer (SO_RCVBUF) in bytes; default: the system's (net.core.rmem_default). Linux doubles the request for its bookkeeping and caps it at net.core.rmem_max; the size granted is logged",
    }),
  },
  { description: 'Receives UDP datagrams on a port, one frame per datagram.', required: ['port'] },
);

type UdpOnrampConfig = Static<typeof configSchema>;

/** The frame of one datagram: its bytes as they came. */
type Datagram = Frame & { data: Buffer };

export interface UdpHoldLimit {
  /** datagram bytes held while paused, beyond which newer datagrams are dropped (and counted) */
  maxBytes: number;
}

/** 16 MiB: about 250 full-size datagrams, or 100,000 small log lines. */
export const DEFAULT_HOLD_LIMIT: UdpHoldLimit = { maxBytes: 16 * 1024 * 1024 };

/**
 * udp: one frame per datagram, all on stream 0, so buffered preprocessors
 * (gelf-chunking) reassemble across datagrams and senders. The port is bound
 * in `create`, so a port in use fails the activation.
 *
 * UDP has no flow control and Node's dgram sockets cannot stop reading, so
 * pausing cannot slow a sender down. While paused (and before the machinery
 * subscribes) datagrams keep being read and are held here, in order, up to
 * `maxBytes`; beyond that newer ones are dropped, counted and logged, as the
 * kernel itself would drop them from a full receive buffer. On resume the
 * held datagrams are delivered first, with the time they arrived.
 *
 * What the kernel itself drops (a burst larger than the socket's receive
 * buffer arriving while the event loop is busy) never reaches eddy; it is
 * read from the kernel's own count (`kernelDrops`, Linux) and reported as a
 * metric. `receive_buffer_size` asks for a larger buffer.
 */
export const udpOnramp: OnrampType<UdpOnrampConfig> = {
  name: 'udp',
  defaultCodec: 'string',
  placement: 'every-worker', // socket shared by the workers (docs/workers.md)
  example: { host: '127.0.0.1', port: 12201 },
  configSchema,
  create: (config, ctx) => createUdpSource(config, ctx, DEFAULT_HOLD_LIMIT),
};

/** The udp source; exported with its hold limit so a test can overflow a small one. */
export async function createUdpSource(config: UdpOnrampConfig, ctx: OnrampContext, limit: UdpHoldLimit): Promise<OnrampSource> {
  const socket = createSocket(isIPv6(config.host) ? 'udp6' : 'udp4');
  await bind(socket, config.host, config.port);
  if (config.receive_buffer_size !== undefined) setReceiveBuffer(socket, config.receive_buffer_size, ctx);
  return new UdpSource(ctx, limit, socket);
}

/**
 * The source of one udp onramp: every datagram a frame (`onMessage`),
 * passed on at once while it reads, else held in order (`hold`) until
 * `release`; the kernel's own drops polled for the log.
 */
class UdpSource implements OnrampSource {
  readonly frames: Observable<Frame>;
  private readonly port: number;
  private readonly kernelDropCount: KernelDrops;
  private readonly dropPoll: Subscription;
  private subscriber: Subscriber<Frame> | undefined;
  private paused = false;
  /** datagrams read while not reading, in order; the released ones before `head` are cleared (undefined) */
  private readonly held: (Datagram | undefined)[] = [];
  private head = 0;
  private heldBytes = 0;
  /** datagrams dropped since the hold filled; logged and reset once it is empty again */
  private dropped = 0;
  // the origin of the last sender, reused while the same sender keeps sending
  private lastAddress = '';
  private lastPort = -1;
  private lastOrigin = '';

  constructor(
    private readonly ctx: OnrampContext,
    private readonly limit: UdpHoldLimit,
    private readonly socket: Socket,
  ) {
    const bound = socket.address();
    this.port = bound.port;
    this.kernelDropCount = new KernelDrops(bound.family === 'IPv6' ? 'IPv6' : 'IPv4', bound.address, this.port);
    // the drops are in the metrics and eddy status; the log says when they start (and, at most a minute apart, that they go on)
    const dropLog = new KernelDropLog(ctx.url, (line) => ctx.logger.warn(line));
    this.dropPoll = interval(KERNEL_DROPS_POLL_MS, ctx.scheduler).subscribe(() => dropLog.observe(this.kernelDropCount.read(), ctx.scheduler.now()));
    socket.on('message', (data, from) => this.onMessage(data, from));
    socket.on('error', (err) => ctx.logger.error(`udp onramp ${ctx.url}: ${err.message}`));
    this.frames = new Observable<Frame>((sub) => {
      this.subscriber = sub;
      this.release();
      return () => {
        this.subscriber = undefined;
      };
    });
  }

  pause(): void {
    this.paused = true;
  }

  resume(): void {
    this.paused = false;
    this.release();
  }

  // a datagram socket always reads: what it read while paused is held here (or dropped beyond the limit)
  inputs(): SourceInputs {
    return { open: 1, reading: 1, held: this.held.length - this.head, dropped: this.dropped };
  }

  kernelDrops(): number | undefined {
    return this.kernelDropCount.read();
  }

  close(): Promise<void> {
    this.dropPoll.unsubscribe();
    return new Promise<void>((resolve) => this.socket.close(() => resolve()));
  }

  private onMessage(data: Buffer, from: RemoteInfo): void {
    const frame: Datagram = { stream: 0, data, originUri: this.origin(from) };
    if (this.subscriber && !this.paused && this.head === this.held.length) this.subscriber.next(frame);
    else this.hold(frame, data.length);
  }

  private origin(from: RemoteInfo): string {
    if (from.port !== this.lastPort || from.address !== this.lastAddress) {
      this.lastAddress = from.address;
      this.lastPort = from.port;
      this.lastOrigin = `svc-udp://${uriHost(from.address)}:${from.port}/${this.port}`;
    }
    return this.lastOrigin;
  }

  private hold(frame: Datagram, size: number): void {
    if (this.heldBytes + size > this.limit.maxBytes) {
      if (this.dropped++ === 0) {
        this.ctx.logger.warn(`udp onramp ${this.ctx.url}: ${this.heldBytes} bytes held while paused; dropping newer datagrams until it resumes`);
      }
      return;
    }
    frame.ingestNs = nowNs(); // the time it arrived, not the time it is released
    this.held.push(frame);
    this.heldBytes += size;
  }

  /** Delivers what was held, in order, until the gate closes again (a frame may close it). */
  private release(): void {
    const held = this.held;
    while (this.subscriber && !this.paused) {
      // undefined past the end: what is before `head` was delivered, what is after it is held
      const frame = held[this.head];
      if (frame === undefined) break;
      held[this.head++] = undefined;
      this.heldBytes -= frame.data.length;
      this.subscriber.next(frame);
    }
    if (this.head === held.length) held.length = this.head = 0;
    if (this.dropped > 0 && this.head === held.length) {
      this.ctx.logger.warn(`udp onramp ${this.ctx.url}: ${this.dropped} datagrams were dropped while paused (hold limit ${this.limit.maxBytes} bytes)`);
      this.dropped = 0;
    }
  }
}

/** Asks for a receive buffer and logs what the kernel granted (which is what counts). */
function setReceiveBuffer(socket: Socket, size: number, ctx: OnrampContext): void {
  try {
    socket.setRecvBufferSize(size);
  } catch (err) {
    socket.close();
    throw new Error(`receive_buffer_size ${size}: ${(err as Error).message}`);
  }
  const granted = socket.getRecvBufferSize();
  const message = `udp onramp ${ctx.url}: receive buffer: asked for ${size} bytes, the kernel granted ${granted}`;
  // Linux grants twice the request (half of it for its bookkeeping); less than the request means it was capped
  if (granted < size) ctx.logger.warn(`${message}: capped by the system's maximum (net.core.rmem_max on Linux)`);
  else ctx.logger.info(message);
}

function bind(socket: Socket, host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const failed = (err: Error) => {
      try {
        socket.close();
      } catch {
        // already closed by the failed bind
      }
      reject(new Error(`cannot bind ${host}:${port}: ${err.message}`));
    };
    socket.once('error', failed);
    socket.bind(port, host, () => {
      socket.off('error', failed);
      resolve();
    });
  });
}
