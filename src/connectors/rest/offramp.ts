import { Slots } from '../_shared/slots';
import { Backoff } from '../_shared/backoff';
import { PeerWatch, connectProbe } from '../_shared/peer-watch';
import { connect } from 'node:net';
import { performance } from 'node:perf_hooks';
import { Agent } from 'undici';
import type { EddyEvent, Meta } from '../../core/event';
import type { OfframpContext, OfframpType, Sink } from '../connector';
import { headerNamed, headerValues, mimeOf, type HeaderLists } from './http';
import { headerMap, secretHeaders } from '../../schema/fields';
import { s } from '../../schema/typed';
import type { Static } from '../../schema/typed';

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
const HOP_BY_HOP = new Set([
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
  'te',
  'trailer',
  'expect',
  'proxy-connection',
]);

const FIRST_RETRY_MS = 100;
const MAX_RETRY_MS = 5000;

/** The spec's endpoint struct (the string form is a URL). */
const endpointPartsSchema = s.object(
  {
    // `type` beside the enum, as this field always had: a non-string is told "must be string"
    scheme: { type: 'string', ...s.literals(['http', 'https'], { description: 'http or https' }) },
    username: s.string({ description: 'user for basic authentication' }),
    password: s.string({ writeOnly: true, description: 'password for basic authentication' }),
    host: s.string({ minLength: 1, description: 'host name or address' }),
    port: s.integer({ minimum: 1, maximum: 65535, description: "port (default: the scheme's, 80 or 443)" }),
    path: s.string({ description: 'path (default /)' }),
    query: s.string({ description: 'query string, without the ?' }),
    fragment: s.string({ description: 'fragment, without the # (never sent to the server)' }),
  },
  { required: ['scheme', 'host'], description: 'the URL in parts' },
);

type EndpointParts = Static<typeof endpointPartsSchema>;

const configSchema = s.object(
  {
    endpoint: s.oneOf([s.string({ minLength: 1, description: 'an http:// or https:// URL' }), endpointPartsSchema], {
      description: 'where requests go: a URL, or its parts',
    }),
    method: s.string({ pattern: '^[A-Za-z]+$', default: 'POST', description: 'HTTP method' }),
    headers: headerMap(s.anyOf([s.string(), s.array(s.string())]), 'request headers: name to a string or a list of strings'),
    secret_headers: secretHeaders(),
    concurrency: s.integer({ minimum: 1, default: 4, description: 'requests in flight at most; more wait, and the breaker is triggered' }),
  },
  { description: 'An HTTP client: sends each event as a request.', required: ['endpoint'] },
);

type RestOfframpConfig = Static<typeof configSchema>;

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
  configSchema,
  create(config, ctx) {
    return new RestSink(config, ctx);
  },
};

/**
 * Connection loss: the breaker is triggered until a probe (a plain TCP dial
 * of the lost peer, with back-off) reaches it again, or a request to it
 * succeeds.
 */
function reconnectWatch(ctx: OfframpContext): PeerWatch<Target> {
  return new PeerWatch<Target>(ctx, {
    backoff: new Backoff(FIRST_RETRY_MS, MAX_RETRY_MS),
    // no answer within the longest back-off counts as none
    probe: (t) => connectProbe(() => connect({ host: t.host, port: t.port }), 'connect', MAX_RETRY_MS),
    paused: (t) => `${t.origin} cannot be reached; paused, retrying`,
    resumed: (t) => `${t.origin} reachable again; resumed`,
  });
}

/** What a request got back: the status and headers (`$response`), and the body when linked (unlinked it is read and dropped). */
interface Answer {
  response: { status: number; headers: HeaderLists };
  body?: Buffer;
}

/**
 * The sink of one rest offramp. Each event's request is planned (`plan`)
 * when the machinery asks for its codec, sent in its turn (`send`,
 * `request`), and its answer acks or fails it; linked, the answer is also
 * emitted (`emitAnswer`).
 */
class RestSink implements Sink {
  /** the config's endpoint, for events without `$endpoint` */
  private readonly configured: Target;
  private readonly baseHeaders: Record<string, string | string[]>;
  private readonly method: string;
  private readonly agent: Agent;
  /** each event's plan, from `codecFor` to `send` */
  private readonly plans = new WeakMap<EddyEvent, Plan>();
  /** at most `concurrency` requests in flight, the rest wait in order */
  private readonly slots: Slots;
  private readonly reconnect: PeerWatch<Target>;

  constructor(
    config: RestOfframpConfig,
    private readonly ctx: OfframpContext,
  ) {
    this.configured = target(config.endpoint, 'endpoint');
    this.baseHeaders = headerValues(config.headers, 'headers');
    for (const name of Object.keys(this.baseHeaders)) {
      const lower = name.toLowerCase();
      if (lower !== 'host' && HOP_BY_HOP.has(lower)) throw new Error(`headers: ${name} is set by the HTTP client, not by config`);
    }
    this.method = config.method.toUpperCase();
    // one pool per origin, never more connections than requests may be in flight
    this.agent = new Agent({ connections: config.concurrency, pipelining: 1 });
    this.slots = new Slots(config.concurrency);
    this.reconnect = reconnectWatch(ctx);
  }

  codecFor(event: EddyEvent): string {
    const p = this.plan(event);
    this.plans.set(event, p);
    return p.codec;
  }

  async send(payloads: Buffer[], event: EddyEvent): Promise<void> {
    const { ctx } = this;
    const p = this.plans.get(event) ?? this.plan(event);
    this.plans.delete(event);
    if (p.error) throw this.failure(event, p.error.message);
    if (ctx.linked && event.isBatch) throw this.failure(event, 'a linked rest offramp cannot send a batch: its response could not be matched to one event');
    const body = p.method === 'GET' || p.method === 'HEAD' ? null : payloads.length === 1 ? payloads[0] : Buffer.concat(payloads);
    if (p.deadline !== undefined && ctx.scheduler.now() >= p.deadline)
      throw this.failure(event, expired(p.deadline, ctx.scheduler.now(), 'reached the offramp'));
    const turn = this.slots.acquire();
    if (turn !== true && !(await turn)) throw new Error('the offramp closed before the request was sent');
    // checked again when the turn comes, right before sending: the wait for a slot may have outlasted it
    if (p.deadline !== undefined && ctx.scheduler.now() >= p.deadline) {
      this.slots.release();
      throw this.failure(event, expired(p.deadline, ctx.scheduler.now(), 'got its turn'));
    }
    const started = performance.now();
    const answer = await this.request(p, body, event);
    // an answer from the lost peer means it is back, before any probe finds out
    if (this.reconnect.down?.origin === p.target.origin) this.reconnect.reached();
    const { response } = answer;
    if (response.status >= 400) throw this.failure(event, `${p.method} ${p.target.origin}${p.target.path} answered ${response.status}`, response);
    if (event.transactional) ctx.insight('ack', event, { time: performance.now() - started });
    // linked: the answer has its body (request reads it then)
    if (answer.body !== undefined) this.emitAnswer(event, answer.response, answer.body);
  }

  async close(): Promise<void> {
    this.reconnect.close();
    this.slots.close();
    await this.agent.destroy();
  }

  /** Sends the request in the slot the caller holds, and frees it; a connection error starts the reconnect probe. */
  private async request(p: Plan, body: Buffer | null, event: EddyEvent): Promise<Answer> {
    try {
      const res = await this.agent.request({ origin: p.target.origin, path: p.target.path, method: p.method as 'POST', headers: p.headers, body });
      const answer: Answer = { response: { status: res.statusCode, headers: responseHeaders(res.headers) } };
      // the connection is free only once the body is read
      if (this.ctx.linked) answer.body = Buffer.from(await res.body.arrayBuffer());
      else await res.body.dump();
      return answer;
    } catch (err) {
      const code = (err as { code?: string }).code;
      if (code !== undefined && CONNECTION_LOST.has(code)) this.reconnect.lost(p.target);
      throw Object.assign(this.failure(event, `${p.method} ${p.target.origin}${p.target.path}: ${(err as Error).message}${code ? ` (${code})` : ''}`), {
        code,
      });
    } finally {
      this.slots.release();
    }
  }

  /** Linked: the answer's body, decoded by its Content-Type, on `out` with `$response`; an unreadable one on `err`. */
  private emitAnswer(event: EddyEvent, response: Answer['response'], body: Buffer): void {
    let values: unknown[];
    try {
      values = body.length === 0 ? [null] : this.ctx.decode(body, this.ctx.codecForMime(response.headers['content-type']?.[0]));
    } catch (err) {
      // delivered (the event is acked), but the answer is unreadable
      this.failure(event, `cannot decode the response: ${(err as Error).message}`, response);
      return;
    }
    for (const value of values) this.ctx.reply('out', event, value, { response });
  }

  /** The event's request: the config's, with `$endpoint`, `$request.method` and `$request.headers` over it; an unusable one is an error the send reports. */
  private plan(event: EddyEvent): Plan {
    const { ctx, method, baseHeaders } = this;
    const request = event.meta.request as { method?: unknown; headers?: unknown } | null | undefined;
    try {
      const t = event.meta.endpoint === undefined ? this.configured : target(event.meta.endpoint, '$endpoint');
      let m = method;
      let headers = baseHeaders;
      if (request !== undefined && request !== null) {
        if (typeof request !== 'object') throw new Error('$request must be a record with method and headers');
        if (request.method !== undefined) {
          if (typeof request.method !== 'string' || !/^[A-Za-z]+$/.test(request.method))
            throw new Error(`$request.method: not a method: ${JSON.stringify(request.method)}`);
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
      return { target: this.configured, method, headers: baseHeaders, codec: ctx.codecForMime(undefined), error: err as Error };
    }
  }

  /**
   * A linked failure on `err` (data `{error, event_id}`, meta `{response?, error}`), then the error that
   * fails the event: with the answer's `status`, and its Retry-After as `retryAfterMs`, for a retry policy.
   */
  private failure(event: EddyEvent, error: string, response?: Meta): Error {
    if (this.ctx.linked) {
      const meta: Meta = response === undefined ? { error } : { response, error };
      this.ctx.reply('err', event, { error, event_id: `${event.id.uid}:${event.id.seq}` }, meta);
    }
    const status = response?.status;
    if (typeof status !== 'number') return new Error(error);
    const retryAfterMs = retryAfter((response?.headers as Record<string, string[]> | undefined)?.['retry-after']?.[0], this.ctx.scheduler.now());
    return Object.assign(new Error(error), { status }, retryAfterMs === undefined ? {} : { retryAfterMs });
  }
}

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
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !HOP_BY_HOP.has(name.toLowerCase())));
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

/** Retry-After (seconds, or an HTTP date) in ms from `now`; undefined when absent or unreadable. */
function retryAfter(value: string | undefined, now: number): number | undefined {
  if (value === undefined) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}
