import type { Subscription } from '../../core/rx';
import { NO_JITTER, fullJitter, type Random } from '../../core/jitter';
import { batchValues, type EddyEvent, type Meta } from '../../core/event';
import { durationMs, duration } from '../../schema/duration';
import { headerMap, secretHeaders } from '../../schema/fields';
import { s } from '../../schema/typed';
import type { Static } from '../../schema/typed';
import type { OfframpContext, OfframpType, Sink } from '../connector';
import { Slots } from '../_shared/slots';
import { encodeRequest, resourceMessages, signalOf, SIGNAL_SPECS, type Signal } from './otlp';
import { createTransport, readTlsFiles, type ExportOutcome, type Transport } from './transport';

const configSchema = s.object(
  {
    endpoint: s.string({
      minLength: 1,
      description: 'the receiver: http://HOST:PORT (https:// for TLS); for OTLP/HTTP a base URL, to which /v1/traces, /v1/logs or /v1/metrics is appended',
    }),
    protocol: s.literals(['grpc', 'http/protobuf', 'http/json'], {
      default: 'grpc',
      description: 'OTLP/gRPC, or OTLP/HTTP with protobuf or JSON bodies (the values of OTEL_EXPORTER_OTLP_PROTOCOL)',
    }),
    headers: headerMap(s.string(), 'sent with every request: HTTP headers, or gRPC metadata (an API key, a tenant)'),
    secret_headers: secretHeaders(),
    tls: s.object(
      {
        ca: s.string({ path: 'read', minLength: 1, description: 'path of a PEM CA certificate to verify the receiver with, instead of the system CAs' }),
        cert: s.string({ path: 'read', minLength: 1, description: 'path of a PEM client certificate (mutual TLS); needs key' }),
        key: s.string({ path: 'read', minLength: 1, description: 'path of the PEM private key of cert' }),
      },
      { description: 'TLS files for an https:// endpoint (without them the system CAs verify the receiver)' },
    ),
    compression: s.literals(['gzip', 'none'], {
      default: 'gzip',
      description: 'compression of request bodies (gzip, as the OpenTelemetry exporters and the Collector do by default)',
    }),
    timeout: duration('how long one attempt of a request may take before it counts as failed (and is retried)', { default: '10s' }),
    concurrency: s.integer({ minimum: 1, default: 4, description: 'Export requests in flight at most; full batches beyond that wait their turn' }),
    batch: s.object(
      {
        size: s.integer({ minimum: 1, default: 100, description: 'resources (events) in one request at most: a full batch is sent at once' }),
        timeout: duration('how long a batch waits for more events after its first', { default: '200ms' }),
      },
      { default: {}, description: 'how events are gathered into Export requests, per signal' },
    ),
    retry: s.object(
      {
        attempts: s.integer({ minimum: 1, default: 10, description: 'tries of one request in all (1: no retry); then its events are failed' }),
        backoff: s.object(
          {
            initial: duration('the wait before the first retry', { default: '100ms' }),
            max: duration('the longest wait', { default: '10s' }),
            factor: s.number({ minimum: 1, default: 2, description: 'each wait is the one before times this' }),
            jitter: s.boolean({
              default: true,
              description: 'wait a random time up to each wait (full jitter), so senders that failed together do not retry together',
            }),
          },
          { default: {}, description: 'the wait before each retry, when the receiver did not ask for one' },
        ),
      },
      { default: {}, description: 'what happens to a request that failed in a way the OTLP spec calls retryable' },
    ),
  },
  { description: 'Exports OpenTelemetry logs, metrics and traces over OTLP/gRPC or OTLP/HTTP.', required: ['endpoint'] },
);

type OtelOfframpConfig = Static<typeof configSchema>;

/** The longest wait a receiver's Retry-After or RetryInfo is honoured for: a longer one is cut to this. */
export const MAX_SERVER_DELAY_MS = 60_000;

/** The settings with the durations in ms, worked out once. */
interface Settings {
  endpoint: URL;
  batchSize: number;
  batchTimeoutMs: number;
  timeoutMs: number;
  attempts: number;
  initialMs: number;
  maxMs: number;
  factor: number;
  /** jitter's source: Math.random, or none */
  random: Random;
}

function settings(config: OtelOfframpConfig): Settings {
  let endpoint: URL;
  try {
    endpoint = new URL(config.endpoint);
  } catch {
    throw new Error(`endpoint: not a URL: ${JSON.stringify(config.endpoint)} (e.g. http://127.0.0.1:4317)`);
  }
  if (endpoint.protocol !== 'http:' && endpoint.protocol !== 'https:') {
    throw new Error(`endpoint: the scheme must be http or https (https for TLS), not ${endpoint.protocol.slice(0, -1)}`);
  }
  if (config.protocol === 'grpc' && endpoint.pathname !== '/' && endpoint.pathname !== '') {
    throw new Error(`endpoint: a gRPC endpoint is a host and port, without a path (${endpoint.pathname})`);
  }
  if (config.tls !== undefined && endpoint.protocol !== 'https:') throw new Error('tls: given for an http:// endpoint; use https:// for TLS');
  const { initial, max, factor, jitter } = config.retry.backoff;
  const s: Settings = {
    endpoint,
    batchSize: config.batch.size,
    batchTimeoutMs: durationMs(config.batch.timeout, 'batch.timeout'),
    timeoutMs: durationMs(config.timeout, 'timeout'),
    attempts: config.retry.attempts,
    initialMs: durationMs(initial, 'retry.backoff.initial'),
    maxMs: durationMs(max, 'retry.backoff.max'),
    factor,
    random: !jitter ? NO_JITTER : Math.random,
  };
  if (s.maxMs < s.initialMs) throw new Error(`retry.backoff.max (${s.maxMs} ms) is below retry.backoff.initial (${s.initialMs} ms)`);
  return s;
}

/**
 * otel: sends OpenTelemetry logs, metrics and traces to an OTLP receiver (a
 * Collector, a vendor's endpoint) over OTLP/gRPC or OTLP/HTTP (protobuf or
 * JSON bodies). It takes exactly the events the otel onramp makes: one
 * resource (ResourceSpans, ResourceLogs or ResourceMetrics) in the OTLP/JSON
 * mapping, its signal read from the data (or meta `otel.signal`); a whole
 * Export request is taken too.
 *
 * Events are batched per signal: one Export request holds up to
 * `batch.size` resources, sent when full or `batch.timeout` after its
 * first. Each event is acked when the request holding it succeeded (a
 * partial success included: the receiver took the request, and the spec
 * says not to send it again), and failed when the receiver refused it or
 * every attempt failed. Retryable failures (gRPC UNAVAILABLE,
 * RESOURCE_EXHAUSTED and the others the OTLP spec lists; HTTP 429, 502,
 * 503, 504; no answer at all) are retried up to `retry.attempts` times with
 * an exponential back-off on the runtime's scheduler, waiting what the
 * receiver asked (Retry-After, RetryInfo) instead; while a request waits to
 * be retried the circuit breaker is triggered, so sources pause instead of
 * piling up events.
 */
export const otelOfframp: OfframpType<OtelOfframpConfig> = {
  name: 'otel',
  // the type encodes the OTLP requests itself: the machinery's per-event encoding is skipped (`codecFor`)
  defaultCodec: 'json',
  placement: 'every-worker', // each worker sends its own requests (docs/workers.md)
  autoAck: true,
  ignoresPostprocessors: true,
  example: { endpoint: 'http://127.0.0.1:4317', protocol: 'grpc' },
  configSchema,
  validate(config) {
    settings(config);
    readTlsFiles(config.tls);
  },
  // every event waits for its batch: a full batch per request slot, and one filling, before the sources pause
  maxInFlight: (config) => config.batch.size * (config.concurrency + 1),
  create(config, ctx) {
    const s = settings(config);
    const transport = createTransport({
      endpoint: s.endpoint,
      protocol: config.protocol,
      headers: config.headers,
      tls: config.tls,
      compression: config.compression,
      timeoutMs: s.timeoutMs,
      reconnectMaxMs: s.maxMs,
    });
    return new OtelSink(config, s, ctx, transport);
  },
};

/** The resources of one signal waiting to be sent, and the events they came from. */
class Batch {
  readonly resources: object[] = [];
  readonly waiters: { resolve: () => void; reject: (err: unknown) => void }[] = [];
  timer?: Subscription;
  constructor(readonly signal: Signal) {}
}

/** A wait between attempts, which `close` cuts short. */
interface Sleeper {
  readonly timer: Subscription;
  readonly wake: (closed: boolean) => void;
}

class OtelSink implements Sink {
  private readonly open = new Map<Signal, Batch>();
  private readonly slots: Slots;
  private readonly sleepers = new Set<Sleeper>();
  /** requests waiting to be retried: the breaker is triggered while there is one */
  private retrying = 0;
  private closed = false;
  private readonly json: boolean;

  constructor(
    config: OtelOfframpConfig,
    private readonly s: Settings,
    private readonly ctx: OfframpContext,
    private readonly transport: Transport,
  ) {
    this.slots = new Slots(config.concurrency);
    this.json = config.protocol === 'http/json';
  }

  /** the machinery's encoding is not used (the requests are encoded here): the null codec makes no bytes */
  codecFor(): string {
    return 'null';
  }

  send(_payloads: Buffer[], event: EddyEvent): Promise<void> {
    // a malformed event throws here, before anything of it joins a batch: it fails alone
    const parts = eventParts(event);
    if (this.closed) return Promise.reject(new Error('not sent: the offramp closed'));
    return Promise.all(parts.map(([signal, resources]) => this.add(signal, resources))).then(() => undefined);
  }

  private add(signal: Signal, resources: object[]): Promise<void> {
    let batch = this.open.get(signal);
    if (batch === undefined) {
      batch = new Batch(signal);
      this.open.set(signal, batch);
      const full = batch;
      batch.timer = this.ctx.scheduler.schedule(() => void this.flush(full), this.s.batchTimeoutMs);
    }
    const promise = new Promise<void>((resolve, reject) => batch.waiters.push({ resolve, reject }));
    for (const resource of resources) batch.resources.push(resource);
    if (batch.resources.length >= this.s.batchSize) void this.flush(batch);
    return promise;
  }

  /** Sends the batch (once); resolves when its events were told the outcome. */
  private flush(batch: Batch): Promise<void> {
    if (this.open.get(batch.signal) !== batch) return Promise.resolve();
    this.open.delete(batch.signal);
    batch.timer?.unsubscribe();
    return this.deliver(batch).then(
      () => batch.waiters.forEach((w) => w.resolve()),
      (err: unknown) => batch.waiters.forEach((w) => w.reject(err)),
    );
  }

  /** Sends one batch as one Export request, retrying what may be retried; resolves once the receiver took it. */
  private async deliver(batch: Batch): Promise<void> {
    const what = `${batch.resources.length} ${batch.signal} resource${batch.resources.length === 1 ? '' : 's'}`;
    const body = encodeRequest(batch.signal, batch.resources, this.json);
    const turn = this.slots.acquire();
    if (turn !== true && !(await turn)) throw new Error('not sent: the offramp closed');
    let waiting = false;
    try {
      let delay = this.s.initialMs;
      for (let attempt = 1; ; attempt++) {
        const outcome: ExportOutcome = await this.transport.export(batch.signal, body);
        if (outcome.ok) {
          if (outcome.partial !== undefined) {
            const kind = SIGNAL_SPECS[batch.signal].rejected
              .replace(/^rejected/, '')
              .replace(/([A-Z])/g, ' $1')
              .trim()
              .toLowerCase();
            this.ctx.logger.warn(
              `Offramp ${this.ctx.url}: the receiver took ${what} but rejected ${outcome.partial.rejected} ${kind}: ${outcome.partial.message || '(no message)'}`,
            );
          }
          if (attempt > 1) this.ctx.logger.info(`Offramp ${this.ctx.url}: ${what} delivered on attempt ${attempt}`);
          return;
        }
        if (!outcome.retryable) throw new Error(`the receiver refused ${what}: ${outcome.error}`);
        if (attempt >= this.s.attempts) throw new Error(`${what} not delivered after ${attempt} attempt${attempt === 1 ? '' : 's'}: ${outcome.error}`);
        const wait = outcome.retryAfterMs !== undefined ? Math.min(outcome.retryAfterMs, MAX_SERVER_DELAY_MS) : fullJitter(delay, this.s.random);
        delay = Math.min(delay * this.s.factor, this.s.maxMs);
        if (!waiting) {
          waiting = true;
          if (this.retrying++ === 0) this.ctx.trigger();
        }
        this.ctx.logger.warn(
          `Offramp ${this.ctx.url}: attempt ${attempt} of ${this.s.attempts} to send ${what} failed (${outcome.error}); retrying in ${wait} ms`,
        );
        if (!(await this.sleep(wait))) throw new Error(`${what} not delivered: the offramp closed while waiting to retry (${outcome.error})`);
      }
    } finally {
      this.slots.release();
      if (waiting && --this.retrying === 0) this.ctx.restore();
    }
  }

  /** Resolves true after `ms` on the runtime's scheduler, or false at once when the offramp closes. */
  private sleep(ms: number): Promise<boolean> {
    if (this.closed) return Promise.resolve(false);
    return new Promise((resolve) => {
      const sleeper: Sleeper = {
        timer: this.ctx.scheduler.schedule(() => sleeper.wake(false), ms),
        wake: (closed) => {
          this.sleepers.delete(sleeper);
          sleeper.timer.unsubscribe();
          resolve(!closed);
        },
      };
      this.sleepers.add(sleeper);
    });
  }

  /**
   * The machinery has waited for the sends in flight (their batches are sent
   * after `batch.timeout`): what is still gathered gets one attempt, and
   * requests waiting to be retried fail now, so closing never waits for a
   * back-off.
   */
  async close(): Promise<void> {
    this.closed = true;
    for (const sleeper of [...this.sleepers]) sleeper.wake(true);
    await Promise.all([...this.open.values()].map((batch) => this.flush(batch)));
    this.slots.close();
    await this.transport.close();
  }
}

/** An event's resources by signal, as protobuf messages; a batch event's members each. Throws saying what is wrong (and which member). */
function eventParts(event: EddyEvent): [Signal, object[]][] {
  if (!event.isBatch) return [valueParts(event.data, event.meta, '')];
  const bySignal = new Map<Signal, object[]>();
  const values = batchValues(event.data);
  const members = Array.isArray(event.data) ? event.data : [];
  values.forEach((value, i) => {
    const meta = (members[i] as { data?: { meta?: Meta } } | undefined)?.data?.meta ?? {};
    const [signal, resources] = valueParts(value, meta, `batch member ${i}: `);
    const list = bySignal.get(signal) ?? [];
    bySignal.set(signal, list.concat(resources));
  });
  return [...bySignal];
}

function valueParts(value: unknown, meta: Meta, where: string): [Signal, object[]] {
  try {
    const signal = signalOf(value, (meta.otel as { signal?: unknown } | undefined)?.signal);
    return [signal, resourceMessages(signal, value as Record<string, unknown>)];
  } catch (err) {
    throw new Error(`${where}not an OTLP resource: ${(err as Error).message}`);
  }
}
