import type { sendUnaryData, Server, ServerCredentials, ServerUnaryCall, ServiceDefinition } from '@grpc/grpc-js';
import { Observable, type Subscriber } from '../../core/rx';
import { nowNs } from '../../core/clock';
import type { Frame, OnrampContext, OnrampSource, OnrampType } from '../connector';
import { uriHost } from '../_shared/net';
import { countItems, decodeResources, encodeResponse, SIGNALS, SIGNAL_SPECS, statusWithRetryInfo, type Signal } from './otlp';
import { OtlpHttpReceiver, type Intake } from './http-receiver';
import { s } from '../../schema/typed';
import type { Static } from '../../schema/typed';
import { listenHost, listenPort, serverTls } from '../../schema/fields';
import { CertificateWatch, readServerTls, serverOptions, type TlsIdentity } from '../../net/tls';
import { GrpcIdentity, grpcServerCredentials } from './grpc-tls';
import { requirePackage } from '../../core/packages';

const grpc = requirePackage<typeof import('@grpc/grpc-js')>('@grpc/grpc-js', 'the otel connector');

const configSchema = s.object(
  {
    host: listenHost('address to listen on; the default takes exporters on this machine only (0.0.0.0 or :: for every interface)'),
    port: listenPort({ default: 4317, description: "port to listen on (OTLP/gRPC's standard port by default); 0 picks a free one" }),
    http_port: listenPort({
      description:
        'port to serve OTLP/HTTP on as well (/v1/traces, /v1/logs, /v1/metrics; 4318 is its standard port); absent: OTLP/HTTP is not served; 0 picks a free one',
    }),
    logs: s.boolean({ default: true, description: 'accept logs (LogsService); when false, log exports are answered with success and dropped' }),
    metrics: s.boolean({ default: true, description: 'accept metrics (MetricsService); when false, metric exports are answered with success and dropped' }),
    trace: s.boolean({ default: true, description: 'accept traces (TraceService); when false, span exports are answered with success and dropped' }),
    tls: serverTls('serve OTLP/gRPC and OTLP/HTTP over TLS with this certificate (the files are reloaded when they change, on both ports); absent: plaintext'),
  },
  { description: 'Receives OpenTelemetry logs, metrics and traces over OTLP/gRPC and OTLP/HTTP.' },
);

type OtelOnrampConfig = Static<typeof configSchema>;

/** What a refused exporter is asked to wait before it retries (RetryInfo), while the circuit breaker is triggered. */
export const RETRY_DELAY_MS = 1000;
/** How long `close` lets calls in progress finish before it drops the connections. */
const SHUTDOWN_GRACE_MS = 1000;
/** An Export*ServiceResponse without partial_success: encoded, it is no bytes at all. */
const FULL_SUCCESS = Buffer.alloc(0);
/** The onramp's own protobuf decoding, for counting what a disabled signal's request held (undefined when it is not OTLP). */
const tryDecode = (signal: Signal, bytes: Buffer) => {
  try {
    return decodeResources(signal, bytes);
  } catch {
    return undefined;
  }
};

const raw = (bytes: Buffer) => bytes;

/** One OTLP service (its single unary `Export` method), with the bytes passed through undecoded: the handler decodes. */
function serviceFor(signal: Signal): ServiceDefinition {
  return {
    Export: {
      path: SIGNAL_SPECS[signal].path,
      requestStream: false,
      responseStream: false,
      requestSerialize: raw,
      requestDeserialize: raw,
      responseSerialize: raw,
      responseDeserialize: raw,
    },
  };
}

/** Binds the server; a port in use or an address that cannot be bound rejects naming both. */
function bind(server: Server, host: string, port: number, credentials: ServerCredentials): Promise<number> {
  return new Promise((resolve, reject) =>
    server.bindAsync(`${uriHost(host)}:${port}`, credentials, (err, bound) =>
      err ? reject(new Error(`cannot listen on ${host}:${port}: ${err.message}`)) : resolve(bound),
    ),
  );
}

/** The client's `ip:port` from grpc-js's peer string (`ipv4:…`/`ipv6:[…]:…` forms included). */
function peerAddress(call: ServerUnaryCall<Buffer, Buffer>): string {
  return call.getPeer().replace(/^ipv[46]:/, '');
}

/**
 * otel: an OpenTelemetry OTLP/gRPC receiver serving the logs, metrics and
 * trace Export services on one port, as a Collector's otlp receiver does;
 * with `http_port`, OTLP/HTTP as well (http-receiver.ts), answered alike.
 * Every resource of an export request (a ResourceSpans, ResourceLogs or
 * ResourceMetrics) becomes one event, its value in the OTLP/JSON mapping,
 * with meta `otel.signal`. The type decodes the protobuf itself, so the
 * ramp's codec and preprocessors are not used.
 *
 * - A disabled signal's requests are answered with a partial success
 *   (every item rejected) and dropped; each one is counted as an error of
 *   the ramp and reported on `err`.
 * - A request that is not valid OTLP is answered INVALID_ARGUMENT (not to
 *   be retried) and goes to `err` with its bytes.
 * - While the circuit breaker is triggered (and before a pipeline reads the
 *   onramp) requests are answered UNAVAILABLE with a google.rpc.RetryInfo,
 *   so exporters keep the data and retry: what was answered OK has been
 *   handed to the machinery, which holds it while paused; nothing is lost.
 *
 * With `tls` both ports speak TLS with the same certificate, reloaded on
 * both when its files change (the gRPC port through grpc-js's certificate
 * provider, grpc-tls.ts).
 *
 * The port is bound in `create`, so a port in use fails the activation.
 */
export const otelOnramp: OnrampType<Static<typeof configSchema>> = {
  name: 'otel',
  defaultCodec: 'json',
  example: { host: '127.0.0.1', port: 4317 },
  configSchema,
  validate(config) {
    if (config.tls !== undefined) readServerTls(config.tls);
  },
  async create(config, ctx) {
    const source = new OtelSource(config, ctx);
    await source.listen();
    return source;
  },
};

/**
 * The source of one otel onramp, and the intake both transports hand their
 * export requests to: the gRPC server's Export handlers (`export`), the
 * OTLP/HTTP receiver when `http_port` is set, refusing while not reading.
 */
class OtelSource implements OnrampSource, Intake {
  readonly frames: Observable<Frame>;
  readonly retryDelayMs = RETRY_DELAY_MS;
  private readonly identity: TlsIdentity | undefined;
  /** TLS: the gRPC port's certificate provider, updated by the watch */
  private readonly grpcIdentity: GrpcIdentity | undefined;
  private readonly credentials: ServerCredentials;
  private readonly server: Server;
  private readonly unavailable: string;
  /** the google.rpc.Status with RetryInfo sent with every UNAVAILABLE, built once */
  private readonly retryDetails: Buffer;
  private subscriber: Subscriber<Frame> | undefined;
  private paused = false;
  /** requests answered UNAVAILABLE since the last report */
  private refusedCount = 0;
  /** the gRPC port: the configured one until `listen` learns the bound one */
  private serverPort: number;
  private http: OtlpHttpReceiver | undefined;
  /** TLS: one watch of the files, for both ports */
  private watch: CertificateWatch | undefined;

  constructor(
    private readonly config: OtelOnrampConfig,
    private readonly ctx: OnrampContext,
  ) {
    const tls = config.tls;
    this.identity = tls === undefined ? undefined : readServerTls(tls);
    this.grpcIdentity = this.identity === undefined ? undefined : new GrpcIdentity(this.identity);
    this.credentials =
      this.grpcIdentity === undefined || tls === undefined
        ? grpc.ServerCredentials.createInsecure()
        : grpcServerCredentials(this.grpcIdentity, tls.ca !== undefined, tls.require_client_cert);
    this.server = new grpc.Server();
    this.serverPort = config.port;
    this.unavailable = `eddy onramp ${ctx.url} is not reading (its circuit breaker is triggered, or no pipeline reads it yet); retry in ${RETRY_DELAY_MS} ms`;
    this.retryDetails = statusWithRetryInfo(grpc.status.UNAVAILABLE, this.unavailable, RETRY_DELAY_MS);
    for (const signal of SIGNALS) {
      this.server.addService(serviceFor(signal), {
        Export: (call: ServerUnaryCall<Buffer, Buffer>, callback: sendUnaryData<Buffer>) => this.export(signal, call, callback),
      });
    }
    this.frames = new Observable<Frame>((sub) => {
      this.subscriber = sub;
      return () => {
        if (this.subscriber === sub) this.subscriber = undefined;
      };
    });
  }

  /** Binds the gRPC port, then the HTTP one; either failing releases both and fails the activation. */
  async listen(): Promise<void> {
    const { config, ctx } = this;
    const tls = config.tls;
    try {
      this.serverPort = await bind(this.server, config.host, config.port, this.credentials);
      if (config.http_port !== undefined) {
        const httpTls = tls === undefined || this.identity === undefined ? undefined : serverOptions(tls, this.identity);
        this.http = new OtlpHttpReceiver(this, (message) => ctx.logger.warn(`otel onramp ${ctx.url}: ${message}`), httpTls);
        await this.http.listen(config.host, config.http_port);
      }
    } catch (err) {
      this.server.forceShutdown();
      await this.http?.close(0);
      throw err;
    }
    // the bound ports: the only way to learn them with port 0
    const scheme = tls === undefined ? 'http' : 'https';
    ctx.logger.info(`otel onramp ${ctx.url}: OTLP/gRPC listening on ${scheme}://${uriHost(config.host)}:${this.serverPort}/`);
    if (this.http !== undefined) {
      ctx.logger.info(`otel onramp ${ctx.url}: OTLP/HTTP listening on ${scheme}://${uriHost(config.host)}:${this.http.boundPort}/`);
    }
    if (tls !== undefined) this.watch = new CertificateWatch(tls, (next) => this.applyCertificate(next), ctx.logger, `otel onramp ${ctx.url}`);
  }

  pause(): void {
    this.paused = true;
  }

  resume(): void {
    this.paused = false;
    if (this.refusedCount > 0) {
      this.ctx.logger.info(
        `otel onramp ${this.ctx.url}: refused ${this.refusedCount} export requests (UNAVAILABLE) while not reading; exporters that retry send them again`,
      );
    }
    this.refusedCount = 0;
  }

  close(): Promise<void> {
    return Promise.all([
      Promise.resolve(this.watch?.stop()),
      this.http?.close(SHUTDOWN_GRACE_MS),
      new Promise<void>((resolve) => {
        // calls in progress may finish; after the grace period every connection is dropped
        const force = setTimeout(() => {
          this.server.forceShutdown();
          resolve();
        }, SHUTDOWN_GRACE_MS);
        this.server.tryShutdown(() => {
          clearTimeout(force);
          resolve();
        });
      }),
    ]).then(() => undefined);
  }

  reading(): boolean {
    return this.subscriber !== undefined && !this.paused;
  }

  enabled(signal: Signal): boolean {
    return this.config[signal];
  }

  refused(signal: Signal, peer: string): void {
    this.refusedCount++;
    this.ctx.logger.debug(`otel onramp ${this.ctx.url}: refused a ${signal} export from ${peer} (UNAVAILABLE, retry in ${RETRY_DELAY_MS} ms)`);
  }

  dropped(signal: Signal, originUri: string, resources: Record<string, unknown>[] | undefined): number {
    this.subscriber?.next({ stream: 0, error: `a ${signal} export was dropped: this onramp has ${signal}: false`, originUri });
    return resources === undefined ? 0 : countItems(signal, resources);
  }

  bad(message: string, data: Buffer, originUri: string): void {
    this.subscriber?.next({ stream: 0, error: message, data, originUri });
  }

  accepted(signal: Signal, resources: Record<string, unknown>[], originUri: string, bytes: number): boolean {
    const to = this.subscriber;
    if (to === undefined) return false;
    const ingestNs = nowNs();
    // the request's size counts once, with its first resource
    resources.forEach((resource, i) => to.next({ stream: 0, value: resource, bytes: i === 0 ? bytes : 0, meta: { otel: { signal } }, originUri, ingestNs }));
    return true;
  }

  /** TLS: the files changed; both ports serve the new certificate to new connections. */
  private applyCertificate(next: TlsIdentity): void {
    this.http?.setSecureContext(next);
    this.grpcIdentity?.update(next);
  }

  /** One gRPC Export call, answered as the HTTP receiver answers its requests. */
  private export(signal: Signal, call: ServerUnaryCall<Buffer, Buffer>, callback: sendUnaryData<Buffer>): void {
    const originUri = `svc-otel://${peerAddress(call)}/${this.serverPort}/${signal}`;
    if (!this.enabled(signal)) {
      // answered with a partial success naming what was dropped: the exporter does not send it again
      const rejected = this.dropped(signal, originUri, tryDecode(signal, call.request));
      callback(null, encodeResponse(signal, false, { rejected, message: `this onramp has ${signal}: false; the ${signal} data was dropped` }));
      return;
    }
    if (!this.reading()) {
      // refused before it is read: the exporter keeps the data and retries after the delay
      this.refused(signal, peerAddress(call));
      const metadata = new grpc.Metadata();
      metadata.set('grpc-status-details-bin', this.retryDetails);
      callback({ code: grpc.status.UNAVAILABLE, details: this.unavailable, metadata });
      return;
    }
    let resources: Record<string, unknown>[];
    try {
      resources = decodeResources(signal, call.request);
    } catch (err) {
      const message = `not an OTLP ${signal} export request: ${(err as Error).message}`;
      callback({ code: grpc.status.INVALID_ARGUMENT, details: message });
      this.bad(message, call.request, originUri);
      return;
    }
    this.accepted(signal, resources, originUri, call.request.length);
    // answered once every event is with the machinery (held there if the breaker triggered meanwhile)
    callback(null, FULL_SUCCESS);
  }
}
