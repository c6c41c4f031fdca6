import { ROOT_CONTEXT, SpanKind, SpanStatusCode, ValueType, trace } from '@opentelemetry/api';
import { SeverityNumber } from '@opentelemetry/api-logs';
import { TracerProvider, type ReadableSpan } from '@opentelemetry/sdk-trace';
import { status, type ServiceError } from '@grpc/grpc-js';
import { expect } from 'chai';
import type { EddyEvent } from '../../../src/core/event';
import type { OfframpType } from '../../../src/connectors/connector';
import { RETRY_DELAY_MS } from '../../../src/connectors/otel/onramp';
import { eventually } from '../../helpers/runtime';
import { freePort } from '../net-helpers';
import {
  attributes,
  EXPORT_PATHS,
  exportSpans,
  logging,
  metering,
  NOT_PROTOBUF,
  otelFlow,
  RawClient,
  recordedSpans,
  signalOf,
  statusDetails,
  SUCCESS,
  traceExporter,
  tracing,
  unixNano,
  type OtelFlow,
} from './helpers';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- OTLP JSON read field by field in assertions

const spansOf = (e: EddyEvent): Json[] => (e.data as Json).scopeSpans.flatMap((s: Json) => s.spans);
const spanNames = (events: EddyEvent[]) => events.flatMap(spansOf).map((s) => s.name);

describe('otel onramp with the OpenTelemetry JS SDK and its OTLP/gRPC exporters', function () {
  this.timeout(20000);
  let flow: OtelFlow | undefined;
  let port: number;
  const closers: (() => unknown)[] = [];
  beforeEach(async () => (port = await freePort()));
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
    await flow?.stop();
    flow = undefined;
  });

  const start = async (config: Record<string, unknown> = {}, options = {}) => (flow = await otelFlow({ host: '127.0.0.1', port, ...config }, options));
  const onrampOf = (f: OtelFlow) => f.runtime.onramp(f.url)!.runtime;

  it('traces: an event per resource in the OTLP/JSON mapping (hex ids, exact 64-bit times as strings, AnyValues), meta otel.signal, its origin', async () => {
    const { collected } = await start();
    const t = tracing(port, { 'service.name': 'checkout', 'deployment.tier': 3, 'eddy.blob': new Uint8Array([0, 1, 254, 255]) });
    closers.push(t.shutdown);
    const parent = t.tracer.startSpan('GET /basket', { kind: SpanKind.SERVER });
    const child = t.tracer.startSpan(
      'load basket',
      { kind: SpanKind.CLIENT, attributes: { 'db.rows': -42, ratio: 0.25, cached: false, tags: ['a', 'b'] } },
      trace.setSpan(ROOT_CONTEXT, parent),
    );
    child.addEvent('cache miss', { key: 'basket:7' });
    child.setStatus({ code: SpanStatusCode.ERROR, message: 'boom' });
    child.end();
    parent.end();
    await t.provider.forceFlush();
    await eventually(() => collected.out.length === 2, 10000, 'an event per exported span (one export each)');
    expect(collected.err).to.deep.equal([]);

    const [first, second] = collected.out;
    for (const event of collected.out) {
      expect(event.meta).to.deep.equal({ otel: { signal: 'trace' } });
      expect(event.originUri).to.match(new RegExp(`^svc-otel://127\\.0\\.0\\.1:\\d+/${port}/trace$`));
      const data = event.data as Json;
      expect(attributes(data.resource.attributes)).to.deep.include({
        'service.name': { stringValue: 'checkout' },
        'deployment.tier': { intValue: '3' },
        'eddy.blob': { bytesValue: 'AAH+/w==' },
      });
      expect(data.scopeSpans[0].scope).to.deep.equal({ name: 'eddy-test', version: '1.2.3' });
    }
    const got = spansOf(first)[0];
    expect(spansOf(first)).to.have.length(1);
    expect(spansOf(second).map((s) => s.name)).to.deep.equal(['GET /basket']);
    const sent = child as unknown as ReadableSpan;
    expect(got).to.include({
      name: 'load basket',
      traceId: parent.spanContext().traceId,
      spanId: child.spanContext().spanId,
      parentSpanId: parent.spanContext().spanId,
      kind: 3, // SPAN_KIND_CLIENT: enums are integers
      startTimeUnixNano: unixNano(sent.startTime),
      endTimeUnixNano: unixNano(sent.endTime),
    });
    expect(got.traceId).to.match(/^[0-9a-f]{32}$/);
    expect(got.spanId).to.match(/^[0-9a-f]{16}$/);
    expect(BigInt(got.startTimeUnixNano) > BigInt(Number.MAX_SAFE_INTEGER), 'beyond the exact range of a double, yet exact').to.equal(true);
    expect(got.status).to.deep.equal({ code: 2, message: 'boom' });
    expect(attributes(got.attributes)).to.deep.equal({
      'db.rows': { intValue: '-42' },
      ratio: { doubleValue: 0.25 },
      cached: { boolValue: false },
      tags: { arrayValue: { values: [{ stringValue: 'a' }, { stringValue: 'b' }] } },
    });
    expect(got.events).to.have.length(1);
    expect(got.events[0]).to.include({ name: 'cache miss', timeUnixNano: unixNano(sent.events[0].time) });
    expect(attributes(got.events[0].attributes)).to.deep.equal({ key: { stringValue: 'basket:7' } });
    expect(spansOf(second)[0]).to.not.have.property('parentSpanId');
  });

  it('one export request carrying spans of two resources becomes two events, one per resource, in order', async () => {
    const { collected } = await start();
    const exporter = traceExporter(port);
    closers.push(() => exporter.shutdown());
    const spans = [...recordedSpans({ 'service.name': 'a' }, ['a1', 'a2']), ...recordedSpans({ 'service.name': 'b' }, ['b1'])];
    const result = await exportSpans(exporter, spans);
    expect(result.code, String(result.error)).to.equal(SUCCESS);
    await eventually(() => collected.out.length === 2, 10000, 'two events');
    expect(collected.out.map((e) => attributes((e.data as Json).resource.attributes)['service.name'])).to.deep.equal([
      { stringValue: 'a' },
      { stringValue: 'b' },
    ]);
    expect(collected.out.map((e) => spansOf(e).map((s) => s.name))).to.deep.equal([['a1', 'a2'], ['b1']]);
    // one request: one client connection and port in both origins
    expect(new Set(collected.out.map((e) => e.originUri)).size).to.equal(1);
  });

  it('logs: body, severity, event name, the span they were logged in (hex ids) and exact timestamps', async () => {
    const { collected } = await start();
    const l = logging(port, { 'service.name': 'orders' });
    closers.push(l.shutdown);
    const span = new TracerProvider().getTracer('t').startSpan('the span the record was logged in (never exported)');
    const when = new Date('2026-03-04T05:06:07.089Z');
    l.logger.emit({
      body: { order: 7, items: ['x', 'y'] },
      severityNumber: SeverityNumber.WARN,
      severityText: 'WARN',
      eventName: 'order.failed',
      attributes: { 'http.status': 503 },
      timestamp: when,
      context: trace.setSpan(ROOT_CONTEXT, span),
    });
    await l.provider.forceFlush();
    await eventually(() => collected.out.length === 1, 10000, 'the log event');
    const [event] = collected.out;
    expect(signalOf(event)).to.equal('logs');
    expect(event.originUri).to.match(new RegExp(`/${port}/logs$`));
    const data = event.data as Json;
    expect(attributes(data.resource.attributes)['service.name']).to.deep.equal({ stringValue: 'orders' });
    expect(data.scopeLogs[0].scope).to.deep.equal({ name: 'eddy-test-logs', version: '4.5.6' });
    const [record] = data.scopeLogs[0].logRecords;
    expect(record).to.include({
      severityNumber: 13,
      severityText: 'WARN',
      eventName: 'order.failed',
      timeUnixNano: (BigInt(when.getTime()) * 1_000_000n).toString(),
      traceId: span.spanContext().traceId,
      spanId: span.spanContext().spanId,
    });
    expect(record.body).to.deep.equal({
      kvlistValue: {
        values: [
          { key: 'order', value: { intValue: '7' } },
          { key: 'items', value: { arrayValue: { values: [{ stringValue: 'x' }, { stringValue: 'y' }] } } },
        ],
      },
    });
    expect(attributes(record.attributes)).to.deep.equal({ 'http.status': { intValue: '503' } });
  });

  it('metrics: an integer counter (asInt as a string) and a histogram (counts as strings, bounds as numbers)', async () => {
    const { collected } = await start();
    const m = metering(port, { 'service.name': 'api' });
    closers.push(m.shutdown);
    const requests = m.meter.createCounter('requests', { valueType: ValueType.INT, unit: '1' });
    requests.add(5, { route: '/a' });
    requests.add(2, { route: '/a' });
    const latency = m.meter.createHistogram('latency', { unit: 'ms' });
    latency.record(12);
    latency.record(700);
    await m.flush();
    await eventually(() => collected.out.length >= 1, 10000, 'the metrics event');
    const [event] = collected.out;
    expect(signalOf(event)).to.equal('metrics');
    const metrics: Json[] = (event.data as Json).scopeMetrics.flatMap((s: Json) => s.metrics);
    const counter = metrics.find((x) => x.name === 'requests')!;
    expect(counter.unit).to.equal('1');
    expect(counter.sum).to.include({ aggregationTemporality: 2, isMonotonic: true });
    expect(counter.sum.dataPoints).to.have.length(1);
    expect(counter.sum.dataPoints[0].asInt).to.equal('7');
    expect(attributes(counter.sum.dataPoints[0].attributes)).to.deep.equal({ route: { stringValue: '/a' } });
    expect(counter.sum.dataPoints[0].timeUnixNano).to.match(/^\d{19}$/);
    const histogram = metrics.find((x) => x.name === 'latency')!.histogram;
    const [point] = histogram.dataPoints;
    expect(point).to.include({ count: '2', sum: 712, min: 12, max: 700 });
    expect(point.explicitBounds.every((b: unknown) => typeof b === 'number')).to.equal(true);
    expect(point.bucketCounts.every((c: unknown) => typeof c === 'string')).to.equal(true);
    expect(point.bucketCounts.reduce((n: number, c: string) => n + Number(c), 0)).to.equal(2);
  });

  it('disabled signals (trace: false, metrics: false) are answered with success and dropped, each counted as an error and reported on err; logs still pass', async () => {
    const { collected } = await start({ trace: false, metrics: false });
    const exporter = traceExporter(port);
    closers.push(() => exporter.shutdown());
    const result = await exportSpans(exporter, recordedSpans({ 'service.name': 'x' }, ['dropped']));
    expect(result.code, 'the exporter is told it succeeded').to.equal(SUCCESS);
    const m = metering(port, {});
    closers.push(m.shutdown);
    m.meter.createCounter('dropped').add(1);
    await m.flush();
    const l = logging(port, {});
    closers.push(l.shutdown);
    l.logger.emit({ body: 'kept' });
    await l.provider.forceFlush();
    await eventually(() => collected.out.length === 1 && collected.err.length >= 2, 10000, 'the log event, and the two drops on err');
    expect(collected.out.map(signalOf)).to.deep.equal(['logs']);
    const errors = collected.err.map((e) => (e.data as { error: string }).error);
    expect(errors).to.include('a trace export was dropped: this onramp has trace: false');
    expect(errors).to.include('a metrics export was dropped: this onramp has metrics: false');
    expect(collected.err.map((e) => e.originUri).find((u) => u.endsWith('/trace'))).to.match(new RegExp(`^svc-otel://127\\.0\\.0\\.1:\\d+/${port}/trace$`));
    expect(onrampOf(flow!).counters.error).to.equal(collected.err.length);
  });

  it('logs: false drops log exports the same way, and traces pass', async () => {
    const { collected } = await start({ logs: false });
    const l = logging(port, {});
    closers.push(l.shutdown);
    l.logger.emit({ body: 'dropped' });
    await l.provider.forceFlush();
    const exporter = traceExporter(port);
    closers.push(() => exporter.shutdown());
    expect((await exportSpans(exporter, recordedSpans({}, ['kept']))).code).to.equal(SUCCESS);
    await eventually(() => collected.out.length === 1 && collected.err.length === 1, 10000, 'the span event and the log drop');
    expect(spanNames(collected.out)).to.deep.equal(['kept']);
    expect((collected.err[0].data as { error: string }).error).to.equal('a logs export was dropped: this onramp has logs: false');
    expect(onrampOf(flow!).counters.error).to.equal(1);
  });

  it('a request that is not OTLP is answered INVALID_ARGUMENT and goes to err with its bytes; the next export passes', async () => {
    const { collected } = await start();
    const raw = new RawClient(port);
    closers.push(() => raw.close());
    const { error } = await raw.export(EXPORT_PATHS.trace, NOT_PROTOBUF);
    expect(error?.code).to.equal(status.INVALID_ARGUMENT);
    expect(error?.details).to.match(/^not an OTLP trace export request: /);
    await eventually(() => collected.err.length === 1, 5000, 'the error event');
    const bad = collected.err[0].data as { error: string; raw: string };
    expect(bad.error).to.match(/^not an OTLP trace export request: index out of range/);
    expect(bad.raw).to.equal(`base64:${NOT_PROTOBUF.toString('base64')}`);
    expect(onrampOf(flow!).counters.error).to.equal(1);

    // an empty request is valid OTLP: answered OK, and it has no resource to make an event of
    expect((await raw.export(EXPORT_PATHS.logs, Buffer.alloc(0))).error).to.equal(null);
    const exporter = traceExporter(port);
    closers.push(() => exporter.shutdown());
    expect((await exportSpans(exporter, recordedSpans({}, ['after']))).code).to.equal(SUCCESS);
    await eventually(() => collected.out.length === 1, 10000, 'the good export');
    expect(spanNames(collected.out)).to.deep.equal(['after']);
    expect(collected.err).to.have.length(1);
  });

  it('while the circuit breaker is triggered, exports are refused UNAVAILABLE with a RetryInfo; sent again after restore they arrive, and nothing accepted before is lost', async () => {
    const { collected, runtime, url } = await start();
    const breaker = runtime.onramp(url)!.runtime.breaker;
    const exporter = traceExporter(port);
    closers.push(() => exporter.shutdown());
    expect((await exportSpans(exporter, recordedSpans({}, ['a1', 'a2']))).code).to.equal(SUCCESS);
    await eventually(() => collected.out.length === 1, 10000, 'the first export');

    breaker.trigger('/test/holder');
    const refusedSpans = recordedSpans({}, ['b1']);
    const refused = await exportSpans(exporter, refusedSpans);
    expect(refused.code).to.not.equal(SUCCESS);
    const error = refused.error as ServiceError;
    expect(error.code, error.message).to.equal(status.UNAVAILABLE);
    expect(statusDetails(error.metadata)).to.deep.include({
      code: status.UNAVAILABLE,
      types: ['type.googleapis.com/google.rpc.RetryInfo'],
      retryDelayMs: RETRY_DELAY_MS,
    });
    // the other services refuse too (an empty request is a valid one)
    const raw = new RawClient(port);
    closers.push(() => raw.close());
    for (const path of [EXPORT_PATHS.logs, EXPORT_PATHS.metrics])
      expect((await raw.export(path, Buffer.alloc(0))).error?.code, path).to.equal(status.UNAVAILABLE);
    // refused before it was read: no event was made of it
    expect(collected.out).to.have.length(1);

    breaker.restore('/test/holder');
    // what a retrying exporter does: the same spans again
    expect((await exportSpans(exporter, refusedSpans)).code).to.equal(SUCCESS);
    await eventually(() => collected.out.length === 2, 10000, 'the retried export');
    expect(spanNames(collected.out)).to.deep.equal(['a1', 'a2', 'b1']);
  });

  it('a slow offramp triggers the breaker in the middle of a request: the rest of its resources are held, not lost, and new exports are refused until it restores', async () => {
    const released: (() => void)[] = [];
    let hold = true;
    const delivered: EddyEvent[] = [];
    const slow: OfframpType<{ concurrency: number }> = {
      name: 'slow',
      defaultCodec: 'json',
      autoAck: true,
      configSchema: { type: 'object', additionalProperties: false, properties: { concurrency: { type: 'integer', description: 'in-flight limit' } } },
      create: () => ({
        send: (_payloads, event) =>
          new Promise<void>((resolve) => {
            const done = () => (delivered.push(event), resolve());
            if (hold) released.push(done);
            else done();
          }),
      }),
    };
    const { runtime, url } = await start({}, { types: [slow], sink: { type: 'slow', config: { concurrency: 1 } } });
    const breaker = runtime.onramp(url)!.runtime.breaker;
    const exporter = traceExporter(port);
    closers.push(() => exporter.shutdown());
    const three = [
      ...recordedSpans({ 'service.name': 'r1' }, ['r1']),
      ...recordedSpans({ 'service.name': 'r2' }, ['r2']),
      ...recordedSpans({ 'service.name': 'r3' }, ['r3']),
    ];
    // accepted whole: every resource was handed over, though the first send already filled the sink
    expect((await exportSpans(exporter, three)).code).to.equal(SUCCESS);
    await eventually(() => released.length === 1 && !breaker.isOpen, 5000, 'the first event in flight and the breaker triggered');
    const later = recordedSpans({ 'service.name': 'r4' }, ['r4']);
    const refused = await exportSpans(exporter, later);
    expect((refused.error as ServiceError).code).to.equal(status.UNAVAILABLE);

    hold = false;
    released.splice(0).forEach((release) => release());
    await eventually(() => breaker.isOpen && delivered.length === 3, 10000, 'the held resources delivered and the breaker restored');
    expect((await exportSpans(exporter, later)).code).to.equal(SUCCESS);
    await eventually(() => delivered.length === 4, 10000, 'the retried export');
    expect(spanNames(delivered)).to.deep.equal(['r1', 'r2', 'r3', 'r4']);
  });
});
