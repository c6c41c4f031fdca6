import type { IncomingMessage, Server } from 'node:http';
import { Server as TlsServer } from 'node:https';
import { Observable, type Subscriber } from '../../core/rx';
import { WebSocket, WebSocketServer, type RawData } from 'ws';
import type { Frame, FrameResult, OnrampContext, OnrampReply, OnrampSource, OnrampType, SourceInputs } from '../connector';
import { Waiters, idKey } from '../_shared/waiters';
import { listen, uriHost } from '../_shared/net';
import { readServerTls, reloadOnChange, type CertificateWatch } from '../../net/tls';
import { httpServer } from '../../net/http-server';
import { s } from '../../schema/typed';
import { duration, durationMs } from '../../schema/duration';
import type { Static } from '../../schema/typed';
import { listenHost, listenPort, serverTls } from '../../schema/fields';

const configSchema = s.object(
  {
    host: listenHost(),
    port: listenPort({ description: 'port to listen on (0 picks a free port, logged at start)' }),
    timeout: duration('linked only: how long a request waits for its reply; after that a late reply is dropped (the connection stays open)', {
      default: 30000,
    }),
    reply_pause_bytes: s.integer({
      minimum: 1,
      default: 1048576,
      description: 'linked only: bytes of replies not yet sent to one client at which eddy stops reading that client; it reads again when they fall to half',
    }),
    reply_close_bytes: s.integer({
      minimum: 2,
      default: 16777216,
      description:
        'linked only: bytes of replies not yet sent to one client at which eddy closes that connection (status 1008) and counts it under unread_replies; greater than reply_pause_bytes',
    }),
    tls: serverTls('serve wss:// with this certificate (the files are reloaded when they change); absent: ws://'),
  },
  { description: 'A WebSocket server: each message it receives becomes an event.', required: ['port'] },
);

type WsOnrampConfig = Static<typeof configSchema>;

/** The reason a linked onramp counts when it closes a client that does not read its replies. */
export const UNREAD_REPLIES = 'unread_replies';

/** The close status sent to that client: 1008, policy violation (it broke the rule that a client reads its replies). */
export const UNREAD_REPLIES_CLOSE_CODE = 1008;

/**
 * One accepted WebSocket connection: its own stream, hence its own
 * preprocessor state. It is read while the onramp reads (subscribed, breaker
 * closed) and its replies are not piling up unsent (`overfull`).
 */
class Connection {
  closed = false;
  /** its unsent replies passed `reply_pause_bytes`: not read until they fall to half of it */
  overfull = false;
  /** eddy closed it (its replies were not read): read only for the client's answering close frame */
  closing = false;

  constructor(
    readonly socket: WebSocket,
    readonly stream: number,
    readonly originUri: string,
  ) {}

  /** Pauses or resumes the socket to match what it should do now; the library's pause stops reading the TCP socket. */
  read(should: boolean): void {
    const read = this.closing || (should && !this.overfull);
    if (read && this.socket.isPaused) this.socket.resume();
    else if (!read && !this.socket.isPaused) this.socket.pause();
  }
}

/** What a waiting request gets back: the reply's encoded payloads, or an error notice. */
type Answer = { payloads: Buffer[]; binary: boolean } | { error: string };

/** The source of a ws onramp; `waiting` (requests waiting for a reply) is read by tests. */
export interface WsOnrampSource extends OnrampSource {
  readonly waiting: number;
  /** the port the server listens on (the configured one, or the one picked for port 0) */
  readonly port: number;
  /** connections paused now because their unsent replies passed `reply_pause_bytes` */
  readonly overfull: number;
  /** bytes of replies the open connections hold unsent (the library's `bufferedAmount`, summed) */
  readonly unsent: number;
}

/**
 * ws: a WebSocket server at ws://<host>:<port>/. Every connection is its own
 * stream (its own preprocessor chain), ended by an `end` frame when the
 * connection closes. Text and binary messages are both read; meta `binary`
 * tells which. The port is bound when the instance is created, so a port in
 * use fails the activation.
 *
 * Linked (`linked: true`): a reply on the onramp's `in` port goes back to the
 * connection whose message produced the event it answers, as a text message
 * unless its meta `binary` is true. A request waits for its reply at most
 * `timeout` ms and at most as long as its connection is open, so requests
 * that never get a reply leak nothing.
 *
 * A linked onramp also bounds what it holds for a client that sends requests
 * and does not read the replies: past `reply_pause_bytes` of unsent replies
 * it stops reading that client (TCP flow control then pushes back on it)
 * until they fall to half; past `reply_close_bytes` it closes the connection
 * with status 1008 and counts it under `unread_replies`.
 *
 * With `tls` the server speaks wss:// (the certificate files are watched and
 * reloaded: connections made after a change see the new certificate).
 */
export const wsOnramp: OnrampType<WsOnrampConfig> = {
  name: 'ws',
  defaultCodec: 'json',
  placement: 'every-worker', // listening socket shared by the workers (docs/workers.md)
  linkable: true,
  example: { host: '127.0.0.1', port: 0 },
  validate(config) {
    if (config.reply_close_bytes <= config.reply_pause_bytes) {
      throw new Error(
        `reply_close_bytes: must be greater than reply_pause_bytes (${config.reply_close_bytes} <= ${config.reply_pause_bytes}): a client is paused before it is closed`,
      );
    }
    if (config.tls !== undefined) readServerTls(config.tls);
  },
  configSchema,
  async create(config, ctx): Promise<WsOnrampSource> {
    const tls = config.tls;
    // with tls, a ws:// client is told to use wss:// rather than answered with nothing
    const http = httpServer(tls, { scheme: 'wss' });
    // bound now: a port in use fails the activation
    const port = await listen(http, config.host, config.port);
    // with tls, httpServer made an https server
    const watch = tls !== undefined && http instanceof TlsServer ? reloadOnChange(http, tls, ctx.logger, `Onramp ${ctx.url}`) : undefined;
    return new WsSource(config, ctx, http, port, watch);
  },
};

/**
 * The source of one ws onramp: the server's connections (`accept`), their
 * messages as frames (`onMessage`), and, linked, the replies that go back to
 * them (`answer`, `deliver`) with the bounds on what a client leaves unread
 * (`holdBack`, `closeUnread`).
 */
class WsSource implements WsOnrampSource {
  readonly frames: Observable<Frame>;
  /** linked only: unlinked, the machinery warns about replies sent here */
  readonly reply?: (reply: OnrampReply) => void;
  /** linked only: only a linked onramp closes connections itself */
  readonly closedConnections?: () => Readonly<Record<string, number>>;
  private readonly server: WebSocketServer;
  private readonly connections = new Set<Connection>();
  private readonly waiters: Waiters<Answer>;
  /** timeout, read */
  private readonly timeoutMs: number;
  private out: Subscriber<Frame> | undefined;
  // frames read before the first subscriber (sockets are paused then, so only what was already parsed)
  private early: Frame[] = [];
  /** paused by the circuit breaker */
  private paused = false;
  private streams = 0;
  /** connections this onramp closed itself, by reason (GET /metrics, GET /status) */
  private readonly closedCount: Record<string, number> = { [UNREAD_REPLIES]: 0 };

  constructor(
    private readonly config: WsOnrampConfig,
    private readonly ctx: OnrampContext,
    private readonly http: Server | TlsServer,
    readonly port: number,
    /** TLS: the certificate files' watch, stopped at close */
    private readonly watch: CertificateWatch | undefined,
  ) {
    this.server = new WebSocketServer({ server: http });
    this.server.on('error', (err) => ctx.logger.error(`Onramp ${ctx.url}: server error: ${err.message}`));
    http.on('tlsClientError', (err: Error) => ctx.logger.debug(`Onramp ${ctx.url}: TLS handshake failed: ${err.message}`));
    ctx.logger.info(`Onramp ${ctx.url}: listening on ${watch === undefined ? 'ws' : 'wss'}://${uriHost(config.host)}:${port}/`);
    this.timeoutMs = durationMs(config.timeout, 'timeout');
    this.waiters = new Waiters<Answer>(this.timeoutMs, ctx.scheduler);
    if (ctx.linked) {
      this.reply = (reply) => this.answer(reply);
      this.closedConnections = () => ({ ...this.closedCount });
    }
    this.server.on('connection', (socket: WebSocket, req: IncomingMessage) => this.accept(socket, req));
    this.frames = new Observable<Frame>((subscriber) => {
      this.out = subscriber;
      const held = this.early;
      this.early = [];
      for (const frame of held) subscriber.next(frame);
      this.readAll();
      return () => {
        this.out = undefined;
        for (const conn of this.connections) conn.read(false);
      };
    });
  }

  /** requests waiting for a reply */
  get waiting(): number {
    return this.waiters.size;
  }

  get overfull(): number {
    return [...this.connections].filter((c) => c.overfull && !c.closing).length;
  }

  get unsent(): number {
    let bytes = 0;
    for (const conn of this.connections) bytes += conn.socket.bufferedAmount;
    return bytes;
  }

  pause(): void {
    this.paused = true;
    for (const conn of this.connections) conn.read(false);
  }

  resume(): void {
    this.paused = false;
    this.readAll();
  }

  inputs(): SourceInputs {
    return { open: this.connections.size, reading: [...this.connections].filter((c) => !c.socket.isPaused).length };
  }

  async close(): Promise<void> {
    this.watch?.stop();
    this.waiters.dropAll();
    for (const conn of this.connections) conn.socket.terminate();
    this.connections.clear();
    this.early = [];
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.http.closeAllConnections();
    await new Promise<void>((resolve) => this.http.close(() => resolve()));
  }

  /** The onramp reads: subscribed and the breaker closed. */
  private get reading(): boolean {
    return this.out !== undefined && !this.paused;
  }

  private readAll(): void {
    for (const conn of this.connections) conn.read(this.reading);
  }

  private push(frame: Frame): void {
    if (this.out) this.out.next(frame);
    else this.early.push(frame);
  }

  /** A new connection: its own stream, read when the onramp reads, ended by an `end` frame when it closes. */
  private accept(socket: WebSocket, req: IncomingMessage): void {
    const conn = new Connection(socket, ++this.streams, originOf(req, this.port));
    this.connections.add(conn);
    conn.read(this.reading);
    socket.on('message', (data: RawData, isBinary: boolean) => this.onMessage(conn, data, isBinary));
    socket.on('error', (err) => this.ctx.logger.debug(`Onramp ${this.ctx.url}: connection ${conn.originUri}: ${err.message}`));
    socket.on('close', () => {
      conn.closed = true;
      this.connections.delete(conn);
      this.waiters.dropGroup(conn);
      this.push({ stream: conn.stream, end: true, originUri: conn.originUri });
    });
  }

  private onMessage(conn: Connection, data: RawData, isBinary: boolean): void {
    if (conn.closing) return; // sent after eddy closed the connection: the closing handshake discards it
    const frame: Frame = { stream: conn.stream, data: toBuffer(data), originUri: conn.originUri, meta: { binary: isBinary } };
    if (this.ctx.linked) frame.done = (result) => this.track(conn, result);
    this.push(frame);
  }

  /** Linked: the events a message made wait for their replies; a message that failed to decode is answered at once. */
  private track(conn: Connection, result: FrameResult): void {
    if (conn.closed) return; // held while paused, and the client left meanwhile
    for (const error of result.errors) this.deliver(conn, { error });
    for (const id of result.ids) {
      this.waiters.wait(
        [idKey(id)],
        conn,
        (answer) => this.deliver(conn, answer),
        (end) =>
          end === 'timeout' && this.ctx.logger.debug(`Onramp ${this.ctx.url}: no reply to ${idKey(id)} from ${conn.originUri} within ${this.timeoutMs} ms`),
      );
    }
  }

  /** Linked: a reply goes to the connection whose message made the event it answers. */
  private answer(reply: OnrampReply): void {
    const { event, ids } = reply;
    const keys = ids.map(idKey);
    if (event.isBatch) {
      // the spec rejects batched replies; the requests they answer get an error notice instead of silence
      const error = 'batched replies are not supported by the linked ws onramp';
      for (const key of keys) this.waiters.answer([key], { error });
      throw new Error(error);
    }
    let payloads: Buffer[];
    try {
      payloads = reply.encode();
    } catch (err) {
      const error = `cannot encode reply: ${(err as Error).message}`;
      this.waiters.answer(keys, { error });
      throw new Error(error);
    }
    if (!this.waiters.answer(keys, { payloads, binary: event.meta.binary === true })) {
      this.ctx.logger.debug(
        `Onramp ${this.ctx.url}: reply to ${keys.join(',') || 'no event of this onramp'} dropped: nothing waits for it (answered, timed out, or its connection closed)`,
      );
    }
  }

  /** Answers a waiting request on its connection; a closed connection gets nothing. */
  private deliver(conn: Connection, answer: Answer): void {
    if (conn.closed || conn.socket.readyState !== WebSocket.OPEN) return;
    const sent = (err?: Error) => this.afterSend(conn, err);
    if ('error' in answer) conn.socket.send(JSON.stringify({ error: answer.error }), { binary: false }, sent);
    else for (const payload of answer.payloads) conn.socket.send(payload, { binary: answer.binary }, sent);
    this.holdBack(conn);
  }

  /** Called back by the library once a reply is written to the socket: a paused client whose unsent replies fell to half is read again. */
  private afterSend(conn: Connection, err?: Error): void {
    if (err) return this.ctx.logger.debug(`Onramp ${this.ctx.url}: reply to ${conn.originUri} not sent: ${err.message}`);
    if (conn.overfull && conn.socket.bufferedAmount <= this.config.reply_pause_bytes / 2) {
      conn.overfull = false;
      conn.read(this.reading);
    }
  }

  /** A client that does not read its replies: paused past the first bound, closed past the second. */
  private holdBack(conn: Connection): void {
    const { reply_pause_bytes, reply_close_bytes } = this.config;
    const unsent = conn.socket.bufferedAmount;
    if (unsent >= reply_close_bytes) return this.closeUnread(conn, unsent);
    if (unsent >= reply_pause_bytes && !conn.overfull) {
      conn.overfull = true;
      conn.read(this.reading);
      this.ctx.logger.debug(
        `Onramp ${this.ctx.url}: ${unsent} bytes of replies to ${conn.originUri} unsent; not reading it until they fall to ${reply_pause_bytes / 2}`,
      );
    }
  }

  private closeUnread(conn: Connection, unsent: number): void {
    this.closedCount[UNREAD_REPLIES]++;
    this.ctx.logger.warn(
      `Onramp ${this.ctx.url}: closing ${conn.originUri} (${UNREAD_REPLIES}): ${unsent} bytes of replies unsent, reply_close_bytes is ${this.config.reply_close_bytes}`,
    );
    // the close frame queues behind the unsent replies; reading resumes so the client's answering close frame is seen
    conn.closing = true;
    conn.socket.close(UNREAD_REPLIES_CLOSE_CODE, 'replies not read');
    conn.read(this.reading);
  }
}

/** `svc-ws://<client ip>:<client port>/<listen port>`, as the tcp onramp names its connections. */
function originOf(req: IncomingMessage, listenPort: number): string {
  return `svc-ws://${uriHost(req.socket.remoteAddress)}:${req.socket.remotePort ?? 0}/${listenPort}`;
}

function toBuffer(data: RawData): Buffer {
  if (Buffer.isBuffer(data)) return data;
  if (Array.isArray(data)) return Buffer.concat(data);
  return Buffer.from(data);
}
