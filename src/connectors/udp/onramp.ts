import { createSocket, type RemoteInfo, type Socket } from 'node:dgram';
import { isIPv6 } from 'node:net';
import { interval, Observable, type Subscriber } from '../../core/rx';
import { nowNs } from '../../core/clock';
import { uriHost } from '../_shared/net';
import type { Frame, OnrampContext, OnrampSource, OnrampType } from '../connector';
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
  const bound = socket.address();
  const port = bound.port;
  if (config.receive_buffer_size !== undefined) setReceiveBuffer(socket, config.receive_buffer_size, ctx);
  const kernelDrops = new KernelDrops(bound.family === 'IPv6' ? 'IPv6' : 'IPv4', bound.address, port);
  // the drops are in the metrics and eddy status; the log says when they start (and, at most a minute apart, that they go on)
  const dropLog = new KernelDropLog(ctx.url, (line) => ctx.logger.warn(line));
  const dropPoll = interval(KERNEL_DROPS_POLL_MS, ctx.scheduler).subscribe(() => dropLog.observe(kernelDrops.read(), ctx.scheduler.now()));

  let subscriber: Subscriber<Frame> | undefined;
  let paused = false;
  const held: (Frame | undefined)[] = [];
  let head = 0;
  let heldBytes = 0;
  let dropped = 0;

  // the origin of the last sender, reused while the same sender keeps sending
  let lastAddress = '';
  let lastPort = -1;
  let lastOrigin = '';
  const origin = (from: RemoteInfo) => {
    if (from.port !== lastPort || from.address !== lastAddress) {
      lastAddress = from.address;
      lastPort = from.port;
      lastOrigin = `svc-udp://${uriHost(from.address)}:${from.port}/${port}`;
    }
    return lastOrigin;
  };

  const hold = (frame: Frame, size: number) => {
    if (heldBytes + size > limit.maxBytes) {
      if (dropped++ === 0) ctx.logger.warn(`udp onramp ${ctx.url}: ${heldBytes} bytes held while paused; dropping newer datagrams until it resumes`);
      return;
    }
    frame.ingestNs = nowNs(); // the time it arrived, not the time it is released
    held.push(frame);
    heldBytes += size;
  };

  // delivers what was held, in order, until the gate closes again (a frame may close it)
  const release = () => {
    while (head < held.length && subscriber && !paused) {
      const frame = held[head]!;
      held[head++] = undefined;
      heldBytes -= frame.data!.length;
      subscriber.next(frame);
    }
    if (head === held.length) held.length = head = 0;
    if (dropped > 0 && head === held.length) {
      ctx.logger.warn(`udp onramp ${ctx.url}: ${dropped} datagrams were dropped while paused (hold limit ${limit.maxBytes} bytes)`);
      dropped = 0;
    }
  };

  socket.on('message', (data, from) => {
    const frame: Frame = { stream: 0, data, originUri: origin(from) };
    if (subscriber && !paused && head === held.length) subscriber.next(frame);
    else hold(frame, data.length);
  });
  socket.on('error', (err) => ctx.logger.error(`udp onramp ${ctx.url}: ${err.message}`));

  return {
    frames: new Observable<Frame>((sub) => {
      subscriber = sub;
      release();
      return () => {
        subscriber = undefined;
      };
    }),
    pause() {
      paused = true;
    },
    resume() {
      paused = false;
      release();
    },
    // a datagram socket always reads: what it read while paused is held here (or dropped beyond the limit)
    inputs: () => ({ open: 1, reading: 1, held: held.length - head, dropped }),
    kernelDrops: () => kernelDrops.read(),
    close: () => {
      dropPoll.unsubscribe();
      return new Promise<void>((resolve) => socket.close(() => resolve()));
    },
  };
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
