import { readFileSync } from 'node:fs';
import { connect as netConnect } from 'node:net';
import { connect as tlsConnect, rootCertificates } from 'node:tls';
import { gzipSync } from 'node:zlib';
import { Pool } from 'undici';
import { batchValues, type EddyEvent } from '../../core/event';
import type { OfframpContext, OfframpType, Sink } from '../connector';
import { Backoff } from '../_shared/backoff';
import { PeerWatch, connectProbe } from '../_shared/peer-watch';
import { s } from '../../schema/typed';
import type { Static } from '../../schema/typed';

/** The Log API of each region. */
export const REGION_ENDPOINTS = {
  usa: 'https://log-api.newrelic.com/log/v1',
  europe: 'https://log-api.eu.newrelic.com/log/v1',
} as const;

const configSchema = s.object(
  {
    license_key: s.string({
      minLength: 1,
      writeOnly: true,
      description: "the account's ingest license key (sent as X-License-Key), or an insert-only key, one that starts with NRII- (sent as Api-Key)",
    }),
    compress_logs: s.boolean({ default: false, description: 'gzip the request bodies (Content-Encoding: gzip): more CPU, less egress' }),
    region: s.literals(['usa', 'europe'], {
      default: 'usa',
      description: `the account's region, which picks the endpoint: usa ${REGION_ENDPOINTS.usa}, europe ${REGION_ENDPOINTS.europe}`,
    }),
    endpoint: s.string({
      minLength: 1,
      description: "an http:// or https:// URL to post to instead of the region's endpoint: a forwarding proxy, or a test server; region is then unused",
    }),
    ca_file: s.string({
      path: 'read',
      minLength: 1,
      description: "a PEM file of CA certificates to trust besides the system's (a proxy's or a test server's own CA); TLS is always verified",
    }),
    concurrency: s.integer({ minimum: 1, default: 4, description: 'requests in flight at most; more trigger the circuit breaker' }),
  },
  { description: 'Posts events as log lines to a New Relic style log API over HTTPS.', required: ['license_key'] },
);

export type LogvendorConfig = Static<typeof configSchema>;

/** The Log API takes at most this many bytes in one POST (as sent: compressed when compressed). */
export const MAX_BODY_BYTES = 1_000_000;
/** Connecting; then the answer to one request. */
const CONNECT_TIMEOUT_MS = 10_000;
const REQUEST_TIMEOUT_MS = 30_000;
/** Closing: requests still open after this are cut. */
const CLOSE_TIMEOUT_MS = 2000;
/** A 429's Retry-After (seconds) is honoured up to this; a missing or unreadable one means this default. */
const MAX_RETRY_AFTER_S = 60;
const DEFAULT_RETRY_AFTER_S = 5;
/** Answer bodies are kept this long at most for the error message. */
const ERROR_TEXT_CHARS = 200;

/** Errors (undici's and the socket's) that mean the endpoint cannot be reached rather than that a request was bad. */
const UNREACHABLE = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
]);

/**
 * logvendor: posts events to a log-ingest HTTPS API in the shape of New
 * Relic's Log API. One request per event (a batch: one request with all its
 * members), the body always JSON in the API's detailed format,
 * `[{"logs": [entry, ...]}]`, where an entry is the event's data when it is a
 * record and `{"message": data}` otherwise; the ramp's codec and
 * postprocessors are not used. `compress_logs` gzips the body
 * (Content-Encoding: gzip). The key goes in `X-License-Key`, or in `Api-Key`
 * for an insert-only key (one that starts with `NRII-`).
 *
 * Delivery (the spec's table: acknowledgements never): an event is never
 * acked. A request that is refused (non-2xx) or cannot be made fails the
 * event (counted as an error, logged, and a fail for a transactional one).
 * Connection loss triggers the circuit breaker: sends then fail at once,
 * without a request, until a probe (a TCP or TLS connect, back-off 100 ms
 * doubling to 5 s) reaches the endpoint; a 429 triggers it for the answer's
 * Retry-After (at most a minute).
 */
export const logvendorOfframp: OfframpType<LogvendorConfig> = {
  name: 'logvendor',
  // the wire format is always JSON: `codecFor` asks for json whatever the artefact's codec
  defaultCodec: 'json',
  placement: 'every-worker', // one client connection per worker (docs/workers.md)
  autoAck: false,
  ignoresPostprocessors: true,
  example: { license_key: 'YOUR_LICENSE_KEY', compress_logs: true, region: 'europe' },
  configSchema,
  validate(config) {
    endpointOf(config);
  },
  maxInFlight: (config) => config.concurrency,
  create(config, ctx) {
    const url = endpointOf(config);
    let ca: string[] | undefined;
    if (config.ca_file !== undefined) {
      let pem: string;
      try {
        pem = readFileSync(config.ca_file, 'utf8');
      } catch (err) {
        throw new Error(`ca_file: cannot read ${config.ca_file}: ${(err as Error).message}`);
      }
      if (!pem.includes('-----BEGIN CERTIFICATE-----')) throw new Error(`ca_file: ${config.ca_file} holds no PEM certificate`);
      // besides the system's CAs, not instead of them: a proxy with a public certificate still works
      ca = [...rootCertificates, pem];
    }
    return new LogvendorSink(config, ctx, url, ca);
  },
};

/** The URL requests go to: `endpoint` when set, else the region's. Throws naming the field. */
export function endpointOf(config: Pick<LogvendorConfig, 'endpoint' | 'region'>): URL {
  if (config.endpoint === undefined) return new URL(REGION_ENDPOINTS[config.region]);
  let url: URL;
  try {
    url = new URL(config.endpoint);
  } catch {
    throw new Error(`endpoint: not a URL: ${JSON.stringify(config.endpoint)}`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new Error(`endpoint: the scheme must be https or http, not ${url.protocol.slice(0, -1)}`);
  if (url.username !== '' || url.password !== '') throw new Error('endpoint: credentials in the URL are not sent; the key is license_key');
  return url;
}

/** The header the key goes in: insert-only keys (New Relic's `NRII-` keys) in Api-Key, license keys in X-License-Key. */
export function keyHeader(key: string): 'api-key' | 'x-license-key' {
  return key.startsWith('NRII-') ? 'api-key' : 'x-license-key';
}

/**
 * The breaker of one logvendor offramp: triggered on connection loss until a
 * probe (a TCP or TLS connect, with back-off) reaches the endpoint, or on a
 * 429 until its Retry-After has passed. The watch holds why nothing is sent.
 */
function endpointWatch(ctx: OfframpContext, url: URL, ca: string[] | undefined): PeerWatch<string> {
  const secure = url.protocol === 'https:';
  // an IPv6 literal without its brackets, for the probe's connect
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const port = Number(url.port || (secure ? 443 : 80));
  const open = () => (secure ? tlsConnect({ host, port, servername: serverName(host), ca }) : netConnect({ host, port }));
  return new PeerWatch<string>(ctx, {
    backoff: new Backoff(100, 5000),
    // connected (TLS: the handshake done) means reachable again
    probe: () => connectProbe(open, secure ? 'secureConnect' : 'connect', CONNECT_TIMEOUT_MS),
    paused: (why) => `${why}; paused`,
    resumed: () => `${url.origin} can be sent to again; resumed`,
  });
}

/** The sink of one logvendor offramp: one POST per event, refused at once while the endpoint watch holds the sends back. */
class LogvendorSink implements Sink {
  private readonly pool: Pool;
  private readonly path: string;
  private readonly headers: Record<string, string>;
  /** down: why nothing is sent now */
  private readonly watch: PeerWatch<string>;

  constructor(
    private readonly config: LogvendorConfig,
    ctx: OfframpContext,
    private readonly url: URL,
    ca: string[] | undefined,
  ) {
    this.pool = new Pool(url.origin, {
      connections: config.concurrency,
      connect: { ca, timeout: CONNECT_TIMEOUT_MS },
      headersTimeout: REQUEST_TIMEOUT_MS,
      bodyTimeout: REQUEST_TIMEOUT_MS,
    });
    this.path = `${url.pathname}${url.search}`;
    this.headers = {
      'content-type': 'application/json',
      ...(config.compress_logs ? { 'content-encoding': 'gzip' } : {}),
      [keyHeader(config.license_key)]: config.license_key,
      'user-agent': 'eddy-logvendor',
    };
    this.watch = endpointWatch(ctx, url, ca);
  }

  /** The wire format is always JSON, whatever the artefact's codec. */
  codecFor(): string {
    return 'json';
  }

  async send(payloads: Buffer[], event: EddyEvent): Promise<void> {
    const { down } = this.watch;
    if (down !== undefined) throw new Error(`not sent: ${down}`);
    const { status, answer, retryAfter } = await this.post(this.body(payloads, event));
    if (status === 429) {
      const seconds = retryAfterSeconds(retryAfter);
      this.watch.holdFor(`the Log API answered 429 (too many requests); waiting ${seconds} s as it asked`, seconds * 1000);
    }
    if (status < 200 || status >= 300) {
      const text = answer.length > ERROR_TEXT_CHARS ? `${answer.slice(0, ERROR_TEXT_CHARS)}…` : answer;
      throw new Error(`the Log API answered ${status}${text.trim() === '' ? '' : `: ${text.trim()}`}`);
    }
    // delivered, and never acked: the spec's delivery table says acknowledgements never
  }

  async close(): Promise<void> {
    this.watch.close();
    // requests still open get a little longer (the machinery has drained what it could), then are cut
    let cut: NodeJS.Timeout | undefined;
    await Promise.race([this.pool.close().catch(() => undefined), new Promise((resolve) => (cut = setTimeout(resolve, CLOSE_TIMEOUT_MS)))]);
    clearTimeout(cut);
    await this.pool.destroy().catch(() => undefined);
  }

  /** The request body, gzipped when `compress_logs`; one larger than the API takes is refused before it is sent. */
  private body(payloads: Buffer[], event: EddyEvent): Buffer {
    const compress = this.config.compress_logs;
    const json = requestBody(payloads, event);
    const body = compress ? gzipSync(json) : json;
    if (body.length > MAX_BODY_BYTES) {
      throw new Error(
        `not sent: the body is ${body.length} bytes, the Log API takes at most ${MAX_BODY_BYTES} in one request (send smaller batches${compress ? '' : ', or set compress_logs'})`,
      );
    }
    return body;
  }

  /** One POST and its whole answer; an unreachable endpoint pauses the sends. */
  private async post(body: Buffer): Promise<{ status: number; answer: string; retryAfter: string | string[] | undefined }> {
    try {
      const res = await this.pool.request({ path: this.path, method: 'POST', headers: this.headers, body });
      const retryAfter = res.headers['retry-after'];
      return { status: res.statusCode, retryAfter, answer: await res.body.text() };
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? (err as { cause?: NodeJS.ErrnoException }).cause?.code;
      if (code !== undefined && UNREACHABLE.has(code)) this.watch.lost(`${this.url.origin} cannot be reached (${describe(err)})`);
      throw new Error(`cannot post to ${this.url.origin}: ${describe(err)}`);
    }
  }
}

/** `[{"logs": [...]}]`: each batch member (or the one value) as a log entry, reusing the JSON the machinery encoded. */
function requestBody(payloads: Buffer[], event: EddyEvent): Buffer {
  const values = event.isBatch ? batchValues(event.data) : [event.data];
  const parts: Buffer[] = [Buffer.from('[{"logs":[')];
  payloads.forEach((payload, i) => {
    if (i > 0) parts.push(Buffer.from(','));
    const value = values[i];
    const record = value !== null && typeof value === 'object' && !Array.isArray(value) && !ArrayBuffer.isView(value);
    // a log entry is a record of attributes; any other value becomes its message
    parts.push(record ? payload : Buffer.concat([Buffer.from('{"message":'), payload, Buffer.from('}')]));
  });
  parts.push(Buffer.from(']}]'));
  return Buffer.concat(parts);
}

/** Retry-After in seconds (a number of seconds, or an HTTP date), bounded. */
function retryAfterSeconds(value: string | string[] | undefined): number {
  const text = Array.isArray(value) ? value[0] : value;
  if (text === undefined || text.trim() === '') return DEFAULT_RETRY_AFTER_S;
  const seconds = /^\d+$/.test(text.trim()) ? Number(text.trim()) : (Date.parse(text) - Date.now()) / 1000;
  if (!Number.isFinite(seconds)) return DEFAULT_RETRY_AFTER_S;
  return Math.min(Math.max(Math.ceil(seconds), 1), MAX_RETRY_AFTER_S);
}

/** TLS SNI takes host names only, not IP addresses. */
function serverName(host: string): string | undefined {
  return /^[\d.]+$/.test(host) || host.includes(':') ? undefined : host;
}

function describe(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const code = (err as NodeJS.ErrnoException).code;
  const cause = (err as { cause?: Error }).cause;
  const message = cause?.message && !err.message.includes(cause.message) ? `${err.message}: ${cause.message}` : err.message;
  return code !== undefined && !message.includes(code) ? `${message} (${code})` : message;
}
