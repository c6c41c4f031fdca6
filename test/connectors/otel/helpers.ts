/**
 * Helpers for the otel onramp tests. The clients are the official
 * OpenTelemetry JS SDKs with their OTLP/gRPC exporters, sending over
 * loopback; a plain grpc-js client sends what no SDK would (bytes that are
 * not OTLP).
 */
import { Client, credentials, Metadata, type ServiceError } from '@grpc/grpc-js';
import { OTLPLogExporter } from '@opentelemetry/exporter-logs-otlp-grpc';
import { OTLPMetricExporter } from '@opentelemetry/exporter-metrics-otlp-grpc';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-grpc';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { LoggerProvider, SimpleLogRecordProcessor } from '@opentelemetry/sdk-logs';
import { MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider, type ReadableSpan, type SpanExporter } from '@opentelemetry/sdk-trace';
import { Root } from 'protobufjs';
import type { EddyEvent } from '../../../src/core/event';
import { receiver, type Receiver, type ReceiverOptions } from '../net-helpers';

export type Attributes = Record<string, string | number | boolean | Uint8Array | string[] | number[]>;

/** The SDK's attribute types leave bytes out, but its OTLP serializer writes a Uint8Array as an AnyValue's bytesValue. */
const resourceOf = (attributes: Attributes) => resourceFromAttributes(attributes as Parameters<typeof resourceFromAttributes>[0]);

export const endpoint = (port: number, host = '127.0.0.1') => `http://${host}:${port}`;

/** The result of one export, as the exporters report it. */
export type ExportResult = Parameters<Parameters<OTLPTraceExporter['export']>[1]>[0];
/** ExportResultCode.SUCCESS of @opentelemetry/core */
export const SUCCESS = 0;

/** A tracer provider that exports every ended span at once (SimpleSpanProcessor) over OTLP/gRPC to `port`. */
export function tracing(port: number, resource: Attributes, host?: string) {
  const exporter = new OTLPTraceExporter({ url: endpoint(port, host), credentials: credentials.createInsecure() });
  const provider = new TracerProvider({ resource: resourceOf(resource), spanProcessors: [new SimpleSpanProcessor({ exporter })] });
  return { provider, tracer: provider.getTracer('eddy-test', '1.2.3'), shutdown: () => provider.shutdown() };
}

/** A logger provider exporting every record at once over OTLP/gRPC to `port`. */
export function logging(port: number, resource: Attributes, host?: string) {
  const exporter = new OTLPLogExporter({ url: endpoint(port, host), credentials: credentials.createInsecure() });
  const provider = new LoggerProvider({ resource: resourceOf(resource), processors: [new SimpleLogRecordProcessor({ exporter })] });
  return { provider, logger: provider.getLogger('eddy-test-logs', '4.5.6'), shutdown: () => provider.shutdown() };
}

/** A meter provider whose reader exports only when flushed (the interval is far away). */
export function metering(port: number, resource: Attributes, host?: string) {
  const exporter = new OTLPMetricExporter({ url: endpoint(port, host), credentials: credentials.createInsecure() });
  const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 600_000 });
  const provider = new MeterProvider({ resource: resourceOf(resource), readers: [reader] });
  return { provider, meter: provider.getMeter('eddy-test-metrics'), flush: () => provider.forceFlush(), shutdown: () => provider.shutdown() };
}

/**
 * Spans made by the SDK but not exported: for calling an OTLP exporter's
 * `export` by hand and seeing its result (the span processors only log a
 * failure).
 */
export function recordedSpans(resource: Attributes, names: string[]): ReadableSpan[] {
  const memory = new InMemorySpanExporter();
  const provider = new TracerProvider({ resource: resourceOf(resource), spanProcessors: [new SimpleSpanProcessor({ exporter: memory })] });
  const tracer = provider.getTracer('eddy-test');
  for (const name of names) tracer.startSpan(name).end();
  return memory.getFinishedSpans();
}

export function traceExporter(port: number): OTLPTraceExporter {
  return new OTLPTraceExporter({ url: endpoint(port), credentials: credentials.createInsecure() });
}

export function exportSpans(exporter: SpanExporter, spans: ReadableSpan[]): Promise<ExportResult> {
  return new Promise((resolve) => exporter.export(spans, resolve));
}

/** The gRPC Export paths of the three OTLP services. */
export const EXPORT_PATHS = {
  trace: '/opentelemetry.proto.collector.trace.v1.TraceService/Export',
  logs: '/opentelemetry.proto.collector.logs.v1.LogsService/Export',
  metrics: '/opentelemetry.proto.collector.metrics.v1.MetricsService/Export',
} as const;

/** A plain grpc-js client that sends raw bytes to an Export method. */
export class RawClient {
  private readonly client: Client;
  constructor(port: number) {
    this.client = new Client(`127.0.0.1:${port}`, credentials.createInsecure());
  }
  export(path: string, bytes: Buffer): Promise<{ error: ServiceError | null; response?: Buffer }> {
    return new Promise((resolve) =>
      this.client.makeUnaryRequest(
        path,
        (b: Buffer) => b,
        (b: Buffer) => b,
        bytes,
        new Metadata(),
        (error, response) => resolve({ error: error ?? null, response }),
      ),
    );
  }
  close(): void {
    this.client.close();
  }
}

/** Bytes that are no OTLP request: field 1 (the resources) announces 5 bytes, and 1 follows. */
export const NOT_PROTOBUF = Buffer.from([0x0a, 0x05, 0xff]);

/**
 * The test's own reading of the `grpc-status-details-bin` trailer (a
 * google.rpc.Status), independent of the onramp's code.
 */
const rpc = Root.fromJSON({
  nested: {
    Status: { fields: { code: { type: 'int32', id: 1 }, message: { type: 'string', id: 2 }, details: { rule: 'repeated', type: 'Any', id: 3 } } },
    Any: { fields: { typeUrl: { type: 'string', id: 1 }, value: { type: 'bytes', id: 2 } } },
    RetryInfo: { fields: { retryDelay: { type: 'Duration', id: 1 } } },
    Duration: { fields: { seconds: { type: 'int64', id: 1 }, nanos: { type: 'int32', id: 2 } } },
  },
});

export interface RetryStatus {
  code: number;
  message: string;
  /** the type URLs of the details */
  types: string[];
  /** RetryInfo.retry_delay in ms, when there is one */
  retryDelayMs?: number;
}

export function statusDetails(metadata: Metadata | undefined): RetryStatus | undefined {
  const raw = metadata?.get('grpc-status-details-bin')[0];
  if (!(raw instanceof Buffer)) return undefined;
  const status = rpc.lookupType('Status').toObject(rpc.lookupType('Status').decode(raw), { longs: Number }) as {
    code: number;
    message: string;
    details?: { typeUrl: string; value: Uint8Array }[];
  };
  const details = status.details ?? [];
  const retry = details.find((d) => d.typeUrl === 'type.googleapis.com/google.rpc.RetryInfo');
  let retryDelayMs: number | undefined;
  if (retry) {
    const info = rpc.lookupType('RetryInfo').toObject(rpc.lookupType('RetryInfo').decode(retry.value), { longs: Number }) as {
      retryDelay?: { seconds?: number; nanos?: number };
    };
    retryDelayMs = (info.retryDelay?.seconds ?? 0) * 1000 + (info.retryDelay?.nanos ?? 0) / 1e6;
  }
  return { code: status.code, message: status.message, types: details.map((d) => d.typeUrl), retryDelayMs };
}

/** An OTLP/JSON KeyValue list as a plain record of the AnyValues. */
export function attributes(list: unknown): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const kv of (list as { key: string; value: unknown }[] | undefined) ?? []) out[kv.key] = kv.value;
  return out;
}

/** The nanoseconds since the epoch of an SDK hrtime, as OTLP/JSON writes them (a decimal string, exact). */
export function unixNano([seconds, nanos]: [number, number]): string {
  return (BigInt(seconds) * 1_000_000_000n + BigInt(nanos)).toString();
}

export const signalOf = (e: EddyEvent) => (e.meta.otel as { signal?: string } | undefined)?.signal;

/** A `receiver` flow around an otel onramp; `url` is the onramp instance's URL. */
export type OtelFlow = Receiver & { url: string };

export async function otelFlow(config: Record<string, unknown>, options: ReceiverOptions = {}): Promise<OtelFlow> {
  const flow = await receiver({ type: 'otel', config }, options);
  return { ...flow, url: flow.onramp };
}
