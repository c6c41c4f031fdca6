import type { IConversionOptions } from 'protobufjs';
import { Root } from 'protobufjs';
import { hasLongDigitRun } from '../../codecs/json';
import { parsePrecise } from '../../codecs/json/precise-parse';
import { otlpRoot } from './otlp-messages';

/**
 * OTLP decoding and encoding for the otel onramp (gRPC and HTTP) and the
 * otel offramp, with the message definitions of `otlp-messages.ts` (why
 * they are written there rather than taken from a package is said there).
 */

/** The methods of a message type that we use (protobufjs's reflected `Type`). */
interface MessageType {
  decode(bytes: Uint8Array): object;
  encode(message: object): { finish(): Uint8Array };
  fromObject(object: Record<string, unknown>): object;
  toObject(message: object, options: IConversionOptions): Record<string, unknown>;
}

const messageType = (name: string): MessageType => otlpRoot.lookupType(`opentelemetry.proto.collector.${name}`);

/** The three OTLP signals, named as the onramp's config switches them. */
export type Signal = 'logs' | 'metrics' | 'trace';
export const SIGNALS: readonly Signal[] = ['logs', 'metrics', 'trace'];

export interface SignalSpec {
  /** the gRPC method path of the signal's Export call */
  readonly path: string;
  readonly request: MessageType;
  readonly response: MessageType;
  /** the request's list of resources (OTLP/JSON name) */
  readonly resources: 'resourceLogs' | 'resourceMetrics' | 'resourceSpans';
  /** a resource's list of scopes (OTLP/JSON name): how an event's signal shows in its data */
  readonly scopes: 'scopeLogs' | 'scopeMetrics' | 'scopeSpans';
  /** the partial-success count of items the receiver rejected */
  readonly rejected: 'rejectedLogRecords' | 'rejectedDataPoints' | 'rejectedSpans';
  /** the OTLP/HTTP path of the signal */
  readonly httpPath: '/v1/logs' | '/v1/metrics' | '/v1/traces';
}

export const SIGNAL_SPECS: Readonly<Record<Signal, SignalSpec>> = {
  logs: {
    path: '/opentelemetry.proto.collector.logs.v1.LogsService/Export',
    request: messageType('logs.v1.ExportLogsServiceRequest'),
    response: messageType('logs.v1.ExportLogsServiceResponse'),
    resources: 'resourceLogs',
    scopes: 'scopeLogs',
    rejected: 'rejectedLogRecords',
    httpPath: '/v1/logs',
  },
  metrics: {
    path: '/opentelemetry.proto.collector.metrics.v1.MetricsService/Export',
    request: messageType('metrics.v1.ExportMetricsServiceRequest'),
    response: messageType('metrics.v1.ExportMetricsServiceResponse'),
    resources: 'resourceMetrics',
    scopes: 'scopeMetrics',
    rejected: 'rejectedDataPoints',
    httpPath: '/v1/metrics',
  },
  trace: {
    path: '/opentelemetry.proto.collector.trace.v1.TraceService/Export',
    request: messageType('trace.v1.ExportTraceServiceRequest'),
    response: messageType('trace.v1.ExportTraceServiceResponse'),
    resources: 'resourceSpans',
    scopes: 'scopeSpans',
    rejected: 'rejectedSpans',
    httpPath: '/v1/traces',
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

/**
 * Decodes one OTLP/JSON Export request body of `signal` (an OTLP/HTTP JSON
 * body) and returns its resources exactly as `decodeResources` does for the
 * protobuf form: both forms of one request make equal events. Throws on a
 * body that is not such a request.
 */
export function decodeJsonResources(signal: Signal, bytes: Buffer): Record<string, unknown>[] {
  const text = bytes.toString('utf8');
  let parsed: unknown;
  try {
    // integer literals beyond 2^53 stay exact (as bigints, written back as decimal strings)
    parsed = hasLongDigitRun(text) ? parsePrecise(text) : JSON.parse(text);
  } catch (err) {
    throw new Error(`not JSON: ${(err as Error).message}`);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('the body must be a JSON object');
  const spec = SIGNAL_SPECS[signal];
  const message = spec.request.fromObject(fromJson(parsed, '') as Record<string, unknown>);
  const object = spec.request.toObject(message, TO_JSON);
  const resources = (object[spec.resources] as Record<string, unknown>[] | undefined) ?? [];
  for (const resource of resources) jsonBytes(resource);
  return resources;
}

/**
 * Which signal an event's value is: a resource (ResourceSpans, ResourceLogs
 * or ResourceMetrics, as the onramp makes them) by its list of scopes, or a
 * whole request by its list of resources. `declared` is the event's meta
 * `otel.signal`, when it has one: it names the signal of a resource that
 * has neither (only `resource`), and must agree with the data otherwise.
 * Throws saying why when the signal cannot be told.
 */
export function signalOf(value: unknown, declared: unknown): Signal {
  if (declared !== undefined && !SIGNALS.includes(declared as Signal)) {
    throw new Error(`meta otel.signal must be one of ${SIGNALS.join(', ')}, not ${JSON.stringify(declared)}`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new Error('the event data must be an OTLP resource or request (a record)');
  const found = SIGNALS.filter((s) => SIGNAL_SPECS[s].scopes in value || SIGNAL_SPECS[s].resources in value);
  if (found.length > 1) throw new Error(`the event data holds more than one signal (${found.join(', ')})`);
  const inData = found.at(0);
  if (inData !== undefined && declared !== undefined && inData !== declared)
    throw new Error(`meta otel.signal says ${declared as string} but the data holds ${inData}`);
  const signal = inData ?? (declared as Signal | undefined);
  if (signal === undefined) {
    throw new Error(
      'cannot tell the signal: the data has no scopeSpans, scopeLogs or scopeMetrics (nor resourceSpans, resourceLogs, resourceMetrics) and meta otel.signal is not set',
    );
  }
  return signal;
}

/**
 * The resources of an event's value as protobuf messages, ready to be put
 * into a request (`encodeRequest`). A resource in the OTLP/JSON mapping
 * (ids as hex, 64-bit integers as decimal strings, numbers or bigints) or a
 * whole request (its resources are taken). Throws naming the field that is
 * not valid OTLP.
 */
export function resourceMessages(signal: Signal, value: Record<string, unknown>): object[] {
  const spec = SIGNAL_SPECS[signal];
  const request = spec.resources in value ? value : { [spec.resources]: [value] };
  const message = spec.request.fromObject(fromJson(request, '') as Record<string, unknown>) as Record<string, object[]>;
  return message[spec.resources];
}

/** One Export request of `signal` holding `resources` (from `resourceMessages`): protobuf bytes, or the OTLP/JSON text when `json`. */
export function encodeRequest(signal: Signal, resources: object[], json: boolean): Buffer {
  const spec = SIGNAL_SPECS[signal];
  const message = spec.request.fromObject({ [spec.resources]: resources });
  if (!json) return Buffer.from(spec.request.encode(message).finish());
  const object = spec.request.toObject(message, TO_JSON);
  for (const resource of (object[spec.resources] as Record<string, unknown>[] | undefined) ?? []) jsonBytes(resource);
  return Buffer.from(JSON.stringify(object));
}

/** What a receiver's Export response said it rejected (OTLP's partial success); undefined for a full success. */
export interface PartialSuccess {
  rejected: number;
  message: string;
}

/** Reads an Export response (protobuf, or OTLP/JSON when `json`); a body that does not decode counts as a full success, as the spec asks of clients. */
export function partialSuccessOf(signal: Signal, body: Buffer, json: boolean): PartialSuccess | undefined {
  if (body.length === 0) return undefined;
  const spec = SIGNAL_SPECS[signal];
  // JSON may say null
  let object: Record<string, unknown> | null;
  try {
    object = json
      ? (JSON.parse(body.toString('utf8')) as Record<string, unknown> | null)
      : spec.response.toObject(spec.response.decode(body), { longs: Number });
  } catch {
    return undefined;
  }
  const partial = object?.partialSuccess as Record<string, unknown> | null | undefined;
  if (partial === undefined || partial === null || typeof partial !== 'object') return undefined;
  const rejected = Number(partial[spec.rejected] ?? 0);
  const message = typeof partial.errorMessage === 'string' ? partial.errorMessage : '';
  if (!(rejected > 0) && message === '') return undefined;
  return { rejected: Number.isFinite(rejected) ? rejected : 0, message };
}

/** An Export response: empty for a full success, else a partial success with the number of items rejected and why. */
export function encodeResponse(signal: Signal, json: boolean, partial?: PartialSuccess): Buffer {
  const spec = SIGNAL_SPECS[signal];
  const object = partial === undefined ? {} : { partialSuccess: { [spec.rejected]: partial.rejected, errorMessage: partial.message } };
  if (json) return Buffer.from(JSON.stringify(object));
  return Buffer.from(spec.response.encode(spec.response.fromObject(object)).finish());
}

/** How many items (spans, log records, data points) the resources of an OTLP/JSON request hold: what a partial success rejects. */
export function countItems(signal: Signal, resources: Record<string, unknown>[]): number {
  const spec = SIGNAL_SPECS[signal];
  let n = 0;
  for (const resource of resources) {
    for (const scope of (resource[spec.scopes] as Record<string, unknown>[] | undefined) ?? []) {
      if (signal === 'trace') n += ((scope.spans as unknown[] | undefined) ?? []).length;
      else if (signal === 'logs') n += ((scope.logRecords as unknown[] | undefined) ?? []).length;
      else for (const metric of (scope.metrics as Record<string, unknown>[] | undefined) ?? []) n += dataPoints(metric);
    }
  }
  return n;
}

function dataPoints(metric: Record<string, unknown>): number {
  for (const kind of ['gauge', 'sum', 'histogram', 'exponentialHistogram', 'summary']) {
    const points = (metric[kind] as { dataPoints?: unknown[] } | undefined)?.dataPoints;
    if (points !== undefined) return points.length;
  }
  return 0;
}

/** The OTLP/JSON fields that hold 64-bit integers (decimal strings in JSON): a string there must be one, which protobufjs would read as 0 otherwise. */
const INT64_FIELDS = new Set([
  'timeUnixNano',
  'startTimeUnixNano',
  'endTimeUnixNano',
  'observedTimeUnixNano',
  'intValue',
  'asInt',
  'count',
  'zeroCount',
  'bucketCounts',
]);
const INTEGER = /^-?\d+$/;
const HEX = /^(?:[0-9a-fA-F]{2})*$/;

/**
 * A copy of an OTLP/JSON value as protobufjs's `fromObject` reads it: ids
 * from hex to bytes, bigints (a precise JSON parse) as decimal strings, and
 * the strings of 64-bit integer fields checked. Throws naming the path.
 */
function fromJson(value: unknown, path: string, key = ''): unknown {
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'string') {
    if (HEX_FIELDS.has(key)) {
      if (!HEX.test(value)) throw new Error(`${path}: not a hex string: ${JSON.stringify(value.slice(0, 40))}`);
      return Buffer.from(value, 'hex');
    }
    if (INT64_FIELDS.has(key) && !INTEGER.test(value)) throw new Error(`${path}: not an integer: ${JSON.stringify(value.slice(0, 40))}`);
    return value;
  }
  if (value === null || typeof value !== 'object' || value instanceof Uint8Array) return value;
  if (Array.isArray(value)) return value.map((item, i) => fromJson(item, `${path}[${i}]`, key));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = fromJson(v, path === '' ? k : `${path}.${k}`, k);
  return out;
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

/** The delay a google.rpc.Status (a `grpc-status-details-bin` trailer) asks for in its RetryInfo, in ms; undefined when it has none. */
export function retryDelayOf(statusBytes: Buffer): number | undefined {
  try {
    const decoded = Status.toObject(Status.decode(statusBytes), { longs: Number }) as { details?: { typeUrl?: string; value?: Uint8Array }[] };
    const info = decoded.details?.find((d) => d.typeUrl === 'type.googleapis.com/google.rpc.RetryInfo');
    if (info?.value === undefined) return undefined;
    const delay = (RetryInfo.toObject(RetryInfo.decode(info.value), { longs: Number }) as { retryDelay?: { seconds?: number; nanos?: number } }).retryDelay;
    if (delay === undefined) return undefined;
    return (delay.seconds ?? 0) * 1000 + Math.round((delay.nanos ?? 0) / 1e6);
  } catch {
    return undefined;
  }
}

/** A google.rpc.Status, the body of an OTLP/HTTP error answer: protobuf, or its JSON form when `json`. */
export function encodeStatus(code: number, message: string, json: boolean): Buffer {
  if (json) return Buffer.from(JSON.stringify({ code, message }));
  return Buffer.from(Status.encode(Status.create({ code, message })).finish());
}

/** The message of an OTLP/HTTP error body: a google.rpc.Status when the body is one (protobuf or JSON by `contentType`), else the body's text (a proxy's page). */
export function statusMessageOf(body: Buffer, contentType: string): string {
  if (body.length === 0) return '';
  const json = /json/i.test(contentType);
  if (json || /protobuf/i.test(contentType)) {
    try {
      // JSON may say null
      const object = json
        ? (JSON.parse(body.toString('utf8')) as { message?: unknown } | null)
        : (Status.toObject(Status.decode(body)) as { message?: unknown });
      return typeof object?.message === 'string' ? object.message : '';
    } catch {
      // not a Status after all: the text, below
    }
  }
  return body.toString('utf8', 0, Math.min(body.length, 512)).trim();
}
