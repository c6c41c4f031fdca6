import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { Server as TlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { Observable, type Subscriber } from '../../core/rx';
import type { Frame, FrameResult, OnrampContext, OnrampReply, OnrampSource, OnrampType, SourceInputs } from '../connector';
import { Alarm, Waiters, idKey, type WaitEnd } from '../_shared/waiters';
import { listen, uriHost } from '../_shared/net';
import { headerLists, headerNamed, headerValues, mimeOf, type HeaderLists } from './http';
import { readServerTls, reloadOnChange, type CertificateWatch } from '../../net/tls';
import { httpServer } from '../../net/http-server';
import { s } from '../../schema/typed';
import { duration, durationMs } from '../../schema/duration';
import type { Static } from '../../schema/typed';
import { listenHost, listenPort, serverTls } from '../../schema/fields';

const configSchema = s.object(
  {
    host: listenHost(),
    port: listenPort({ default: 8000, description: 'TCP port to listen on (0: any free port, logged)' }),
    timeout: duration(
      'linked only: the time from the arrival of a request to its answer: the reply, else 504 (503 with Retry-After when backpressure kept it out of the flow)',
      { default: 10000 },
    ),
    max_body_bytes: s.integer({ minimum: 0, default: 10485760, description: 'largest request body read; a larger one is answered 413 and makes no event' }),
    tls: serverTls('serve HTTPS with this certificate (the files are reloaded when they change); absent: plain HTTP'),
  },
  { description: 'An HTTP server: the body of each request becomes an event.' },
);

type RestOnrampConfig = Static<typeof configSchema>;

/** The spec's `$request.url`. */
export interface RequestUrl {
  scheme: string;
  username?: string;
  password?: string;
  host: string;
  port?: number;
  path: string;
  query?: string;
  fragment?: string;
}

/** The spec's `$request`, set on every event the onramp makes. */
export interface RequestMeta {
  url: RequestUrl;
  method: string;
  headers: HeaderLists;
}

/** One request, from its arrival to its answer. */
interface Exchange {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly headers: HeaderLists;
  /** linked: the latest it is answered (the scheduler's clock, ms), `timeout` after it arrived; its events carry it as `$deadline` */
  deadline?: number;
  /** linked: runs out at `deadline` while the request has no events waiting for a reply (then its waiter has the same deadline) */
  clock?: Alarm;
  /** its body makes no event: too large, or answered before it was taken */
  discard: boolean;
  /** the body, read whole while the onramp was paused: it waits in `queued` for the gate to open */
  body?: Buffer;
}

const JSON_TYPE = { 'content-type': 'application/json' };

/** Reply headers that describe the body's framing, which only the server can know. */
const FRAMING = new Set(['content-length', 'transfer-encoding']);

/**
 * rest: an HTTP server on `host`/`port` (bound when the instance is created,
 * so a port in use fails the activation). Every request, whatever its path
 * and method, is one event: its body, read whole (at most `max_body_bytes`),
 * goes through the preprocessors and the codec its Content-Type picks
 * (`codec_map` over the builtin mime map, else the ramp's codec); a request
 * without a body is an event whose data is null. Meta `request` carries the
 * URL, method and headers. Each request is its own stream, ended with its
 * body, so a `lines` preprocessor splits one body and flushes its last line.
 *
 * Unlinked, a request is answered 202 once its body has been made into
 * events (400 when it made none because it could not be decoded). Linked,
 * it is answered within `timeout` ms of its arrival: with the reply to one
 * of its events (`$response.status`, default 200, and `$response.headers`),
 * else 504 when its events are in the flow, 503 with Retry-After when
 * backpressure kept it out of the flow (408 when its body was still
 * arriving). Its events carry that deadline as `$deadline`, and a linked
 * offramp does not send one whose deadline has passed.
 * While the circuit breaker is triggered request bodies are not read: the
 * clients wait, which is the backpressure HTTP has; a body that was read
 * whole meanwhile waits here (`queued`) and goes on when the gate opens.
 *
 * With `tls` the server speaks HTTPS only (`$request.url.scheme` https); its
 * certificate files are watched and a changed certificate is served to new
 * connections without a restart (_shared/tls.ts).
 */
export const restOnramp: OnrampType<RestOnrampConfig> = {
  name: 'rest',
  defaultCodec: 'json',
  placement: 'every-worker', // listening socket shared by the workers (docs/workers.md)
  linkable: true,
  example: { host: '127.0.0.1', port: 8180 },
  configSchema,
  validate(config) {
    if (config.tls !== undefined) readServerTls(config.tls);
  },
  async create(config, ctx) {
    const tls = config.tls;
    // with tls, an http:// request is told to use https:// rather than answered with nothing
    const server = httpServer(tls, { noDelay: true });
    // bound now: a port in use fails the activation
    const port = await listen(server, config.host, config.port);
    // with tls, httpServer made an https server
    const watch = tls !== undefined && server instanceof TlsServer ? reloadOnChange(server, tls, ctx.logger, `Onramp ${ctx.url}`) : undefined;
    return new RestSource(config, ctx, server, port, watch);
  },
};

/**
 * The source of one rest onramp: the server's requests, each an `Exchange`
 * from its arrival to its answer. A request goes through: `accept` (headers,
 * the linked clock, the size check), `read` (the body, paused with the
 * breaker), `arrive` (queued while paused), `hand` (the frame), `made` (what
 * the body made: answer now or wait), then `respond` with the reply, or
 * `expire` when its deadline passes first.
 */
class RestSource implements OnrampSource {
  readonly frames: Observable<Frame>;
  /** `host:port` as a client reaches the server: `$request.url` when a request has no Host header */
  private readonly localHost: string;
  /** `$request.url.scheme`: https with TLS */
  private readonly scheme: 'http' | 'https';
  /** the ramp's codec: for bodies without a Content-Type, and replies without one */
  private readonly rampCodec: string;
  private readonly waiters: Waiters<OnrampReply>;
  /** the Retry-After of a 503 for a request backpressure kept out: the timeout, in whole seconds */
  private readonly retryAfter: string;
  /** timeout, read */
  private readonly timeoutMs: number;
  private subscriber: Subscriber<Frame> | undefined;
  /** paused by the circuit breaker */
  private paused = false;
  /** requests whose bodies are being read: paused with the breaker */
  private readonly reading = new Set<IncomingMessage>();
  /** requests read whole while paused, in arrival order: handed on when the gate opens */
  private queued: Exchange[] = [];
  private nextStream = 0;
  // most clients send the same Content-Type every time: the last lookup is kept
  private lastType: string | undefined;
  private lastCodec: string;
  /** the server's listener, kept to take it off at close */
  private readonly onRequest = (req: IncomingMessage, res: ServerResponse): void => this.accept(req, res);

  constructor(
    private readonly config: RestOnrampConfig,
    private readonly ctx: OnrampContext,
    private readonly server: Server | TlsServer,
    port: number,
    /** TLS: the certificate files' watch, stopped at close */
    private readonly watch: CertificateWatch | undefined,
  ) {
    server.on('error', (err: Error) => ctx.logger.error(`Onramp ${ctx.url}: ${err.message}`));
    // a failed handshake (an untrusted client, no client certificate when one is required) concerns that client only
    server.on('tlsClientError', (err: Error) => ctx.logger.debug(`Onramp ${ctx.url}: TLS handshake failed: ${err.message}`));
    this.scheme = watch === undefined ? 'http' : 'https';
    this.localHost = `${uriHost((server.address() as AddressInfo).address)}:${port}`;
    ctx.logger.info(`Onramp ${ctx.url} listening on ${this.scheme}://${this.localHost}/`);
    this.rampCodec = this.lastCodec = ctx.codecForMime(undefined);
    this.timeoutMs = durationMs(config.timeout, 'timeout');
    this.waiters = new Waiters<OnrampReply>(this.timeoutMs, ctx.scheduler);
    this.retryAfter = String(Math.max(1, Math.ceil(this.timeoutMs / 1000)));
    server.on('request', this.onRequest);
    this.frames = new Observable<Frame>((s) => {
      this.subscriber = s;
      this.setFlowing();
      return () => {
        if (this.subscriber === s) this.subscriber = undefined;
        this.setFlowing();
        this.refuseQueued();
      };
    });
  }

  pause(): void {
    this.paused = true;
    this.setFlowing();
  }

  resume(): void {
    this.paused = false;
    this.setFlowing();
    this.flush();
  }

  /** Requests whose bodies are still to be read, and those read whole that wait for the gate. */
  inputs(): SourceInputs {
    return { open: this.reading.size, reading: [...this.reading].filter((req) => req.readableFlowing === true).length, held: this.queued.length };
  }

  /** Linked: a reply answers the request its event came from; a batch answers every request among its members (with 500). */
  reply(reply: OnrampReply): void {
    const keys = reply.ids.map(idKey);
    if (keys.length === 0) {
      this.ctx.logger.warn(
        `Onramp ${this.ctx.url}: a reply that answers none of this onramp's events (id ${reply.event.id.uid}:${reply.event.id.seq}); dropped`,
      );
      return;
    }
    const waiters = this.waiters;
    const unanswered = reply.event.isBatch ? keys.filter((key) => !waiters.answer([key], reply)) : waiters.answer(keys, reply) ? [] : keys;
    if (unanswered.length > 0) {
      this.ctx.logger.debug(`Onramp ${this.ctx.url}: dropped a late reply: its request no longer waits (answered, timed out or gone)`);
    }
  }

  async close(): Promise<void> {
    this.watch?.stop();
    this.server.off('request', this.onRequest);
    this.refuseQueued();
    this.waiters.dropAll();
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }

  private get flowing(): boolean {
    return this.subscriber !== undefined && !this.paused;
  }

  /** Pauses or resumes every body being read, to match the gate. */
  private setFlowing(): void {
    const on = this.flowing;
    for (const req of this.reading) {
      if (on) req.resume();
      else req.pause();
    }
  }

  private codecFor(contentType: string | undefined): string {
    if (contentType !== this.lastType) {
      this.lastCodec = this.ctx.codecForMime(contentType);
      this.lastType = contentType;
    }
    return this.lastCodec;
  }

  /** A request arrived: its exchange, its clock when linked; a body declared too large is refused before it is read. */
  private accept(req: IncomingMessage, res: ServerResponse): void {
    // the headers as $request carries them, read once from rawHeaders (Node's own req.headers object is never built)
    const headers = headerLists(req.rawHeaders);
    const ex: Exchange = { req, res, headers, discard: false };
    if (this.ctx.linked) this.startClock(ex);
    const declared = headers['content-length']?.[0];
    if (declared !== undefined && Number(declared) > this.config.max_body_bytes) return tooLarge(req, res, this.config.max_body_bytes);
    this.read(ex);
  }

  /** Linked: the clock starts at arrival, not when the body is read, so a request held back by backpressure is answered in time too. */
  private startClock(ex: Exchange): void {
    const deadline = (ex.deadline = this.ctx.scheduler.now() + this.timeoutMs);
    ex.clock = new Alarm(this.ctx.scheduler, deadline, () => this.expire(ex));
    // a client that goes away frees its clock and its waiter at once
    ex.res.once('close', () => {
      ex.clock?.cancel();
      if (!ex.res.writableEnded) this.waiters.dropGroup(ex.res);
    });
  }

  /** Reads the body whole, at most `max_body_bytes` (413 beyond); paused while the gate is closed. */
  private read(ex: Exchange): void {
    const { req, res } = ex;
    const max = this.config.max_body_bytes;
    const chunks: Buffer[] = [];
    let size = 0;
    this.reading.add(req);
    // paused before 'data' is attached, so nothing is read until the gate opens
    if (!this.flowing) req.pause();
    req.on('data', (chunk: Buffer) => {
      if (ex.discard) return;
      size += chunk.length;
      if (size > max) {
        ex.discard = true;
        chunks.length = 0;
        tooLarge(req, res, max);
      } else chunks.push(chunk);
    });
    req.on('end', () => {
      this.reading.delete(req);
      if (!ex.discard) this.arrive(ex, chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size));
    });
    req.on('close', () => this.reading.delete(req));
  }

  /**
   * The body is read. Its last bytes can come after the gate closed (Node
   * emits 'end' a tick after the last 'data'): it then waits here, so a
   * request answered meanwhile (its deadline passed) never enters the flow.
   */
  private arrive(ex: Exchange, body: Buffer): void {
    if (this.subscriber === undefined) return answerError(ex.res, 503, 'the onramp is not running');
    if (this.paused) {
      ex.body = body;
      this.queued.push(ex);
    } else this.hand(ex, body);
  }

  /** Hands on the bodies that waited for the gate, until it closes again. */
  private flush(): void {
    while (this.flowing) {
      const ex = this.queued.shift();
      if (ex === undefined) break;
      // eslint-disable-next-line @typescript-eslint/no-non-null-assertion -- an exchange in `queued` has its body: `arrive` sets it before queueing it
      const body = ex.body!;
      ex.body = undefined;
      this.hand(ex, body);
    }
  }

  /** The requests still waiting for the gate get 503: the onramp stops. */
  private refuseQueued(): void {
    const refused = this.queued;
    this.queued = [];
    for (const ex of refused) answerError(ex.res, 503, 'the onramp stopped before the request was taken');
  }

  /** One frame, answered when the machinery has made it into events. */
  private hand(ex: Exchange, body: Buffer): void {
    const { req, res, headers } = ex;
    if (this.subscriber === undefined) return answerError(res, 503, 'the onramp is not running');
    // the clock's timer can be late on a busy loop: past its deadline a request is not taken, whatever the timer
    if (ex.deadline !== undefined && this.ctx.scheduler.now() >= ex.deadline) return this.expire(ex);
    const meta: Record<string, unknown> = { request: requestMeta(req, headers, this.localHost, this.scheme) };
    if (ex.deadline !== undefined) meta.deadline = ex.deadline;
    const originUri = `svc-rest://${clientHost(req)}`;
    const done = (result: FrameResult) => this.made(ex, result);
    // a request without a body is an event with data null (a GET), whatever the codec
    const frame: Frame =
      body.length === 0
        ? { stream: 0, value: null, originUri, meta, done }
        : { stream: ++this.nextStream, data: body, end: true, originUri, meta, codec: this.codecFor(headers['content-type']?.[0]), done };
    this.subscriber.next(frame);
  }

  /**
   * Linked: the deadline passed before the request's events waited for a
   * reply, so it made none and is answered without: 503 with Retry-After
   * when backpressure held it (paused, or read and waiting for the gate),
   * 408 when the onramp was reading and the client had not sent its whole body.
   */
  private expire(ex: Exchange): void {
    const { req, res } = ex;
    const timeout = this.timeoutMs;
    if (res.writableEnded || res.destroyed) return;
    ex.discard = true;
    if (ex.body !== undefined) {
      ex.body = undefined;
      this.queued.splice(this.queued.indexOf(ex), 1);
    }
    const unread = this.reading.delete(req);
    if (unread) {
      // the rest of the body is read and thrown away, then the connection closes
      res.shouldKeepAlive = false;
      req.resume();
    }
    if (unread && this.flowing) answerError(res, 408, `the request body did not arrive within ${timeout} ms`);
    else {
      answerError(res, 503, `not taken within ${timeout} ms: the onramp is held back by backpressure; nothing was processed`, {
        'retry-after': this.retryAfter,
      });
    }
  }

  /** What the body made: answer now (unlinked, or nothing to wait for), or wait for the reply. */
  private made(ex: Exchange, result: FrameResult): void {
    const { res } = ex;
    if (res.writableEnded || res.destroyed) return;
    if (result.ids.length === 0) {
      if (!this.ctx.linked && result.errors.length === 0) return answer(res, 202);
      return answerError(res, 400, result.errors.length > 0 ? result.errors.join('; ') : 'the body made no event');
    }
    if (!this.ctx.linked) return answer(res, 202);
    // from here the waiter keeps the request's deadline
    ex.clock?.cancel();
    // the machinery calls `done` before the events go downstream, so even a synchronous pipeline finds the waiter in place
    const timeout = this.timeoutMs;
    this.waiters.wait(
      result.ids.map(idKey),
      res,
      (reply) => this.respond(res, reply),
      (end: WaitEnd) =>
        end === 'timeout' ? answerError(res, 504, `no reply within ${timeout} ms`) : answerError(res, 503, 'the onramp stopped before the reply came'),
      ex.deadline,
    );
  }

  /** The reply event as the HTTP response; a reply that cannot be one is answered 500. */
  private respond(res: ServerResponse, reply: OnrampReply): void {
    if (res.writableEnded || res.destroyed) return;
    if (reply.event.isBatch) {
      return answerError(res, 500, 'the reply is a batch of events; a linked rest onramp answers one request with one event');
    }
    let response: ReplyResponse;
    try {
      response = this.response(reply);
    } catch (err) {
      return answerError(res, 500, `cannot answer with the reply: ${(err as Error).message}`);
    }
    try {
      res.writeHead(response.status, response.headers);
    } catch (err) {
      // an invalid header name or value: nothing was written yet
      return answerError(res, 500, `cannot answer with the reply: ${(err as Error).message}`);
    }
    res.end(response.body);
  }

  /** Status and headers from `$response`, the body encoded by its Content-Type; throws on a bad `$response`. */
  private response(reply: OnrampReply): ReplyResponse {
    let status = 200;
    let headers: Record<string, string | string[]> = {};
    const response = reply.event.meta.response as { status?: unknown; headers?: unknown } | null | undefined;
    if (response !== undefined && response !== null) {
      if (typeof response !== 'object') throw new Error('$response must be a record with status and headers');
      if (response.status !== undefined) status = checkStatus(response.status);
      headers = headerValues(response.headers, '$response.headers');
    }
    const contentType = headerNamed(headers, 'content-type');
    const codec = contentType === undefined ? this.rampCodec : this.ctx.codecForMime(contentType);
    const parts = reply.encode(codec);
    const body = parts.length === 1 ? parts[0] : Buffer.concat(parts);
    if (contentType === undefined) headers['content-type'] = mimeOf(codec);
    // the length of the body as encoded here (one write, no chunked framing), whatever the reply said
    headers = Object.fromEntries(Object.entries(headers).filter(([name]) => !FRAMING.has(name.toLowerCase())));
    headers['content-length'] = String(body.length);
    return { status, headers, body };
  }
}

/** A reply as the HTTP response it becomes. */
interface ReplyResponse {
  status: number;
  headers: Record<string, string | string[]>;
  body: Buffer;
}

function answer(res: ServerResponse, status: number): void {
  res.writeHead(status, { 'content-length': '0' });
  res.end();
}

function answerError(res: ServerResponse, status: number, error: string, headers?: Record<string, string>): void {
  if (res.headersSent || res.destroyed) return;
  const body = JSON.stringify({ error });
  res.writeHead(status, { ...JSON_TYPE, ...headers, 'content-length': String(Buffer.byteLength(body)) });
  res.end(body);
}

/** 413 and close: the rest of the body is read and thrown away, so the client sees the answer rather than a reset. */
function tooLarge(req: IncomingMessage, res: ServerResponse, max: number): void {
  if (res.headersSent) return;
  res.shouldKeepAlive = false;
  answerError(res, 413, `the body is larger than ${max} bytes`);
  req.resume();
}

function checkStatus(status: unknown): number {
  if (typeof status === 'number' && Number.isInteger(status) && status >= 200 && status <= 599) return status;
  throw new Error(`$response.status must be an integer from 200 to 599, got ${JSON.stringify(status)}`);
}

/** The client's address, as the origin URI's host. */
function clientHost(req: IncomingMessage): string {
  const address = req.socket.remoteAddress ?? 'unknown';
  return address.includes(':') ? `[${address}]` : address;
}

/** `$request`: the URL as the client asked for it (Host header + request target), the method, the headers. */
export function requestMeta(req: IncomingMessage, headers: HeaderLists, localHost: string, scheme: 'http' | 'https' = 'http'): RequestMeta {
  return { url: requestUrl(req.url ?? '/', headers.host?.[0] ?? localHost, scheme), method: req.method ?? 'GET', headers };
}

function requestUrl(target: string, hostHeader: string, scheme: 'http' | 'https'): RequestUrl {
  // absolute form (`GET http://user:pw@host/p HTTP/1.1`, as sent to proxies): everything comes from the target;
  // the usual origin form starts with "/" and skips the regex
  if (target.charCodeAt(0) !== 0x2f && /^[a-z][a-z0-9+.-]*:\/\//i.test(target)) {
    try {
      const u = new URL(target);
      const url: RequestUrl = { scheme: u.protocol.slice(0, -1), host: u.hostname, path: u.pathname };
      if (u.username) url.username = decodeURIComponent(u.username);
      if (u.password) url.password = decodeURIComponent(u.password);
      if (u.port) url.port = Number(u.port);
      const q = target.indexOf('?');
      if (q !== -1) url.query = u.search.slice(1);
      if (target.includes('#')) url.fragment = u.hash.slice(1);
      return url;
    } catch {
      // not a URL after all: taken as a path below
    }
  }
  const url: RequestUrl = { scheme, host: hostHeader, path: target };
  // the port is set only when the Host header names one (absent means the scheme's default, 80 or 443)
  const colon = hostHeader.lastIndexOf(':');
  if (colon !== -1 && colon > hostHeader.lastIndexOf(']')) {
    const port = Number(hostHeader.slice(colon + 1));
    if (Number.isInteger(port) && port >= 0 && port <= 65535 && colon + 1 < hostHeader.length) {
      url.host = hostHeader.slice(0, colon);
      url.port = port;
    }
  }
  const hash = target.indexOf('#');
  let rest = target;
  if (hash !== -1) {
    url.fragment = rest.slice(hash + 1);
    rest = rest.slice(0, hash);
  }
  const q = rest.indexOf('?');
  if (q !== -1) {
    url.query = rest.slice(q + 1);
    rest = rest.slice(0, q);
  }
  url.path = rest;
  return url;
}
