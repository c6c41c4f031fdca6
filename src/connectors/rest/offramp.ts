import { Slots } from '../_shared/slots';
import { connect, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { Subscription } from '../../core/rx';
import { Agent } from 'undici';
import type { EddyEvent, Meta } from '../../core/event';
import type { OfframpType } from '../connector';
import { headerNamed, headerValues, mimeOf, type HeaderLists } from './http';

/** The spec's endpoint struct (the string form is a URL). */
interface EndpointParts {
  scheme: string;
  username?: string;
  password?: string;
  host: string;
  port?: number;
  path?: string;
  query?: string;
  fragment?: string;
}

interface RestOfframpConfig {
  endpoint: string | EndpointParts;
  method: string;
  headers: Record<string, string | string[]>;
  concurrency: number;
}

/** Where a request goes: undici's origin and path, and the host and port a reconnect probe dials. */
interface Target {
  origin: string;
  path: string;
  host: string;
  port: number;
  auth?: string;
}

/** One event's request, worked out when the machinery asks which codec to encode it with. */
interface Plan {
  target: Target;
  method: string;
  headers: Record<string, string | string[]>;
  codec: string;
  /** linked: the event's `$deadline` (the scheduler's clock, ms), after which it is not sent */
  deadline?: number;
  /** the event's `$endpoint`, `$request` or `$deadline` was unusable: the event fails */
  error?: Error;
}

/** Errors that mean the peer cannot be reached (rather than one bad request): they trigger the breaker. */
const CONNECTION_LOST = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EHOSTDOWN',
  'ETIMEDOUT',
  'EPIPE',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/**
 * Headers that describe one connection or one body's framing, which the
 * client sets itself: taken from `$request.headers` (a rest onramp's request,
 * relayed) they would be wrong for this request, so they are left out.
 */
const HOP_BY_HOP = new Set(['host', 'content-length', 'transfer-encoding', 'connection', 'keep-alive', 'upgrade', 'te', 'trailer', 'expect', 'proxy-connection']);

const FIRST_RETRY_MS = 100;
const MAX_RETRY_MS = 5000;

const endpointSchema = {
  description: 'where requests go: a URL, or its parts',
  oneOf: [
    { type: 'string', minLength: 1, description: 'an http:// or https:// URL' },
    {
      type: 'object',
      additionalProperties: false,
      required: ['scheme', 'host'],
      description: 'the URL in parts',
      properties: {
        scheme: { type: 'string', enum: ['http', 'https'], description: 'http or https' },
        username: { type: 'string', description: 'user for basic authentication' },
        password: { type: 'string', description: 'password for basic authentication' },
        host: { type: 'string', minLength: 1, description: 'host name or address' },
        port: { type: 'integer', minimum: 1, maximum: 65535, description: "port (default: the scheme's, 80 or 443)" },
        path: { type: 'string', description: 'path (default /)' },
        query: { type: 'string', description: 'query string, without the ?' },
        fragment: { type: 'string', description: 'fragment, without the # (never sent to the server)' },
      },
    },
  ],
};

/**
 * rest: an HTTP client. Each event is one request (a batch: one request whose
 * body is its members' payloads one after the other) to `endpoint` with
 * `method` and `headers`; the event's `$endpoint` and `$request.method` /
 * `$request.headers` override them. The body is encoded with the codec its
 * Content-Type picks (`codec_map` over the builtin mime map, else the ramp's
 * codec; without a Content-Type the codec's own is sent). At most
 * `concurrency` requests are in flight; more wait their turn, and the
 * machinery triggers the breaker at that limit, so nothing is dropped.
 *
 * Delivery: a 2xx or 3xx answer acks the event (meta `time`, ms), 4xx/5xx
 * and network errors fail it. When the peer cannot be reached the breaker is
 * triggered, and a probe dials it with back-off (100 ms doubling to 5 s)
 * until it answers, then restores it. Linked, each response is decoded by its
 * Content-Type and emitted on `out` with `$response`; failures go to `err`.
 * Linked, an event whose `$deadline` (set by a linked rest onramp: when its
 * caller is answered without a reply) has passed when its turn comes is not
 * sent: nobody waits for the answer any more. It fails, with an `err` event.
 */
export const restOfframp: OfframpType<RestOfframpConfig> = {
  name: 'rest',
  defaultCodec: 'json',
  placement: 'every-worker', // independent requests (docs/workers.md)
  autoAck: false,
  linkable: true,
  example: { endpoint: 'http://127.0.0.1:8180/events', headers: { 'content-type': 'application/json' } },
  configSchema: {
    type: 'object',
    additionalProperties: false,
    required: ['endpoint'],
    properties: {
      endpoint: endpointSchema,
      method: { type: 'string', pattern: '^[A-Za-z]+$', default: 'POST', description: 'HTTP method' },
      headers: {
        type: 'object',
        default: {},
        description: 'request headers: name to a string or a list of strings',
        additionalProperties: { anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }] },
      },
      concurrency: { type: 'integer', minimum: 1, default: 4, description: 'requests in flight at most; more wait, and the breaker is triggered' },
    },
  },
  create(config, ctx) {
    const configured = target(config.endpoint, 'endpoint');
    const baseHeaders = headerValues(config.headers, 'headers');
    for (const name of Object.keys(baseHeaders)) {
      const lower = name.toLowerCase();
      if (lower !== 'host' && HOP_BY_HOP.has(lower)) throw new Error(`headers: ${name} is set by the HTTP client, not by config`);
    }
    const method = config.method.toUpperCase();
    // one pool per origin, never more connections than requests may be in flight
    const agent = new Agent({ connections: config.concurrency, pipelining: 1 });
    const plans = new WeakMap<EddyEvent, Plan>();

    let closed = false;
    /** at most `concurrency` requests in flight, the rest wait in order */
    const slots = new Slots(config.concurrency);

    // connection loss: the breaker is triggered until a probe reaches the peer again
    let down: Target | undefined;
    let retryMs = FIRST_RETRY_MS;
    let retry: Subscription | undefined;
    let probe: Socket | undefined;
    const lost = (t: Target) => {
      if (closed || down) return;
      down = t;
      retryMs = FIRST_RETRY_MS;
      ctx.logger.warn(`Offramp ${ctx.url}: ${t.origin} cannot be reached; paused, retrying`);
      ctx.trigger();
      scheduleProbe();
    };
    const scheduleProbe = () => {
      const wait = retryMs;
      retryMs = Math.min(retryMs * 2, MAX_RETRY_MS);
      retry = ctx.scheduler.schedule(() => {
        if (closed || !down) return;
        const socket = (probe = connect({ host: down.host, port: down.port }));
        socket.setTimeout(MAX_RETRY_MS);
        socket.once('connect', () => {
          socket.destroy();
          back();
        });
        const failed = () => {
          socket.destroy();
          if (probe === socket) probe = undefined;
          if (!closed && down) scheduleProbe();
        };
        socket.once('error', failed);
        socket.once('timeout', failed);
      }, wait);
    };
    const back = () => {
      if (!down) return;
      ctx.logger.info(`Offramp ${ctx.url}: ${down.origin} reachable again; resumed`);
      down = undefined;
      retry?.unsubscribe();
      probe?.destroy();
      probe = undefined;
      ctx.restore();
    };

    const plan = (event: EddyEvent): Plan => {
      const request = event.meta.request as { method?: unknown; headers?: unknown } | undefined;
      try {
        const t = event.meta.endpoint === undefined ? configured : target(event.meta.endpoint, '$endpoint');
        let m = method;
        let headers = baseHeaders;
        if (request !== undefined && request !== null) {
          if (typeof request !== 'object') throw new Error('$request must be a record with method and headers');
          if (request.method !== undefined) {
            if (typeof request.method !== 'string' || !/^[A-Za-z]+$/.test(request.method)) throw new Error(`$request.method: not a method: ${JSON.stringify(request.method)}`);
            m = request.method.toUpperCase();
          }
          if (request.headers !== undefined) headers = withOverrides(baseHeaders, endToEnd(headerValues(request.headers, '$request.headers')));
        }
        const contentType = headerNamed(headers, 'content-type');
        const codec = ctx.codecForMime(contentType);
        if (contentType === undefined || (t.auth !== undefined && headerNamed(headers, 'authorization') === undefined)) {
          headers = { ...headers };
          if (contentType === undefined) headers['content-type'] = mimeOf(codec);
          if (t.auth !== undefined && headerNamed(headers, 'authorization') === undefined) headers.authorization = t.auth;
        }
        const deadline = ctx.linked ? deadlineOf(event.meta.deadline) : undefined;
        return { target: t, method: m, headers, codec, deadline };
      } catch (err) {
        return { target: configured, method, headers: baseHeaders, codec: ctx.codecForMime(undefined), error: err as Error };
      }
    };

    /** A linked failure on `err` (data `{error, event_id}`, meta `{response?, error}`), then the event fails. */
    const failure = (event: EddyEvent, error: string, response?: Meta): Error => {
      if (ctx.linked) {
        const meta: Meta = response === undefined ? { error } : { response, error };
        ctx.reply('err', event, { error, event_id: `${event.id.uid}:${event.id.seq}` }, meta);
      }
      return new Error(error);
    };

    return {
      codecFor(event) {
        const p = plan(event);
        plans.set(event, p);
        return p.codec;
      },
      async send(payloads, event) {
        const p = plans.get(event) ?? plan(event);
        plans.delete(event);
        if (p.error) throw failure(event, p.error.message);
        if (ctx.linked && event.isBatch) throw failure(event, 'a linked rest offramp cannot send a batch: its response could not be matched to one event');
        const body = p.method === 'GET' || p.method === 'HEAD' ? null : payloads.length === 1 ? payloads[0] : Buffer.concat(payloads);
        if (p.deadline !== undefined && ctx.scheduler.now() >= p.deadline) throw failure(event, expired(p.deadline, ctx.scheduler.now(), 'reached the offramp'));
        const turn = slots.acquire();
        if (turn !== true && !(await turn)) throw new Error('the offramp closed before the request was sent');
        // checked again when the turn comes, right before sending: the wait for a slot may have outlasted it
        if (p.deadline !== undefined && ctx.scheduler.now() >= p.deadline) {
          slots.release();
          throw failure(event, expired(p.deadline, ctx.scheduler.now(), 'got its turn'));
        }
        const started = performance.now();
        let status: number;
        let headers: HeaderLists;
        let responseBody: Buffer | undefined;
        try {
          const res = await agent.request({ origin: p.target.origin, path: p.target.path, method: p.method as 'POST', headers: p.headers, body });
          status = res.statusCode;
          headers = responseHeaders(res.headers);
          // the connection is free only once the body is read
          if (ctx.linked) responseBody = Buffer.from(await res.body.arrayBuffer());
          else await res.body.dump();
        } catch (err) {
          const code = (err as { code?: string }).code;
          if (code !== undefined && CONNECTION_LOST.has(code)) lost(p.target);
          throw failure(event, `${p.method} ${p.target.origin}${p.target.path}: ${(err as Error).message}${code ? ` (${code})` : ''}`);
        } finally {
          slots.release();
        }
        if (down !== undefined && down.origin === p.target.origin) back();
        const response = { status, headers };
        if (status >= 400) throw failure(event, `${p.method} ${p.target.origin}${p.target.path} answered ${status}`, response);
        if (event.transactional) ctx.insight('ack', event, { time: performance.now() - started });
        if (ctx.linked) {
          let values: unknown[];
          try {
            values = responseBody!.length === 0 ? [null] : ctx.decode(responseBody!, ctx.codecForMime(headers['content-type']?.[0]));
          } catch (err) {
            // delivered (the event is acked), but the answer is unreadable
            failure(event, `cannot decode the response: ${(err as Error).message}`, response);
            return;
          }
          for (const value of values) ctx.reply('out', event, value, { response });
        }
      },
      async close() {
        closed = true;
        retry?.unsubscribe();
        probe?.destroy();
        slots.close();
        await agent.destroy();
      },
    };
  },
};

/** `$deadline`: absent, or a number of ms on the runtime's clock (epoch ms unless a test scheduler runs it). */
function deadlineOf(deadline: unknown): number | undefined {
  if (deadline === undefined || deadline === null) return undefined;
  if (typeof deadline !== 'number' || Number.isNaN(deadline)) throw new Error(`$deadline must be a time in ms (a number), got ${JSON.stringify(deadline)}`);
  return deadline;
}

/** Why an event whose deadline passed was not sent. */
function expired(deadline: number, now: number, where: string): string {
  return `not sent: its $deadline had passed by ${now - deadline} ms when it ${where}; its caller was already answered`;
}

/** Headers without the connection and framing ones (`HOP_BY_HOP`). */
function endToEnd(headers: Record<string, string | string[]>): Record<string, string | string[]> {
  for (const name of Object.keys(headers)) if (HOP_BY_HOP.has(name.toLowerCase())) delete headers[name];
  return headers;
}

/** Headers with `overrides` replacing same-named ones (names compared case-insensitively). */
function withOverrides(base: Record<string, string | string[]>, overrides: Record<string, string | string[]>): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  const replaced = new Set(Object.keys(overrides).map((n) => n.toLowerCase()));
  for (const [name, value] of Object.entries(base)) if (!replaced.has(name.toLowerCase())) out[name] = value;
  return Object.assign(out, overrides);
}

/** undici's response headers (lowercase names, a string or a list) as the spec's lists. */
function responseHeaders(headers: Record<string, string | string[] | undefined>): HeaderLists {
  const out: HeaderLists = {};
  for (const [name, value] of Object.entries(headers)) if (value !== undefined) out[name] = Array.isArray(value) ? value : [value];
  return out;
}

/** A config or `$endpoint` value (a URL string or its parts) as a request target; throws naming `where`. */
function target(endpoint: unknown, where: string): Target {
  let url: URL;
  try {
    url = new URL(typeof endpoint === 'string' ? endpoint : urlOf(endpoint, where));
  } catch (err) {
    throw new Error(`${where}: ${(err as Error).message}: ${JSON.stringify(endpoint)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`${where}: the scheme must be http or https, not ${url.protocol.slice(0, -1)}`);
  const t: Target = {
    origin: url.origin,
    path: `${url.pathname}${url.search}`,
    host: url.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80,
  };
  if (url.username || url.password) {
    const user = decodeURIComponent(url.username);
    const password = decodeURIComponent(url.password);
    t.auth = `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
  }
  return t;
}

function urlOf(endpoint: unknown, where: string): string {
  if (endpoint === null || typeof endpoint !== 'object' || Array.isArray(endpoint)) throw new Error(`${where} must be a URL or a record of its parts`);
  const e = endpoint as Partial<EndpointParts>;
  if (typeof e.scheme !== 'string' || typeof e.host !== 'string') throw new Error('scheme and host are required');
  const userinfo =
    e.username !== undefined || e.password !== undefined
      ? `${encodeURIComponent(e.username ?? '')}${e.password !== undefined ? `:${encodeURIComponent(e.password)}` : ''}@`
      : '';
  const host = e.host.includes(':') && !e.host.startsWith('[') ? `[${e.host}]` : e.host;
  const path = e.path === undefined || e.path === '' ? '/' : e.path.startsWith('/') ? e.path : `/${e.path}`;
  return `${e.scheme}://${userinfo}${host}${e.port !== undefined ? `:${e.port}` : ''}${path}${e.query !== undefined ? `?${e.query}` : ''}${
    e.fragment !== undefined ? `#${e.fragment}` : ''
  }`;
}
