import type { sendUnaryData, Server, ServerCredentials, ServerUnaryCall, ServiceDefinition } from '@grpc/grpc-js';
import { Observable, type Subscriber } from '../../core/rx';
import { nowNs } from '../../core/clock';
import type { Frame, OnrampType } from '../connector';
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
    const tls = config.tls;
    const identity = tls === undefined ? undefined : readServerTls(tls);
    const grpcIdentity = identity === undefined ? undefined : new GrpcIdentity(identity);
    const credentials =
      grpcIdentity === undefined || tls === undefined
        ? grpc.ServerCredentials.createInsecure()
        : grpcServerCredentials(grpcIdentity, tls.ca !== undefined, tls.require_client_cert);
    const server = new grpc.Server();
    let subscriber: Subscriber<Frame> | undefined;
    let paused = false;
    /** requests answered UNAVAILABLE since the last report */
    let refused = 0;
    let serverPort = config.port;

    const unavailable = `eddy onramp ${ctx.url} is not reading (its circuit breaker is triggered, or no pipeline reads it yet); retry in ${RETRY_DELAY_MS} ms`;
    const retryDetails = statusWithRetryInfo(grpc.status.UNAVAILABLE, unavailable, RETRY_DELAY_MS);

    const intake: Intake = {
      reading: () => subscriber !== undefined && !paused,
      retryDelayMs: RETRY_DELAY_MS,
      enabled: (signal) => config[signal],
      refused(signal, peer) {
        refused++;
        ctx.logger.debug(`otel onramp ${ctx.url}: refused a ${signal} export from ${peer} (UNAVAILABLE, retry in ${RETRY_DELAY_MS} ms)`);
      },
      dropped(signal, originUri, resources) {
        subscriber?.next({ stream: 0, error: `a ${signal} export was dropped: this onramp has ${signal}: false`, originUri });
        return resources === undefined ? 0 : countItems(signal, resources);
      },
      bad: (message, data, originUri) => subscriber?.next({ stream: 0, error: message, data, originUri }),
      accepted(signal, resources, originUri, bytes) {
        const to = subscriber;
        if (to === undefined) return false;
        const ingestNs = nowNs();
        // the request's size counts once, with its first resource
        resources.forEach((resource, i) =>
          to.next({ stream: 0, value: resource, bytes: i === 0 ? bytes : 0, meta: { otel: { signal } }, originUri, ingestNs }),
        );
        return true;
      },
    };

    const handler = (signal: Signal) => (call: ServerUnaryCall<Buffer, Buffer>, callback: sendUnaryData<Buffer>) => {
      const originUri = `svc-otel://${peerAddress(call)}/${serverPort}/${signal}`;
      if (!intake.enabled(signal)) {
        // answered with a partial success naming what was dropped: the exporter does not send it again
        const rejected = intake.dropped(signal, originUri, tryDecode(signal, call.request));
        callback(null, encodeResponse(signal, false, { rejected, message: `this onramp has ${signal}: false; the ${signal} data was dropped` }));
        return;
      }
      if (!intake.reading()) {
        // refused before it is read: the exporter keeps the data and retries after the delay
        intake.refused(signal, peerAddress(call));
        const metadata = new grpc.Metadata();
        metadata.set('grpc-status-details-bin', retryDetails);
        callback({ code: grpc.status.UNAVAILABLE, details: unavailable, metadata });
        return;
      }
      let resources: Record<string, unknown>[];
      try {
        resources = decodeResources(signal, call.request);
      } catch (err) {
        const message = `not an OTLP ${signal} export request: ${(err as Error).message}`;
        callback({ code: grpc.status.INVALID_ARGUMENT, details: message });
        intake.bad(message, call.request, originUri);
        return;
      }
      intake.accepted(signal, resources, originUri, call.request.length);
      // answered once every event is with the machinery (held there if the breaker triggered meanwhile)
      callback(null, FULL_SUCCESS);
    };

    for (const signal of SIGNALS) server.addService(serviceFor(signal), { Export: handler(signal) });
    let http: OtlpHttpReceiver | undefined;
    try {
      serverPort = await bind(server, config.host, config.port, credentials);
      if (config.http_port !== undefined) {
        const httpTls = tls === undefined || identity === undefined ? undefined : serverOptions(tls, identity);
        http = new OtlpHttpReceiver(intake, (message) => ctx.logger.warn(`otel onramp ${ctx.url}: ${message}`), httpTls);
        await http.listen(config.host, config.http_port);
      }
    } catch (err) {
      server.forceShutdown();
      await http?.close(0);
      throw err;
    }
    // the bound ports: the only way to learn them with port 0
    const scheme = tls === undefined ? 'http' : 'https';
    ctx.logger.info(`otel onramp ${ctx.url}: OTLP/gRPC listening on ${scheme}://${uriHost(config.host)}:${serverPort}/`);
    if (http !== undefined) ctx.logger.info(`otel onramp ${ctx.url}: OTLP/HTTP listening on ${scheme}://${uriHost(config.host)}:${http.boundPort}/`);
    // one watch of the files, for both ports
    const receiver = http;
    const apply = (next: TlsIdentity) => {
      receiver?.setSecureContext(next);
      grpcIdentity?.update(next);
    };
    const watch = tls === undefined ? undefined : new CertificateWatch(tls, apply, ctx.logger, `otel onramp ${ctx.url}`);

    const frames = new Observable<Frame>((sub) => {
      subscriber = sub;
      return () => {
        if (subscriber === sub) subscriber = undefined;
      };
    });

    return {
      frames,
      pause: () => void (paused = true),
      resume() {
        paused = false;
        if (refused > 0)
          ctx.logger.info(`otel onramp ${ctx.url}: refused ${refused} export requests (UNAVAILABLE) while not reading; exporters that retry send them again`);
        refused = 0;
      },
      close: () =>
        Promise.all([
          Promise.resolve(watch?.stop()),
          http?.close(SHUTDOWN_GRACE_MS),
          new Promise<void>((resolve) => {
            // calls in progress may finish; after the grace period every connection is dropped
            const force = setTimeout(() => {
              server.forceShutdown();
              resolve();
            }, SHUTDOWN_GRACE_MS);
            server.tryShutdown(() => {
              clearTimeout(force);
              resolve();
            });
          }),
        ]).then(() => undefined),
    };
  },
};
