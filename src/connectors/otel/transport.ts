import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { checkServerIdentity } from 'node:tls';
import { gzipSync } from 'node:zlib';
import type { ChannelCredentials, Client, Metadata, ServiceError } from '@grpc/grpc-js';
import { Agent, request } from 'undici';
import { requirePackage } from '../../core/packages';
import { partialSuccessOf, retryDelayOf, SIGNAL_SPECS, statusMessageOf, type PartialSuccess, type Signal } from './otlp';

const grpc = requirePackage<typeof import('@grpc/grpc-js')>('@grpc/grpc-js', 'the otel connector');

/** The OTLP transports of the otel offramp (the protocol names of the OpenTelemetry exporters' OTEL_EXPORTER_OTLP_PROTOCOL). */
export type Protocol = 'grpc' | 'http/protobuf' | 'http/json';

/** TLS files for the client: a CA to trust instead of the system's, and a client certificate and key for mutual TLS. */
export interface TlsFiles {
  ca?: string;
  cert?: string;
  key?: string;
}

export interface TransportOptions {
  endpoint: URL;
  protocol: Protocol;
  headers: Record<string, string>;
  tls?: TlsFiles;
  compression: 'gzip' | 'none';
  timeoutMs: number;
  /** the longest wait between reconnects of the gRPC channel (the retry back-off's max): a receiver back after a long outage is found soon */
  reconnectMaxMs: number;
}

/** What became of one Export request. */
export type ExportOutcome =
  | { ok: true; partial?: PartialSuccess }
  | {
      ok: false;
      /** the OTLP spec says the client may send the same request again */
      retryable: boolean;
      /** the delay the receiver asked for (Retry-After, RetryInfo), ms */
      retryAfterMs?: number;
      error: string;
    };

/** Sends Export requests of any signal to one receiver. */
export interface Transport {
  /** the body is the encoded request: protobuf, or OTLP/JSON for http/json */
  export(signal: Signal, body: Buffer): Promise<ExportOutcome>;
  close(): Promise<void> | void;
}

/**
 * gRPC codes the OTLP spec lists as retryable ("Failures" in the OTLP/gRPC
 * section): the request may be sent again. Every other code fails the batch.
 */
const RETRYABLE_GRPC = new Set([
  grpc.status.CANCELLED,
  grpc.status.DEADLINE_EXCEEDED,
  grpc.status.RESOURCE_EXHAUSTED,
  grpc.status.ABORTED,
  grpc.status.OUT_OF_RANGE,
  grpc.status.UNAVAILABLE,
  grpc.status.DATA_LOSS,
]);
/** Client-side TLS failures (Node's error codes): the receiver's certificate is not trusted, which no retry changes. */
const TLS_REFUSALS = /^(ERR_TLS_|CERT_|DEPTH_ZERO_SELF_SIGNED_CERT$|SELF_SIGNED_CERT_IN_CHAIN$|UNABLE_TO_(GET|VERIFY)_)/;
/** HTTP answers the OTLP/HTTP spec lists as retryable. */
const RETRYABLE_HTTP = new Set([429, 502, 503, 504]);

/** Reads the TLS files, naming the one that cannot be read (checked at publish and again at activation). */
export function readTlsFiles(tls: TlsFiles | undefined): { ca?: Buffer; cert?: Buffer; key?: Buffer } {
  const out: { ca?: Buffer; cert?: Buffer; key?: Buffer } = {};
  for (const name of ['ca', 'cert', 'key'] as const) {
    const path = tls?.[name];
    if (path === undefined) continue;
    try {
      out[name] = readFileSync(path);
    } catch (err) {
      throw new Error(`tls.${name}: cannot read ${path}: ${(err as Error).message}`);
    }
  }
  if ((out.cert === undefined) !== (out.key === undefined)) throw new Error('tls.cert and tls.key go together (a client certificate needs its key)');
  return out;
}

export function createTransport(options: TransportOptions): Transport {
  return options.protocol === 'grpc' ? new GrpcTransport(options) : new HttpTransport(options);
}

const raw = (bytes: Buffer) => bytes;

/** OTLP/gRPC: one unary Export call per request on a long-lived HTTP/2 channel, through grpc-js. */
class GrpcTransport implements Transport {
  private readonly client: Client;
  private readonly metadata = new grpc.Metadata();

  constructor(private readonly options: TransportOptions) {
    const { endpoint } = options;
    let creds: ChannelCredentials;
    // grpc-js compresses each message with gzip when asked (algorithm 2), as the Collector's exporter does by default
    const channelOptions: Record<string, number | string> = {
      'grpc.max_reconnect_backoff_ms': options.reconnectMaxMs,
      'grpc.initial_reconnect_backoff_ms': Math.min(1000, options.reconnectMaxMs),
    };
    if (options.compression === 'gzip') channelOptions['grpc.default_compression_algorithm'] = 2;
    if (endpoint.protocol === 'https:') {
      const tls = readTlsFiles(options.tls);
      const host = endpoint.hostname.replace(/^\[(.*)\]$/, '$1');
      if (isIP(host) === 0) {
        creds = grpc.credentials.createSsl(tls.ca ?? null, tls.key ?? null, tls.cert ?? null);
      } else {
        // grpc-js (1.14) sends the target's host as the TLS server name, which Node 26 refuses for an IP
        // address (RFC 6066; DEP0123 is now an error). The name sent instead is the address's own reverse
        // DNS name; the certificate is still checked against the address itself.
        channelOptions['grpc.ssl_target_name_override'] = reverseDnsName(host);
        creds = grpc.credentials.createSsl(tls.ca ?? null, tls.key ?? null, tls.cert ?? null, {
          checkServerIdentity: (_name, cert) => checkServerIdentity(host, cert),
        });
      }
    } else {
      creds = grpc.credentials.createInsecure();
    }
    // a URL without a port means its scheme's (80, 443), as for OTLP/HTTP: grpc-js alone would take 443 for both
    const port = endpoint.port || (endpoint.protocol === 'https:' ? '443' : '80');
    this.client = new grpc.Client(`${endpoint.hostname}:${port}`, creds, channelOptions);
    for (const [key, value] of Object.entries(options.headers)) this.metadata.set(key.toLowerCase(), value);
  }

  export(signal: Signal, body: Buffer): Promise<ExportOutcome> {
    return new Promise((resolve) => {
      this.client.makeUnaryRequest(
        SIGNAL_SPECS[signal].path,
        raw,
        raw,
        body,
        this.metadata,
        { deadline: Date.now() + this.options.timeoutMs },
        (err: ServiceError | null, response?: Buffer) => {
          if (err === null) return resolve({ ok: true, partial: partialSuccessOf(signal, response ?? Buffer.alloc(0), false) });
          // an error grpc-js did not make (a failed call's own) may have no metadata
          const details = (err.metadata as Metadata | undefined)?.get('grpc-status-details-bin')[0];
          const retryAfterMs = details instanceof Buffer ? retryDelayOf(details) : undefined;
          resolve({
            ok: false,
            retryable: RETRYABLE_GRPC.has(err.code),
            retryAfterMs,
            error: `gRPC ${(grpc.status[err.code] as string | undefined) ?? err.code}: ${err.details || err.message}`,
          });
        },
      );
    });
  }

  close(): void {
    this.client.close();
  }
}

/** OTLP/HTTP: a POST of the request to the endpoint's path plus `/v1/traces`, `/v1/logs` or `/v1/metrics`, through undici. */
class HttpTransport implements Transport {
  private readonly agent: Agent;
  private readonly json: boolean;
  private readonly headers: Record<string, string>;

  constructor(private readonly options: TransportOptions) {
    this.json = options.protocol === 'http/json';
    const tls = options.endpoint.protocol === 'https:' ? readTlsFiles(options.tls) : {};
    this.agent = new Agent({ connect: { ca: tls.ca, cert: tls.cert, key: tls.key }, headersTimeout: options.timeoutMs, bodyTimeout: options.timeoutMs });
    this.headers = { ...options.headers, 'content-type': this.json ? 'application/json' : 'application/x-protobuf' };
    if (options.compression === 'gzip') this.headers['content-encoding'] = 'gzip';
  }

  /** The signal's URL: its path below the endpoint's own (a collector behind a proxy path keeps it). */
  private url(signal: Signal): string {
    const url = new URL(this.options.endpoint);
    url.pathname = url.pathname.replace(/\/$/, '') + SIGNAL_SPECS[signal].httpPath;
    return url.toString();
  }

  async export(signal: Signal, body: Buffer): Promise<ExportOutcome> {
    const payload = this.options.compression === 'gzip' ? gzipSync(body) : body;
    let answer: Awaited<ReturnType<typeof request>>;
    try {
      answer = await request(this.url(signal), { method: 'POST', body: payload, headers: this.headers, dispatcher: this.agent });
    } catch (err) {
      // no answer at all (refused, reset, timed out): the request may be sent again; but a
      // certificate the client does not trust stays untrusted, so that is a refusal
      const cause = ((err as { cause?: unknown }).cause ?? err) as { code?: string; message?: string };
      const code = (err as { code?: string }).code ?? cause.code;
      const message = `${code ? `${code}: ` : ''}${cause.message ?? (err as Error).message}`;
      if (code !== undefined && TLS_REFUSALS.test(code)) return { ok: false, retryable: false, error: `TLS: ${message}` };
      return { ok: false, retryable: true, error: message };
    }
    const bytes = Buffer.from(await answer.body.arrayBuffer());
    const { statusCode } = answer;
    const contentType = String(answer.headers['content-type'] ?? '');
    // a success is read in the format the receiver says it wrote, else in the one we sent
    const json = contentType === '' ? this.json : /json/i.test(contentType);
    if (statusCode >= 200 && statusCode < 300) return { ok: true, partial: partialSuccessOf(signal, bytes, json) };
    const message = statusMessageOf(bytes, contentType);
    const retryable = RETRYABLE_HTTP.has(statusCode);
    return {
      ok: false,
      retryable,
      retryAfterMs: retryable ? retryAfterMs(answer.headers['retry-after']) : undefined,
      error: `HTTP ${statusCode}${message === '' ? '' : `: ${message}`}`,
    };
  }

  async close(): Promise<void> {
    await this.agent.close();
  }
}

/** A Retry-After header in ms: seconds, or an HTTP date; undefined when absent or unreadable. */
export function retryAfterMs(header: string | string[] | undefined, now = Date.now()): number | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined || value.trim() === '') return undefined;
  if (/^\s*\d+\s*$/.test(value)) return Number(value) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** The reverse DNS name of an IP address: 127.0.0.1 is 1.0.0.127.in-addr.arpa, an IPv6 address its nibbles under ip6.arpa. */
export function reverseDnsName(ip: string): string {
  if (isIP(ip) === 4) return `${ip.split('.').reverse().join('.')}.in-addr.arpa`;
  // an IPv4 address written in the last 32 bits (::ffff:10.0.0.1) becomes its two groups
  const v4 = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(ip);
  if (v4 !== null) ip = ip.slice(0, v4.index) + [+v4[1] * 256 + +v4[2], +v4[3] * 256 + +v4[4]].map((n) => n.toString(16)).join(':');
  const [head, tail = ''] = ip.split('::');
  const groups = (part: string) => (part === '' ? [] : part.split(':'));
  const full = [...groups(head), ...Array<string>(8 - groups(head).length - groups(tail).length).fill('0'), ...groups(tail)];
  const nibbles = full.map((g) => g.padStart(4, '0')).join('');
  // hex digits: one character each
  return `${nibbles.split('').reverse().join('.')}.ip6.arpa`;
}
