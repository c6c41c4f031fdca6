import { expect } from 'chai';
import { credentials } from '@grpc/grpc-js';
import { context, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { SeverityNumber } from '@opentelemetry/api-logs';
import { OTLPLogExporter as GrpcLogExporter } from '@opentelemetry/exporter-logs-otlp-grpc';
import { OTLPLogExporter as JsonLogExporter } from '@opentelemetry/exporter-logs-otlp-http';
import { OTLPLogExporter as ProtoLogExporter } from '@opentelemetry/exporter-logs-otlp-proto';
import { OTLPMetricExporter as GrpcMetricExporter } from '@opentelemetry/exporter-metrics-otlp-grpc';
import { OTLPMetricExporter as JsonMetricExporter } from '@opentelemetry/exporter-metrics-otlp-http';
import { OTLPMetricExporter as ProtoMetricExporter } from '@opentelemetry/exporter-metrics-otlp-proto';
import { OTLPTraceExporter as GrpcTraceExporter } from '@opentelemetry/exporter-trace-otlp-grpc';
import { OTLPTraceExporter as JsonTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtoTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { LoggerProvider, SimpleLogRecordProcessor } from '@opentelemetry/sdk-logs';
import { MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { createLogger } from '../../../src/core/logger';
import { Runtime } from '../../../src/runtime/runtime';
import { eventually } from '../../helpers/runtime';
import { collector as collectingType, Collected, freePort } from '../net-helpers';
import { attributes, signalOf } from './helpers';
import { FileCollector, withoutEmpty } from './offramp-helpers';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- OTLP JSON read field by field in assertions
type Transport = 'grpc' | 'http/protobuf' | 'http/json';
const TRANSPORTS: Transport[] = ['grpc', 'http/protobuf', 'http/json'];

/** The official OpenTelemetry JS SDKs with the exporter of `transport`, sending to eddy's onramp (its gRPC or its HTTP port). */
function sdk(transport: Transport, ports: { grpc: number; http: number }, service: string) {
  const grpc = { url: `http://127.0.0.1:${ports.grpc}`, credentials: credentials.createInsecure() };
  const http = (path: string) => ({ url: `http://127.0.0.1:${ports.http}${path}` });
  const traceExporter =
    transport === 'grpc'
      ? new GrpcTraceExporter(grpc)
      : transport === 'http/protobuf'
        ? new ProtoTraceExporter(http('/v1/traces'))
        : new JsonTraceExporter(http('/v1/traces'));
  const logExporter =
    transport === 'grpc'
      ? new GrpcLogExporter(grpc)
      : transport === 'http/protobuf'
        ? new ProtoLogExporter(http('/v1/logs'))
        : new JsonLogExporter(http('/v1/logs'));
  const metricExporter =
    transport === 'grpc'
      ? new GrpcMetricExporter(grpc)
      : transport === 'http/protobuf'
        ? new ProtoMetricExporter(http('/v1/metrics'))
        : new JsonMetricExporter(http('/v1/metrics'));
  const resource = resourceFromAttributes({ 'service.name': service, 'deployment.environment': 'test', 'host.cores': 2 });
  const tracing = new TracerProvider({ resource, spanProcessors: [new SimpleSpanProcessor({ exporter: traceExporter })] });
  const logging = new LoggerProvider({ resource, processors: [new SimpleLogRecordProcessor({ exporter: logExporter })] });
  const reader = new PeriodicExportingMetricReader({ exporter: metricExporter, exportIntervalMillis: 600_000 });
  const metering = new MeterProvider({ resource, readers: [reader] });
  return {
    tracer: tracing.getTracer('forward-test', '1.0.0'),
    logger: logging.getLogger('forward-test-logs', '2.0.0'),
    meter: metering.getMeter('forward-test-metrics', '3.0.0'),
    flush: () => Promise.all([tracing.forceFlush(), logging.forceFlush(), metering.forceFlush()]),
    shutdown: () => Promise.all([tracing.shutdown(), logging.shutdown(), metering.shutdown()]),
  };
}

/**
 * The proof: the official OpenTelemetry JS exporters (gRPC,
 * HTTP/protobuf and HTTP/JSON) -> eddy's otel onramp (gRPC and HTTP) ->
 * a pipeline -> eddy's otel offramp (each protocol) -> a real
 * OpenTelemetry Collector -> its file exporter. Every span, log record and
 * metric arrives with its attributes: the collector's file is compared
 * field by field with what the onramp received, and with what the SDK made.
 */
describe('otel forwarding: OpenTelemetry SDK exporters -> eddy otel onramp -> otel offramp -> a real Collector -> its file', function () {
  this.timeout(60_000);
  let runtime: Runtime | undefined;
  let collector: FileCollector | undefined;
  const closers: (() => unknown)[] = [];
  afterEach(async () => {
    for (const close of closers.splice(0)) await close();
    await runtime?.shutdown();
    await collector?.dispose();
    runtime = collector = undefined;
  });

  for (const protocol of TRANSPORTS) {
    it(`offramp over ${protocol}: spans, log records and metrics from every SDK exporter reach the collector's file unchanged`, async function () {
      collector = await FileCollector.create(this);
      const ports = { grpc: await freePort(), http: await freePort() };
      const seen = new Collected();
      runtime = new Runtime({ logger: createLogger('silent') }).registerOfframp(collectingType(seen));
      await runtime.start();
      const target = protocol === 'grpc' ? collector.grpcPort : collector.httpPort;
      runtime.publish('onramp', { id: 'otlp', type: 'otel', config: { port: ports.grpc, http_port: ports.http } });
      runtime.publish('pipeline', {
        id: 'p',
        interface: { inputs: ['in'], outputs: ['out'] },
        nodes: [{ id: 'pass', type: 'passthrough' }],
        links: { in: ['pass'], pass: ['out'] },
      });
      runtime.publish('offramp', { id: 'fwd', type: 'otel', config: { endpoint: `http://127.0.0.1:${target}`, protocol, batch: { timeout: '20ms' } } });
      runtime.publish('offramp', { id: 'seen', type: 'collect', config: { name: 'out' } });
      runtime.publish('binding', {
        id: 'flow',
        links: {
          '/onramp/otlp/{instance}/out': ['/pipeline/p/{instance}/in'],
          '/pipeline/p/{instance}/out': ['/offramp/fwd/{instance}/in', '/offramp/seen/{instance}/in'],
        },
      });
      await runtime.activate('binding', 'flow', 'main');

      const made: Record<Transport, { traceId: string; spanId: string; parentSpanId: string }> = {} as never;
      for (const transport of TRANSPORTS) {
        const client = sdk(transport, ports, `fwd-${transport}`);
        closers.push(client.shutdown);
        const parent = client.tracer.startSpan('parent', {
          attributes: { 'http.method': 'GET', 'http.status_code': 200, ratio: 0.5, ok: true, tags: ['a', 'b'] },
        });
        parent.addEvent('checkpoint', { step: 3 });
        parent.setStatus({ code: SpanStatusCode.ERROR, message: 'failed on purpose' });
        const child = client.tracer.startSpan('child', { kind: SpanKind.PRODUCER }, trace.setSpan(context.active(), parent));
        child.end();
        parent.end();
        made[transport] = { traceId: parent.spanContext().traceId, spanId: parent.spanContext().spanId, parentSpanId: child.spanContext().spanId };
        client.logger.emit({
          body: `logged over ${transport}`,
          severityNumber: SeverityNumber.WARN,
          severityText: 'WARN',
          attributes: { 'user.id': 42, path: '/x' },
        });
        client.meter.createCounter('requests').add(7, { route: '/a' });
        client.meter.createHistogram('latency', { unit: 'ms' }).record(12.5, { route: '/a' });
        await client.flush();
      }

      // each export is one resource, one event: two spans' exports (one per span), a log and a metrics export per transport
      const ofSignal = (signal: string) => seen.out.filter((e) => signalOf(e) === signal);
      await eventually(() => ofSignal('trace').length === 6 && ofSignal('logs').length === 3 && ofSignal('metrics').length === 3, 20_000, 'the onramp events');
      const list = { trace: 'resourceSpans', logs: 'resourceLogs', metrics: 'resourceMetrics' } as const;
      await eventually(
        () => (['trace', 'logs', 'metrics'] as const).every((s) => collector!.resources(list[s]).length === ofSignal(s).length),
        20_000,
        'every resource in the collector file',
      );
      // field by field: what the collector wrote is what the onramp received, resource attributes, scopes, spans, records and points
      for (const signal of ['trace', 'logs', 'metrics'] as const) {
        expect(collector.resources(list[signal]).map(withoutEmpty), signal).to.have.deep.members(ofSignal(signal).map((e) => withoutEmpty(e.data)));
      }

      // and it is what the SDK made
      for (const transport of TRANSPORTS) {
        const mine = (resources: Json[]) =>
          resources.filter((r) => (attributes(r.resource.attributes)['service.name'] as Json | undefined)?.stringValue === `fwd-${transport}`);
        const spans = mine(collector.resources('resourceSpans')).flatMap((r) => r.scopeSpans.flatMap((s: Json) => s.spans));
        expect(mine(collector.resources('resourceSpans'))[0].resource.attributes).to.deep.include.members([
          { key: 'deployment.environment', value: { stringValue: 'test' } },
          { key: 'host.cores', value: { intValue: '2' } },
        ]);
        const parent = spans.find((s) => s.name === 'parent');
        const child = spans.find((s) => s.name === 'child');
        expect(parent, transport).to.include({ traceId: made[transport].traceId, spanId: made[transport].spanId });
        expect(child).to.include({ traceId: made[transport].traceId, parentSpanId: made[transport].spanId, spanId: made[transport].parentSpanId, kind: 4 });
        expect(attributes(parent.attributes)).to.deep.equal({
          'http.method': { stringValue: 'GET' },
          'http.status_code': { intValue: '200' },
          ratio: { doubleValue: 0.5 },
          ok: { boolValue: true },
          tags: { arrayValue: { values: [{ stringValue: 'a' }, { stringValue: 'b' }] } },
        });
        expect(parent.events.map((e: Json) => [e.name, attributes(e.attributes)])).to.deep.equal([['checkpoint', { step: { intValue: '3' } }]]);
        expect(parent.status).to.deep.equal({ code: 2, message: 'failed on purpose' });
        const scope = mine(collector.resources('resourceSpans'))[0].scopeSpans[0].scope;
        expect(scope).to.deep.equal({ name: 'forward-test', version: '1.0.0' });

        const record = mine(collector.resources('resourceLogs'))[0].scopeLogs[0].logRecords[0];
        expect(record).to.deep.include({ body: { stringValue: `logged over ${transport}` }, severityNumber: 13, severityText: 'WARN' });
        expect(attributes(record.attributes)).to.deep.equal({ 'user.id': { intValue: '42' }, path: { stringValue: '/x' } });

        const metrics = mine(collector.resources('resourceMetrics'))[0].scopeMetrics[0].metrics as Json[];
        const counter = metrics.find((m) => m.name === 'requests')!;
        expect(counter.sum).to.deep.include({ isMonotonic: true, aggregationTemporality: 2 });
        expect(counter.sum.dataPoints[0].asDouble).to.equal(7);
        expect(attributes(counter.sum.dataPoints[0].attributes)).to.deep.equal({ route: { stringValue: '/a' } });
        const histogram = metrics.find((m) => m.name === 'latency')!;
        expect(histogram.unit).to.equal('ms');
        expect(histogram.histogram.dataPoints[0]).to.deep.include({ count: '1', sum: 12.5, min: 12.5, max: 12.5 });
      }
    });
  }
});
