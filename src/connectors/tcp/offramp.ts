import { connect, type Socket } from 'node:net';
import type { Subscription } from '../../core/rx';
import type { EddyEvent } from '../../core/event';
import type { OfframpContext, OfframpType, Sink } from '../connector';
import { Backoff } from '../_shared/backoff';
import { s } from '../../schema/typed';
import type { Static } from '../../schema/typed';
import { connectHost, connectPort } from '../../schema/fields';

/** The IP time-to-live the packets of a TCP socket carry: Linux's default (net.ipv4.ip_default_ttl), which Node cannot change. */
const SYSTEM_TTL = 64;

const configSchema = s.object(
  {
    host: connectHost('host to connect to'),
    port: connectPort(),
    is_no_delay: s.boolean({ default: true, description: "send small writes at once (TCP_NODELAY: Nagle's algorithm off)" }),
    // accepted for the original's configs; only the system default can be honoured (see `validate`)
    ttl: s.integer({
      minimum: 1,
      maximum: 255,
      default: SYSTEM_TTL,
      description: `IP time-to-live of the packets; only ${SYSTEM_TTL}, the system default: Node cannot set it on a TCP socket`,
    }),
    // accepted for the original's configs and, as there, without effect: Node sockets are always non-blocking
    is_non_blocking: s.boolean({
      default: false,
      description: 'accepted for configs of the original, where it was ignored too; Node sockets are always non-blocking',
    }),
  },
  { description: 'Writes events to one outbound TCP connection.', required: ['host', 'port'] },
);

export type TcpOfframpConfig = Static<typeof configSchema>;

/**
 * tcp: writes every payload (each batch member, after the postprocessors)
 * to one TCP connection, in order. Add `postprocessors: [lines]` for
 * newline-delimited output.
 *
 * The connection is opened in the background: the activation never waits
 * for the peer, and the circuit breaker stays triggered until it is up. A
 * lost or refused connection triggers the breaker and is retried with a
 * bounded back-off (100 ms doubling to 5 s); sends while it is down fail
 * (a `fail` insight for transactional events), and the breaker is restored
 * once connected again. A full socket buffer (`write` returned false)
 * triggers the breaker until 'drain'.
 *
 * A send succeeds when the kernel took its bytes (the write callback): then
 * a transactional event is acked with meta `time` (ms the write took), as
 * the original does, so `qos::backpressure` can judge slow acks.
 */
export const tcpOfframp: OfframpType<TcpOfframpConfig> = {
  name: 'tcp',
  defaultCodec: 'json',
  placement: 'every-worker', // one client connection per worker (docs/workers.md)
  autoAck: false,
  example: { host: '127.0.0.1', port: 14242 },
  configSchema,
  validate(config) {
    if (config.ttl !== SYSTEM_TTL) {
      throw new Error(
        `ttl: ${config.ttl} cannot be applied: Node cannot set the IP time-to-live of a TCP socket, so its packets carry the system default (${SYSTEM_TTL}); remove ttl or set it to ${SYSTEM_TTL}`,
      );
    }
  },
  create(config, ctx) {
    return new TcpClient(config, ctx);
  },
};

/** One outbound connection with reconnects; the sink of one offramp instance. */
class TcpClient implements Sink {
  /** the connected socket; undefined while down or connecting */
  private socket: Socket | undefined;
  /** the socket being connected or connected, for close */
  private current: Socket | undefined;
  /** the kernel buffer is full: waiting for 'drain' */
  private full = false;
  private triggered = false;
  private closed = false;
  private retry: Subscription | undefined;
  private readonly backoff = new Backoff();
  /** the last failure was logged; further failures of the same outage only at debug level */
  private outageLogged = false;
  private readonly target: string;

  constructor(
    private readonly config: TcpOfframpConfig,
    private readonly ctx: OfframpContext,
  ) {
    this.target = `${config.host}:${config.port}`;
    this.connect();
    this.update();
  }

  send(payloads: Buffer[], event: EddyEvent): Promise<void> {
    const socket = this.socket;
    // down: the event fails back to its source rather than waiting in a buffer nobody bounds
    if (!socket) throw new Error(`tcp offramp: not connected to ${this.target}`);
    const started = performance.now();
    return new Promise<void>((resolve, reject) => {
      const written = (err?: Error | null) => {
        if (err) return reject(new Error(`tcp offramp: write to ${this.target} failed: ${err.message}`));
        if (event.transactional) this.ctx.insight('ack', event, { time: performance.now() - started });
        resolve();
      };
      if (payloads.length === 0) return written();
      let room: boolean;
      if (payloads.length === 1) room = socket.write(payloads[0], written);
      else {
        // one syscall for the members of a batch; the last callback comes after the earlier writes
        socket.cork();
        for (let i = 0; i < payloads.length - 1; i++) socket.write(payloads[i]);
        room = socket.write(payloads[payloads.length - 1], written);
        socket.uncork();
      }
      if (!room && !this.full) {
        this.full = true;
        this.update();
        socket.once('drain', () => {
          if (this.socket !== socket) return;
          this.full = false;
          this.update();
        });
      }
    });
  }

  /** Ends the connection after its pending writes (the machinery waited for in-flight sends). */
  async close(): Promise<void> {
    this.closed = true;
    this.retry?.unsubscribe();
    const socket = this.current;
    this.socket = this.current = undefined;
    if (!socket || socket.destroyed) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => socket.destroy(), 1000);
      socket.once('close', () => {
        clearTimeout(timer);
        resolve();
      });
      if (socket.connecting) socket.destroy();
      else socket.end();
    });
  }

  private connect(): void {
    const socket = connect({ host: this.config.host, port: this.config.port, noDelay: this.config.is_no_delay });
    this.current = socket;
    let failure = 'closed by the peer';
    socket.once('connect', () => {
      this.socket = socket;
      this.full = false;
      this.backoff.reset();
      this.outageLogged = false;
      this.ctx.logger.info(`tcp offramp ${this.ctx.url}: connected to ${this.target}`);
      // what the peer sends is not used; reading it lets the peer's close be noticed at once
      socket.resume();
      this.update();
    });
    socket.on('error', (err) => (failure = err.message));
    socket.once('close', () => {
      if (this.current === socket) this.current = undefined;
      if (this.socket === socket) this.socket = undefined;
      this.full = false;
      if (this.closed) return;
      this.update();
      const delay = this.backoff.next();
      const message = `tcp offramp ${this.ctx.url}: connection to ${this.target} down (${failure}); retrying in ${delay} ms`;
      if (this.outageLogged) this.ctx.logger.debug(message);
      else this.ctx.logger.warn(message);
      this.outageLogged = true;
      this.retry = this.ctx.scheduler.schedule(() => {
        this.retry = undefined;
        if (!this.closed) this.connect();
      }, delay);
    });
  }

  /** The breaker is triggered while the connection is down or its buffer is full. */
  private update(): void {
    const down = this.socket === undefined || this.full;
    if (down === this.triggered) return;
    this.triggered = down;
    if (down) this.ctx.trigger();
    else this.ctx.restore();
  }
}
