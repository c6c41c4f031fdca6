import type { Subscription } from '../../core/rx';
import { WebSocket, type RawData } from 'ws';
import type { EddyEvent } from '../../core/event';
import { nowNs } from '../../core/clock';
import type { OfframpContext, OfframpType, Sink } from '../connector';
import { Backoff } from '../_shared/backoff';
import { s } from '../../schema/typed';
import type { Static } from '../../schema/typed';

/** A connection attempt that has not completed its handshake by then has failed. */
const HANDSHAKE_TIMEOUT_MS = 5000;
/** Linked: requests remembered per connection for correlating server messages; the oldest are forgotten beyond this. */
const MAX_AWAITING = 4096;
/** How long `close` waits for a server to acknowledge the closing handshake before cutting the connection. */
const CLOSE_GRACE_MS = 1000;

const WS_URL = /^wss?:\/\/[^/\s]+/i;

const configSchema = s.object(
  {
    url: s.string({ pattern: WS_URL.source, description: 'WebSocket server to send to (ws:// or wss://); meta `url` overrides it per event' }),
    binary: s.boolean({ default: false, description: 'send binary messages instead of text; meta `binary` overrides it per event' }),
  },
  { description: 'A WebSocket client: sends each event as a message.', required: ['url'] },
);

/**
 * ws: each event (each batch member) is one WebSocket message to `url`, or
 * to the event's meta `url`; text unless `binary` or the event's meta
 * `binary` says otherwise. One connection per URL, opened when first needed
 * and kept for the life of the instance.
 *
 * The configured URL's connection is opened at creation and reconnected with
 * back-off whenever it drops; while it is down the circuit breaker is
 * triggered and sends to it fail (nothing is dropped silently); when it is
 * back the breaker is restored. A connection to a `$url` override does not
 * hold the breaker (one unreachable override must not stop the whole flow):
 * while it is down its sends fail, and the next send after the back-off
 * delay opens it again.
 *
 * Linked: each message from a server is decoded (the ramp's preprocessors
 * and codec) and emitted on `out` with meta `binary` and the `correlation` of
 * the request it answers: the oldest request sent on that connection that has
 * no answer yet, or, when every request has one, the most recent request
 * (a server that streams several messages per request). Send failures,
 * undecodable messages and batches go to `err`.
 */
export const wsOfframp: OfframpType<Static<typeof configSchema>> = {
  name: 'ws',
  defaultCodec: 'json',
  placement: 'every-worker', // one client connection per worker (docs/workers.md)
  autoAck: false,
  linkable: true,
  example: { url: 'ws://127.0.0.1:8139/', binary: false },
  configSchema,
  async create(config, ctx): Promise<Sink> {
    const connections = new Map<string, Connection>();
    const primary = new Connection(config.url, true, ctx);
    connections.set(config.url, primary);
    // the first attempt is awaited, so a reachable server is connected before events flow;
    // an unreachable one triggers the breaker and is retried (the activation does not fail)
    await primary.open();

    const connectionFor = (url: string) => {
      let conn = connections.get(url);
      if (!conn) connections.set(url, (conn = new Connection(url, false, ctx)));
      return conn;
    };

    const error = (event: EddyEvent, message: string) => {
      if (ctx.linked) ctx.reply('err', event, { error: message, event_id: `${event.id.uid}:${event.id.seq}` }, { error: message });
      return new Error(message);
    };

    return {
      async send(payloads, event) {
        if (ctx.linked && event.isBatch) throw error(event, 'batched events are not supported by the linked ws offramp');
        const { url: metaUrl, binary: metaBinary } = event.meta;
        const url = typeof metaUrl === 'string' ? metaUrl : config.url;
        if (!WS_URL.test(url)) throw error(event, `meta url '${url.slice(0, 200)}' is not a ws:// or wss:// URL`);
        const binary = typeof metaBinary === 'boolean' ? metaBinary : config.binary;
        const started = Date.now();
        try {
          await connectionFor(url).send(payloads, binary, event);
        } catch (err) {
          throw error(event, (err as Error).message);
        }
        if (event.transactional) ctx.insight('ack', event, { time: Date.now() - started });
      },
      async close() {
        await Promise.all([...connections.values()].map((conn) => conn.close()));
        connections.clear();
      },
    };
  },
};

/**
 * One client connection to one URL. `keepAlive` (the configured URL):
 * reconnects by itself with back-off and holds the circuit breaker while
 * down. Otherwise (a `$url` override): opened on demand by `send`, no sooner
 * than the back-off delay after a failure.
 */
class Connection {
  private socket: WebSocket | undefined;
  /** the attempt in progress, resolved when it opened or failed */
  private opening: Promise<void> | undefined;
  /** reconnect back-off of the configured connection: 100 ms doubling to 5 s */
  private readonly backoff = new Backoff();
  private retryAt = 0;
  private retry: Subscription | undefined;
  private closed = false;
  /** linked: requests sent on this connection that have no answer yet, oldest first */
  private awaiting: EddyEvent[] = [];
  /** linked: the most recent request sent on this connection */
  private last: EddyEvent | undefined;

  constructor(
    private readonly url: string,
    private readonly keepAlive: boolean,
    private readonly ctx: OfframpContext,
  ) {}

  get isOpen(): boolean {
    return this.socket?.readyState === WebSocket.OPEN;
  }

  /** Starts an attempt (or joins the one in progress); resolves once it opened or failed. */
  open(): Promise<void> {
    if (this.closed || this.isOpen) return Promise.resolve();
    if (this.opening) return this.opening;
    const socket = new WebSocket(this.url, { handshakeTimeout: HANDSHAKE_TIMEOUT_MS });
    this.socket = socket;
    this.opening = new Promise<void>((resolve) => {
      socket.once('open', () => {
        this.opening = undefined;
        this.backoff.reset();
        this.ctx.logger.info(`Offramp ${this.ctx.url}: connected to ${this.url}`);
        if (this.keepAlive) this.ctx.restore();
        resolve();
      });
      socket.on('error', (err) => this.ctx.logger.debug(`Offramp ${this.ctx.url}: ${this.url}: ${err.message}`));
      // after a failed attempt as after a lost connection ('error' is always followed by 'close')
      socket.once('close', () => {
        this.opening = undefined;
        this.down(socket);
        resolve();
      });
      socket.on('message', (data, isBinary) => this.message(data, isBinary));
    });
    return this.opening;
  }

  async send(payloads: Buffer[], binary: boolean, event: EddyEvent): Promise<void> {
    if (!this.isOpen && !this.keepAlive && !this.closed && Date.now() >= this.retryAt) await this.open();
    const socket = this.socket;
    if (socket?.readyState !== WebSocket.OPEN) throw new Error(`not connected to ${this.url}`);
    if (this.ctx.linked) this.remember(event);
    try {
      await Promise.all(
        payloads.map((payload) => new Promise<void>((resolve, reject) => socket.send(payload, { binary }, (err) => (err ? reject(err) : resolve())))),
      );
    } catch (err) {
      this.forget(event);
      throw new Error(`sending to ${this.url} failed: ${(err as Error).message}`);
    }
  }

  /** Closes gracefully; a server that does not answer the closing handshake is cut off. */
  async close(): Promise<void> {
    this.closed = true;
    this.retry?.unsubscribe();
    const socket = this.socket;
    if (!socket || socket.readyState === WebSocket.CLOSED) return;
    await new Promise<void>((resolve) => {
      const cut = this.ctx.scheduler.schedule(() => socket.terminate(), CLOSE_GRACE_MS);
      socket.once('close', () => {
        cut.unsubscribe();
        resolve();
      });
      if (socket.readyState === WebSocket.CONNECTING) socket.terminate();
      else socket.close(1000);
    });
  }

  private down(socket: WebSocket): void {
    if (socket !== this.socket) return;
    // a new connection answers nothing that was sent on the old one
    this.awaiting = [];
    this.last = undefined;
    if (this.closed) return;
    const wait = this.backoff.next();
    this.retryAt = Date.now() + wait;
    if (!this.keepAlive) return;
    this.ctx.trigger();
    this.ctx.logger.debug(`Offramp ${this.ctx.url}: ${this.url} is down; next attempt in ${wait} ms`);
    this.retry = this.ctx.scheduler.schedule(() => void this.open(), wait);
  }

  private remember(event: EddyEvent): void {
    this.last = event;
    this.awaiting.push(event);
    if (this.awaiting.length > MAX_AWAITING) this.awaiting.shift();
  }

  private forget(event: EddyEvent): void {
    const at = this.awaiting.lastIndexOf(event);
    if (at >= 0) this.awaiting.splice(at, 1);
  }

  /** Linked: a server message becomes `out` events (or one `err` event) correlated to a request. */
  private message(data: RawData, isBinary: boolean): void {
    const { ctx } = this;
    if (!ctx.linked) return;
    const request = this.awaiting.shift() ?? this.last ?? this.unsolicited();
    const payload = Buffer.isBuffer(data) ? data : Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data);
    let values: unknown[];
    try {
      values = ctx.decode(payload);
    } catch (err) {
      const error = `cannot decode a message from ${this.url}: ${(err as Error).message}`;
      ctx.reply('err', request, { error, event_id: request.id.seq > 0 ? `${request.id.uid}:${request.id.seq}` : null }, { error });
      return;
    }
    for (const value of values) ctx.reply('out', request, value, { binary: isBinary });
  }

  /** The stand-in request of a message that arrived before anything was sent: no correlation, no event id. */
  private unsolicited(): EddyEvent {
    return { id: { uid: this.ctx.uid, seq: 0 }, data: null, meta: {}, ingestNs: nowNs(), originUri: this.url, isBatch: false, transactional: false };
  }
}
