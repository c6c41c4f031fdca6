import type { IConversionOptions } from 'protobufjs';
import { Root } from 'protobufjs';

/**
 * OTLP decoding for the otel onramp.
 *
 * The message definitions are not ours: they are the protobufjs module the
 * OpenTelemetry project generated from opentelemetry-proto and published in
 * `@opentelemetry/otlp-transformer`. Its version is pinned to 0.214.0, the
 * last release that ships that module with the decoders of all three
 * signals (later releases replaced it with hand-written encoders that can
 * only write requests). The package has no `exports` map, so the module is
 * loaded by its path.
 */

/** The static methods of a generated message type that we use. */
interface MessageType {
  decode(bytes: Uint8Array): object;
  toObject(message: object, options: IConversionOptions): Record<string, unknown>;
}

interface CollectorPackage<K extends string> {
  v1: Record<K, MessageType>;
}

interface GeneratedRoot {
  opentelemetry: {
    proto: {
      collector: {
        trace: CollectorPackage<'ExportTraceServiceRequest'>;
        logs: CollectorPackage<'ExportLogsServiceRequest'>;
        metrics: CollectorPackage<'ExportMetricsServiceRequest'>;
      };
    };
  };
}

// eslint-disable-next-line @typescript-eslint/no-require-imports
const generated = require('@opentelemetry/otlp-transformer/build/src/generated/root') as GeneratedRoot;
const collector = generated.opentelemetry.proto.collector;

/** The three OTLP signals, named as the onramp's config switches them. */
export type Signal = 'logs' | 'metrics' | 'trace';
export const SIGNALS: readonly Signal[] = ['logs', 'metrics', 'trace'];

export interface SignalSpec {
  /** the gRPC method path of the signal's Export call */
  readonly path: string;
  readonly request: MessageType;
  /** the request's list of resources (OTLP/JSON name) */
  readonly resources: 'resourceLogs' | 'resourceMetrics' | 'resourceSpans';
}

export const SIGNAL_SPECS: Readonly<Record<Signal, SignalSpec>> = {
  logs: {
    path: '/opentelemetry.proto.collector.logs.v1.LogsService/Export',
    request: collector.logs.v1.ExportLogsServiceRequest,
    resources: 'resourceLogs',
  },
  metrics: {
    path: '/opentelemetry.proto.collector.metrics.v1.MetricsService/Export',
    request: collector.metrics.v1.ExportMetricsServiceRequest,
    resources: 'resourceMetrics',
  },
  trace: {
    path: '/opentelemetry.proto.collector.trace.v1.TraceService/Export',
    request: collector.trace.v1.ExportTraceServiceRequest,
    resources: 'resourceSpans',
  },
};

/**
 * protobufjs's conversion to the OTLP/JSON mapping (proto3 JSON with OTLP's
 * exceptions): 64-bit integers as decimal strings, enums as integers, NaN
 * and infinities as strings, fields that are absent left out. Bytes stay
 * raw here: OTLP writes trace and span ids as hex, other bytes as base64.
 */
const TO_JSON: IConversionOptions = { longs: String, enums: Number, json: true };

/** The bytes fields OTLP/JSON writes as hex: trace and span ids, wherever they appear (spans, links, log records, exemplars). */
const HEX_FIELDS = new Set(['traceId', 'spanId', 'parentSpanId']);

/**
 * Decodes one Export request of `signal` and returns its resources
 * (ResourceSpans, ResourceLogs or ResourceMetrics) as OTLP/JSON values.
 * Throws on bytes that are not such a request.
 */
export function decodeResources(signal: Signal, bytes: Uint8Array): Record<string, unknown>[] {
  const spec = SIGNAL_SPECS[signal];
  const object = spec.request.toObject(spec.request.decode(bytes), TO_JSON);
  const resources = (object[spec.resources] as Record<string, unknown>[] | undefined) ?? [];
  for (const resource of resources) jsonBytes(resource);
  return resources;
}

/** Rewrites the raw bytes left in a converted message, in place: ids as hex, any other bytes (an AnyValue's bytesValue) as base64. */
function jsonBytes(node: Record<string, unknown> | unknown[]): void {
  if (Array.isArray(node)) {
    for (let i = 0; i < node.length; i++) {
      const item = node[i];
      if (item instanceof Uint8Array) node[i] = Buffer.from(item.buffer, item.byteOffset, item.byteLength).toString('base64');
      else if (item !== null && typeof item === 'object') jsonBytes(item as Record<string, unknown>);
    }
    return;
  }
  for (const key of Object.keys(node)) {
    const value = node[key];
    if (value === null || typeof value !== 'object') continue;
    if (value instanceof Uint8Array) {
      node[key] = Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString(HEX_FIELDS.has(key) ? 'hex' : 'base64');
    } else {
      jsonBytes(value as Record<string, unknown>);
    }
  }
}

/**
 * google.rpc.Status with a google.rpc.RetryInfo detail, the payload of the
 * `grpc-status-details-bin` trailer: how an OTLP receiver tells an exporter
 * that it is throttled and when to try again (OTLP spec, "Failures"). The
 * two messages are tiny and stable; they are described here by their
 * public field numbers rather than pulled in with all of Google's APIs.
 */
const rpc = Root.fromJSON({
  nested: {
    google: {
      nested: {
        protobuf: {
          nested: {
            Any: { fields: { typeUrl: { type: 'string', id: 1 }, value: { type: 'bytes', id: 2 } } },
            Duration: { fields: { seconds: { type: 'int64', id: 1 }, nanos: { type: 'int32', id: 2 } } },
          },
        },
        rpc: {
          nested: {
            Status: {
              fields: {
                code: { type: 'int32', id: 1 },
                message: { type: 'string', id: 2 },
                details: { rule: 'repeated', type: 'google.protobuf.Any', id: 3 },
              },
            },
            RetryInfo: { fields: { retryDelay: { type: 'google.protobuf.Duration', id: 1 } } },
          },
        },
      },
    },
  },
});
const Status = rpc.lookupType('google.rpc.Status');
const RetryInfo = rpc.lookupType('google.rpc.RetryInfo');

/** The encoded google.rpc.Status for `code` and `message`, carrying a RetryInfo that asks to retry after `delayMs`. */
export function statusWithRetryInfo(code: number, message: string, delayMs: number): Buffer {
  const retryDelay = { seconds: Math.floor(delayMs / 1000), nanos: (delayMs % 1000) * 1_000_000 };
  const retryInfo = RetryInfo.encode(RetryInfo.create({ retryDelay })).finish();
  const details = [{ typeUrl: 'type.googleapis.com/google.rpc.RetryInfo', value: retryInfo }];
  return Buffer.from(Status.encode(Status.create({ code, message, details })).finish());
}
