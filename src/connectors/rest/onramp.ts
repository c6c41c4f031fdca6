import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Observable, type Subscriber } from '../../core/rx';
import type { Frame, FrameResult, OnrampReply, OnrampType } from '../connector';
import { Alarm, Waiters, idKey, type WaitEnd } from '../_shared/waiters';
import { listen, uriHost } from '../_shared/net';
import { headerLists, headerNamed, headerValues, mimeOf, type HeaderLists } from './http';

interface RestOnrampConfig {
  host: string;
  port: number;
  timeout: number;
  max_body_bytes: number;
}

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
 */
export const restOnramp: OnrampType<RestOnrampConfig> = {
  name: 'rest',
  defaultCodec: 'json',
  placement: 'every-worker', // listening socket shared by the workers (docs/workers.md)
  linkable: true,
  example: { host: '127.0.0.1', port: 8180 },
  configSchema: {
    type: 'object',
    additionalProperties: false,
    properties: {
      host: {
        type: 'string',
        minLength: 1,
        default: '127.0.0.1',
        description: 'address to listen on; the default accepts only local clients, 0.0.0.0 (or ::) every interface',
      },
      port: { type: 'integer', minimum: 0, maximum: 65535, default: 8000, description: 'TCP port to listen on (0: any free port, logged)' },
      timeout: {
        type: 'integer',
        minimum: 1,
        default: 10000,
        description:
          'linked only: ms from the arrival of a request to its answer: the reply, else 504 (503 with Retry-After when backpressure kept it out of the flow)',
      },
      max_body_bytes: {
        type: 'integer',
        minimum: 0,
        default: 10485760,
        description: 'largest request body read; a larger one is answered 413 and makes no event',
      },
    },
  },
  async create(config, ctx) {
    const server = createServer({ noDelay: true });
    const port = await listen(server, config.host, config.port);
    server.on('error', (err) => ctx.logger.error(`Onramp ${ctx.url}: ${err.message}`));
    const localHost = `${uriHost((server.address() as AddressInfo).address)}:${port}`;
    ctx.logger.info(`Onramp ${ctx.url} listening on http://${localHost}/`);

    const rampCodec = ctx.codecForMime(undefined);
    const waiters = new Waiters<OnrampReply>(config.timeout, ctx.scheduler);
    let subscriber: Subscriber<Frame> | undefined;
    let paused = false;
    /** requests whose bodies are being read: paused with the breaker */
    const reading = new Set<IncomingMessage>();
    /** requests read whole while paused, in arrival order: handed on when the gate opens */
    let queued: Exchange[] = [];
    let nextStream = 0;
    const retryAfter = String(Math.max(1, Math.ceil(config.timeout / 1000)));

    const flowing = () => subscriber !== undefined && !paused;

    // most clients send the same Content-Type every time: the last lookup is kept
    let lastType: string | undefined;
    let lastCodec = rampCodec;
    const codecFor = (contentType: string | undefined) => {
      if (contentType !== lastType) {
        lastCodec = ctx.codecForMime(contentType);
        lastType = contentType;
      }
      return lastCodec;
    };

    const onRequest = (req: IncomingMessage, res: ServerResponse) => {
      // the headers as $request carries them, read once from rawHeaders (Node's own req.headers object is never built)
      const headers = headerLists(req.rawHeaders);
      const ex: Exchange = { req, res, headers, discard: false };
      if (ctx.linked) {
        // the clock starts now, not when the body is read: a request held back by backpressure is answered in time too
        const deadline = (ex.deadline = ctx.scheduler.now() + config.timeout);
        ex.clock = new Alarm(ctx.scheduler, deadline, () => expire(ex));
        // a client that goes away frees its clock and its waiter at once
        res.once('close', () => {
          ex.clock?.cancel();
          if (!res.writableEnded) waiters.dropGroup(res);
        });
      }
      const declared = headers['content-length']?.[0];
      if (declared !== undefined && Number(declared) > config.max_body_bytes) return tooLarge(req, res, config.max_body_bytes);
      const chunks: Buffer[] = [];
      let size = 0;
      reading.add(req);
      // paused before 'data' is attached, so nothing is read until the gate opens
      if (!flowing()) req.pause();
      req.on('data', (chunk: Buffer) => {
        if (ex.discard) return;
        size += chunk.length;
        if (size > config.max_body_bytes) {
          ex.discard = true;
          chunks.length = 0;
          tooLarge(req, res, config.max_body_bytes);
        } else chunks.push(chunk);
      });
      req.on('end', () => {
        reading.delete(req);
        if (!ex.discard) arrive(ex, chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size));
      });
      req.on('close', () => reading.delete(req));
    };

    /**
     * The body is read. Its last bytes can come after the gate closed (Node
     * emits 'end' a tick after the last 'data'): it then waits here, so a
     * request answered meanwhile (its deadline passed) never enters the flow.
     */
    const arrive = (ex: Exchange, body: Buffer) => {
      if (subscriber === undefined) return answerError(ex.res, 503, 'the onramp is not running');
      if (paused) {
        ex.body = body;
        queued.push(ex);
      } else hand(ex, body);
    };

    /** Hands on the bodies that waited for the gate, until it closes again. */
    const flush = () => {
      while (flowing() && queued.length > 0) {
        const ex = queued.shift()!;
        const body = ex.body!;
        ex.body = undefined;
        hand(ex, body);
      }
    };

    /** The requests still waiting for the gate get 503: the onramp stops. */
    const refuseQueued = () => {
      const refused = queued;
      queued = [];
      for (const ex of refused) answerError(ex.res, 503, 'the onramp stopped before the request was taken');
    };

    /** One frame, answered when the machinery has made it into events. */
    const hand = (ex: Exchange, body: Buffer) => {
      const { req, res, headers } = ex;
      if (subscriber === undefined) return answerError(res, 503, 'the onramp is not running');
      // the clock's timer can be late on a busy loop: past its deadline a request is not taken, whatever the timer
      if (ex.deadline !== undefined && ctx.scheduler.now() >= ex.deadline) return expire(ex);
      const meta: Record<string, unknown> = { request: requestMeta(req, headers, localHost) };
      if (ex.deadline !== undefined) meta.deadline = ex.deadline;
      const originUri = `svc-rest://${clientHost(req)}`;
      const done = (result: FrameResult) => made(ex, result);
      // a request without a body is an event with data null (a GET), whatever the codec
      const frame: Frame =
        body.length === 0
          ? { stream: 0, value: null, originUri, meta, done }
          : { stream: ++nextStream, data: body, end: true, originUri, meta, codec: codecFor(headers['content-type']?.[0]), done };
      subscriber.next(frame);
    };

    /**
     * Linked: the deadline passed before the request's events waited for a
     * reply, so it made none and is answered without: 503 with Retry-After
     * when backpressure held it (paused, or read and waiting for the gate),
     * 408 when the onramp was reading and the client had not sent its whole body.
     */
    const expire = (ex: Exchange) => {
      const { req, res } = ex;
      if (res.writableEnded || res.destroyed) return;
      ex.discard = true;
      if (ex.body !== undefined) {
        ex.body = undefined;
        queued.splice(queued.indexOf(ex), 1);
      }
      const unread = reading.delete(req);
      if (unread) {
        // the rest of the body is read and thrown away, then the connection closes
        res.shouldKeepAlive = false;
        req.resume();
      }
      if (unread && flowing()) answerError(res, 408, `the request body did not arrive within ${config.timeout} ms`);
      else {
        answerError(res, 503, `not taken within ${config.timeout} ms: the onramp is held back by backpressure; nothing was processed`, {
          'retry-after': retryAfter,
        });
      }
    };

    /** What the body made: answer now (unlinked, or nothing to wait for), or wait for the reply. */
    const made = (ex: Exchange, result: FrameResult) => {
      const { res } = ex;
      if (res.writableEnded || res.destroyed) return;
      if (result.ids.length === 0) {
        if (!ctx.linked && result.errors.length === 0) return answer(res, 202);
        return answerError(res, 400, result.errors.length > 0 ? result.errors.join('; ') : 'the body made no event');
      }
      if (!ctx.linked) return answer(res, 202);
      // from here the waiter keeps the request's deadline
      ex.clock?.cancel();
      // the machinery calls `done` before the events go downstream, so even a synchronous pipeline finds the waiter in place
      const keys = result.ids.map(idKey);
      waiters.wait(
        keys,
        res,
        (reply) => respond(res, reply),
        (end: WaitEnd) =>
          end === 'timeout' ? answerError(res, 504, `no reply within ${config.timeout} ms`) : answerError(res, 503, 'the onramp stopped before the reply came'),
        ex.deadline,
      );
    };

    /** The reply event as the HTTP response: status and headers from `$response`, the body by its Content-Type. */
    const respond = (res: ServerResponse, reply: OnrampReply) => {
      if (res.writableEnded || res.destroyed) return;
      if (reply.event.isBatch) {
        return answerError(res, 500, 'the reply is a batch of events; a linked rest onramp answers one request with one event');
      }
      let status = 200;
      let headers: Record<string, string | string[]> = {};
      let body: Buffer;
      try {
        const response = reply.event.meta.response as { status?: unknown; headers?: unknown } | undefined;
        if (response !== undefined && response !== null) {
          if (typeof response !== 'object') throw new Error('$response must be a record with status and headers');
          if (response.status !== undefined) status = checkStatus(response.status);
          headers = headerValues(response.headers, '$response.headers');
        }
        const contentType = headerNamed(headers, 'content-type');
        const codec = contentType === undefined ? rampCodec : ctx.codecForMime(contentType);
        const parts = reply.encode(codec);
        body = parts.length === 1 ? parts[0] : Buffer.concat(parts);
        if (contentType === undefined) headers['content-type'] = mimeOf(codec);
        // the length of the body as encoded here (one write, no chunked framing), whatever the reply said
        for (const name of Object.keys(headers)) if (FRAMING.has(name.toLowerCase())) delete headers[name];
        headers['content-length'] = String(body.length);
      } catch (err) {
        return answerError(res, 500, `cannot answer with the reply: ${(err as Error).message}`);
      }
      try {
        res.writeHead(status, headers);
      } catch (err) {
        // an invalid header name or value: nothing was written yet
        return answerError(res, 500, `cannot answer with the reply: ${(err as Error).message}`);
      }
      res.end(body);
    };

    const setFlowing = () => {
      const on = flowing();
      for (const req of reading) on ? req.resume() : req.pause();
    };

    server.on('request', onRequest);

    const frames = new Observable<Frame>((s) => {
      subscriber = s;
      setFlowing();
      return () => {
        if (subscriber === s) subscriber = undefined;
        setFlowing();
        refuseQueued();
      };
    });

    return {
      frames,
      pause: () => {
        paused = true;
        setFlowing();
      },
      resume: () => {
        paused = false;
        setFlowing();
        flush();
      },
      // requests whose bodies are still to be read, and those read whole that wait for the gate
      inputs: () => ({ open: reading.size, reading: [...reading].filter((req) => req.readableFlowing === true).length, held: queued.length }),
      reply: (reply) => {
        const keys = reply.ids.map(idKey);
        if (keys.length === 0) {
          ctx.logger.warn(`Onramp ${ctx.url}: a reply that answers none of this onramp's events (id ${reply.event.id.uid}:${reply.event.id.seq}); dropped`);
          return;
        }
        // a batch answers every request among its members (with 500); one event answers the request it came from
        const unanswered = reply.event.isBatch ? keys.filter((key) => !waiters.answer([key], reply)) : waiters.answer(keys, reply) ? [] : keys;
        if (unanswered.length > 0) {
          ctx.logger.debug(`Onramp ${ctx.url}: dropped a late reply: its request no longer waits (answered, timed out or gone)`);
        }
      },
      close: async () => {
        server.off('request', onRequest);
        refuseQueued();
        waiters.dropAll();
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        });
      },
    };
  },
};

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
export function requestMeta(req: IncomingMessage, headers: HeaderLists, localHost: string): RequestMeta {
  return { url: requestUrl(req.url ?? '/', headers.host?.[0] ?? localHost), method: req.method ?? 'GET', headers };
}

function requestUrl(target: string, hostHeader: string): RequestUrl {
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
  const url: RequestUrl = { scheme: 'http', host: hostHeader, path: target };
  // the port is set only when the Host header names one (absent means the scheme's default, 80)
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
