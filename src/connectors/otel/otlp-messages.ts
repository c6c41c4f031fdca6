import { Root, type IEnum, type INamespace, type IType } from 'protobufjs';

/**
 * The OTLP messages of the otel onramp and offramp, as a protobufjs
 * descriptor: the Export requests and responses of the trace, logs and
 * metrics services and every message they hold, written here from the
 * OpenTelemetry protocol's definitions (opentelemetry-proto v1.7.0; field
 * names in the lowerCamelCase that protobufjs and OTLP/JSON use, numbers and
 * types as the protocol fixes them).
 *
 * Why written here rather than generated from `.proto` files: no npm
 * package publishes current ones. The OpenTelemetry JS packages stopped
 * shipping them in 2023 (otlp-grpc-exporter-base 0.38, opentelemetry-proto
 * of early 2023), and their generated module in otlp-transformer, which eddy
 * loaded until then, ended with 0.214.0 and dragged about 20 MB of SDK packages
 * into every install. What other npm packages carry is older (the v1.4.0
 * copies in @elastic/mockotlpserver, without Resource.entityRefs or
 * LogRecord.eventName) or a copy inside an APM agent (dd-trace). The
 * messages of the three signals are stable (OTLP 1.x never renumbers a
 * field); opentelemetry-proto v1.8 to v1.11 added only AnyValue's and
 * KeyValue's string-table indexes, which the protocol reserves for the
 * profiles signal (receivers of other signals ignore them), so they are not
 * here. docs/connectors/otel.md says the same for users.
 *
 * test/connectors/otel/otlp-messages.test.ts keeps this honest: every field
 * that otlp-transformer 0.214.0's generated module decoded is here, with the
 * same number and type; requests captured from the OpenTelemetry exporters
 * and the Collector decode to what that module gave and encode back to the
 * same bytes; and live exporter and Collector requests hold no field
 * unknown here.
 */

/** A field: its number, its type (a scalar, or a message or enum named from the root), and whether it repeats. */
type FieldSpec = readonly [id: number, type: string, rule?: 'repeated'];

function message(fields: Record<string, FieldSpec>, nested?: Record<string, IType | IEnum>, oneofs?: Record<string, string[]>): IType & INamespace {
  const out: IType & INamespace = { fields: {} };
  for (const [name, [id, type, rule]] of Object.entries(fields)) out.fields[name] = rule === undefined ? { id, type } : { id, type, rule };
  if (nested !== undefined) out.nested = nested;
  if (oneofs !== undefined) out.oneofs = Object.fromEntries(Object.entries(oneofs).map(([name, oneof]) => [name, { oneof }]));
  return out;
}

const R = 'repeated';
const COMMON = 'opentelemetry.proto.common.v1.';
const KEY_VALUE = `${COMMON}KeyValue`;
const RESOURCE = 'opentelemetry.proto.resource.v1.Resource';
const SCOPE = `${COMMON}InstrumentationScope`;
const TRACE = 'opentelemetry.proto.trace.v1.';
const LOGS = 'opentelemetry.proto.logs.v1.';
const METRICS = 'opentelemetry.proto.metrics.v1.';

const common: INamespace = {
  nested: {
    AnyValue: message(
      {
        stringValue: [1, 'string'],
        boolValue: [2, 'bool'],
        intValue: [3, 'int64'],
        doubleValue: [4, 'double'],
        arrayValue: [5, `${COMMON}ArrayValue`],
        kvlistValue: [6, `${COMMON}KeyValueList`],
        bytesValue: [7, 'bytes'],
      },
      undefined,
      { value: ['stringValue', 'boolValue', 'intValue', 'doubleValue', 'arrayValue', 'kvlistValue', 'bytesValue'] },
    ),
    ArrayValue: message({ values: [1, `${COMMON}AnyValue`, R] }),
    KeyValueList: message({ values: [1, KEY_VALUE, R] }),
    KeyValue: message({ key: [1, 'string'], value: [2, `${COMMON}AnyValue`] }),
    InstrumentationScope: message({
      name: [1, 'string'],
      version: [2, 'string'],
      attributes: [3, KEY_VALUE, R],
      droppedAttributesCount: [4, 'uint32'],
    }),
    EntityRef: message({
      schemaUrl: [1, 'string'],
      type: [2, 'string'],
      idKeys: [3, 'string', R],
      descriptionKeys: [4, 'string', R],
    }),
  },
};

const resource: INamespace = {
  nested: {
    Resource: message({
      attributes: [1, KEY_VALUE, R],
      droppedAttributesCount: [2, 'uint32'],
      entityRefs: [3, `${COMMON}EntityRef`, R],
    }),
  },
};

const trace: INamespace = {
  nested: {
    TracesData: message({ resourceSpans: [1, `${TRACE}ResourceSpans`, R] }),
    ResourceSpans: message({ resource: [1, RESOURCE], scopeSpans: [2, `${TRACE}ScopeSpans`, R], schemaUrl: [3, 'string'] }),
    ScopeSpans: message({ scope: [1, SCOPE], spans: [2, `${TRACE}Span`, R], schemaUrl: [3, 'string'] }),
    Span: message(
      {
        traceId: [1, 'bytes'],
        spanId: [2, 'bytes'],
        traceState: [3, 'string'],
        parentSpanId: [4, 'bytes'],
        flags: [16, 'fixed32'],
        name: [5, 'string'],
        kind: [6, `${TRACE}Span.SpanKind`],
        startTimeUnixNano: [7, 'fixed64'],
        endTimeUnixNano: [8, 'fixed64'],
        attributes: [9, KEY_VALUE, R],
        droppedAttributesCount: [10, 'uint32'],
        events: [11, `${TRACE}Span.Event`, R],
        droppedEventsCount: [12, 'uint32'],
        links: [13, `${TRACE}Span.Link`, R],
        droppedLinksCount: [14, 'uint32'],
        status: [15, `${TRACE}Status`],
      },
      {
        SpanKind: {
          values: {
            SPAN_KIND_UNSPECIFIED: 0,
            SPAN_KIND_INTERNAL: 1,
            SPAN_KIND_SERVER: 2,
            SPAN_KIND_CLIENT: 3,
            SPAN_KIND_PRODUCER: 4,
            SPAN_KIND_CONSUMER: 5,
          },
        },
        Event: message({
          timeUnixNano: [1, 'fixed64'],
          name: [2, 'string'],
          attributes: [3, KEY_VALUE, R],
          droppedAttributesCount: [4, 'uint32'],
        }),
        Link: message({
          traceId: [1, 'bytes'],
          spanId: [2, 'bytes'],
          traceState: [3, 'string'],
          attributes: [4, KEY_VALUE, R],
          droppedAttributesCount: [5, 'uint32'],
          flags: [6, 'fixed32'],
        }),
      },
    ),
    // number 1 was a deprecated code, reserved by the protocol
    Status: message(
      { message: [2, 'string'], code: [3, `${TRACE}Status.StatusCode`] },
      { StatusCode: { values: { STATUS_CODE_UNSET: 0, STATUS_CODE_OK: 1, STATUS_CODE_ERROR: 2 } } },
    ),
  },
};

const severities: Record<string, number> = { SEVERITY_NUMBER_UNSPECIFIED: 0 };
for (const [i, level] of ['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR', 'FATAL'].entries()) {
  for (let n = 1; n <= 4; n++) severities[`SEVERITY_NUMBER_${level}${n === 1 ? '' : n}`] = i * 4 + n;
}

const logs: INamespace = {
  nested: {
    SeverityNumber: { values: severities },
    LogsData: message({ resourceLogs: [1, `${LOGS}ResourceLogs`, R] }),
    ResourceLogs: message({ resource: [1, RESOURCE], scopeLogs: [2, `${LOGS}ScopeLogs`, R], schemaUrl: [3, 'string'] }),
    ScopeLogs: message({ scope: [1, SCOPE], logRecords: [2, `${LOGS}LogRecord`, R], schemaUrl: [3, 'string'] }),
    // number 4 is reserved by the protocol
    LogRecord: message({
      timeUnixNano: [1, 'fixed64'],
      observedTimeUnixNano: [11, 'fixed64'],
      severityNumber: [2, `${LOGS}SeverityNumber`],
      severityText: [3, 'string'],
      body: [5, `${COMMON}AnyValue`],
      attributes: [6, KEY_VALUE, R],
      droppedAttributesCount: [7, 'uint32'],
      flags: [8, 'fixed32'],
      traceId: [9, 'bytes'],
      spanId: [10, 'bytes'],
      eventName: [12, 'string'],
    }),
  },
};

const EXEMPLAR = `${METRICS}Exemplar`;

/**
 * sum, min and max of the histogram points are `optional` in the protocol
 * (presence tracked): protobufjs keeps any field it read, a 0 included, and
 * writes any field that is set, so plain fields behave the same here.
 */
const metrics: INamespace = {
  nested: {
    AggregationTemporality: {
      values: { AGGREGATION_TEMPORALITY_UNSPECIFIED: 0, AGGREGATION_TEMPORALITY_DELTA: 1, AGGREGATION_TEMPORALITY_CUMULATIVE: 2 },
    },
    MetricsData: message({ resourceMetrics: [1, `${METRICS}ResourceMetrics`, R] }),
    ResourceMetrics: message({ resource: [1, RESOURCE], scopeMetrics: [2, `${METRICS}ScopeMetrics`, R], schemaUrl: [3, 'string'] }),
    ScopeMetrics: message({ scope: [1, SCOPE], metrics: [2, `${METRICS}Metric`, R], schemaUrl: [3, 'string'] }),
    // numbers 4, 6 and 8 held data kinds the protocol has since removed
    Metric: message(
      {
        name: [1, 'string'],
        description: [2, 'string'],
        unit: [3, 'string'],
        gauge: [5, `${METRICS}Gauge`],
        sum: [7, `${METRICS}Sum`],
        histogram: [9, `${METRICS}Histogram`],
        exponentialHistogram: [10, `${METRICS}ExponentialHistogram`],
        summary: [11, `${METRICS}Summary`],
        metadata: [12, KEY_VALUE, R],
      },
      undefined,
      { data: ['gauge', 'sum', 'histogram', 'exponentialHistogram', 'summary'] },
    ),
    Gauge: message({ dataPoints: [1, `${METRICS}NumberDataPoint`, R] }),
    Sum: message({
      dataPoints: [1, `${METRICS}NumberDataPoint`, R],
      aggregationTemporality: [2, `${METRICS}AggregationTemporality`],
      isMonotonic: [3, 'bool'],
    }),
    Histogram: message({ dataPoints: [1, `${METRICS}HistogramDataPoint`, R], aggregationTemporality: [2, `${METRICS}AggregationTemporality`] }),
    ExponentialHistogram: message({
      dataPoints: [1, `${METRICS}ExponentialHistogramDataPoint`, R],
      aggregationTemporality: [2, `${METRICS}AggregationTemporality`],
    }),
    Summary: message({ dataPoints: [1, `${METRICS}SummaryDataPoint`, R] }),
    // number 1 held string labels, since removed
    NumberDataPoint: message(
      {
        attributes: [7, KEY_VALUE, R],
        startTimeUnixNano: [2, 'fixed64'],
        timeUnixNano: [3, 'fixed64'],
        asDouble: [4, 'double'],
        asInt: [6, 'sfixed64'],
        exemplars: [5, EXEMPLAR, R],
        flags: [8, 'uint32'],
      },
      undefined,
      { value: ['asDouble', 'asInt'] },
    ),
    HistogramDataPoint: message({
      attributes: [9, KEY_VALUE, R],
      startTimeUnixNano: [2, 'fixed64'],
      timeUnixNano: [3, 'fixed64'],
      count: [4, 'fixed64'],
      sum: [5, 'double'],
      bucketCounts: [6, 'fixed64', R],
      explicitBounds: [7, 'double', R],
      exemplars: [8, EXEMPLAR, R],
      flags: [10, 'uint32'],
      min: [11, 'double'],
      max: [12, 'double'],
    }),
    ExponentialHistogramDataPoint: message(
      {
        attributes: [1, KEY_VALUE, R],
        startTimeUnixNano: [2, 'fixed64'],
        timeUnixNano: [3, 'fixed64'],
        count: [4, 'fixed64'],
        sum: [5, 'double'],
        scale: [6, 'sint32'],
        zeroCount: [7, 'fixed64'],
        positive: [8, `${METRICS}ExponentialHistogramDataPoint.Buckets`],
        negative: [9, `${METRICS}ExponentialHistogramDataPoint.Buckets`],
        flags: [10, 'uint32'],
        exemplars: [11, EXEMPLAR, R],
        min: [12, 'double'],
        max: [13, 'double'],
        zeroThreshold: [14, 'double'],
      },
      { Buckets: message({ offset: [1, 'sint32'], bucketCounts: [2, 'uint64', R] }) },
    ),
    SummaryDataPoint: message(
      {
        attributes: [7, KEY_VALUE, R],
        startTimeUnixNano: [2, 'fixed64'],
        timeUnixNano: [3, 'fixed64'],
        count: [4, 'fixed64'],
        sum: [5, 'double'],
        quantileValues: [6, `${METRICS}SummaryDataPoint.ValueAtQuantile`, R],
        flags: [8, 'uint32'],
      },
      { ValueAtQuantile: message({ quantile: [1, 'double'], value: [2, 'double'] }) },
    ),
    Exemplar: message(
      {
        filteredAttributes: [7, KEY_VALUE, R],
        timeUnixNano: [2, 'fixed64'],
        asDouble: [3, 'double'],
        asInt: [6, 'sfixed64'],
        spanId: [4, 'bytes'],
        traceId: [5, 'bytes'],
      },
      undefined,
      { value: ['asDouble', 'asInt'] },
    ),
  },
};

/** An Export service's request, response and partial success; `rejected` names the count of items the receiver rejected. */
function service(data: string, resources: string, rejected: string, prefix: string): INamespace {
  return {
    nested: {
      [`Export${prefix}ServiceRequest`]: message({ [resources]: [1, data, R] }),
      [`Export${prefix}ServiceResponse`]: message({ partialSuccess: [1, `Export${prefix}PartialSuccess`] }),
      [`Export${prefix}PartialSuccess`]: message({ [rejected]: [1, 'int64'], errorMessage: [2, 'string'] }),
    },
  };
}

const v1 = (ns: INamespace): INamespace => ({ nested: { v1: ns } });

/** The root of every OTLP message above, resolved (a name that refers to nothing throws here, when the module loads). */
export const otlpRoot = Root.fromJSON({
  nested: {
    opentelemetry: {
      nested: {
        proto: {
          nested: {
            common: v1(common),
            resource: v1(resource),
            trace: v1(trace),
            logs: v1(logs),
            metrics: v1(metrics),
            collector: {
              nested: {
                trace: v1(service(`${TRACE}ResourceSpans`, 'resourceSpans', 'rejectedSpans', 'Trace')),
                logs: v1(service(`${LOGS}ResourceLogs`, 'resourceLogs', 'rejectedLogRecords', 'Logs')),
                metrics: v1(service(`${METRICS}ResourceMetrics`, 'resourceMetrics', 'rejectedDataPoints', 'Metrics')),
              },
            },
          },
        },
      },
    },
  },
}).resolveAll();
