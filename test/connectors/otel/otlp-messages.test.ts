import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { credentials, Server, ServerCredentials } from '@grpc/grpc-js';
import { context, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { SeverityNumber } from '@opentelemetry/api-logs';
import { OTLPLogExporter as GrpcLogExporter } from '@opentelemetry/exporter-logs-otlp-grpc';
import { OTLPLogExporter as ProtoLogExporter } from '@opentelemetry/exporter-logs-otlp-proto';
import { OTLPMetricExporter as GrpcMetricExporter } from '@opentelemetry/exporter-metrics-otlp-grpc';
import { OTLPMetricExporter as ProtoMetricExporter } from '@opentelemetry/exporter-metrics-otlp-proto';
import { OTLPTraceExporter as GrpcTraceExporter } from '@opentelemetry/exporter-trace-otlp-grpc';
import { OTLPTraceExporter as ProtoTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { LoggerProvider, SimpleLogRecordProcessor } from '@opentelemetry/sdk-logs';
import { AggregationType, MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { Enum, Reader, Type } from 'protobufjs';
import { otlpRoot } from '../../../src/connectors/otel/otlp-messages';
import { decodeJsonResources, decodeResources, encodeRequest, resourceMessages, SIGNAL_SPECS, SIGNALS, type Signal } from '../../../src/connectors/otel/otlp';
import { PrivateService } from '../../helpers/private-service';
import { eventually } from '../../helpers/runtime';

/**
 * The OTLP message definitions of otlp-messages.ts, written by hand from
 * the protocol, against what eddy decoded before with the module
 * @opentelemetry/otlp-transformer 0.214.0 generated from opentelemetry-proto
 * (that package is no dependency any more; the fixtures hold what it gave),
 * and against live requests of the OpenTelemetry JS exporters and of an
 * OpenTelemetry Collector.
 */

const FIXTURES = join(__dirname, '../../../../test/fixtures/otel');
const readFixture = (name: string): unknown => JSON.parse(readFileSync(join(FIXTURES, name), 'utf8'));

/** field name -> [number, type, 'repeated'?], per message full name */
type FieldTable = Record<string, Record<string, [number, string, 'repeated'?]>>;

interface Golden {
  source: string;
  signal: Signal;
  bytes: string;
  decoded: Record<string, unknown>[];
  reencoded?: string;
}

/** A field's type as the fixture names it: enums as int32 (their wire type), messages by full name. */
function typeName(type: Type, field: string): string {
  const f = type.fields[field];
  f.resolve();
  if (f.resolvedType instanceof Enum) return 'int32';
  if (f.resolvedType instanceof Type) return f.resolvedType.fullName.slice(1);
  return f.type;
}

/** Where `expected` (the fixture's table) and the definitions differ, one line each. */
function tableDifferences(expected: FieldTable): string[] {
  const out: string[] = [];
  for (const [name, fields] of Object.entries(expected)) {
    const type = otlpRoot.lookup(name);
    if (!(type instanceof Type)) {
      out.push(`${name}: no such message`);
      continue;
    }
    for (const [field, [id, kind, rule]] of Object.entries(fields)) {
      const f = type.fields[field];
      if (f === undefined) out.push(`${name}.${field}: missing`);
      else if (f.id !== id || typeName(type, field) !== kind || f.repeated !== (rule === 'repeated'))
        out.push(`${name}.${field}: ${f.id} ${typeName(type, field)}${f.repeated ? '[]' : ''}, not ${id} ${kind}${rule ? '[]' : ''}`);
    }
  }
  return out;
}

/**
 * Every field on the wire of `bytes` (a `type` message), nested messages
 * included: `message.field` for a field the definitions know,
 * `message#number` for one they do not (which a decode drops without a
 * word).
 */
function wireFields(type: Type, bytes: Uint8Array, out = new Set<string>()): Set<string> {
  const reader = Reader.create(bytes);
  while (reader.pos < reader.len) {
    const tag = reader.uint32();
    const field = type.fieldsById[tag >>> 3];
    out.add(`${type.fullName.slice(1)}${field === undefined ? `#${tag >>> 3}` : `.${field.name}`}`);
    field?.resolve();
    if (field?.resolvedType instanceof Type && (tag & 7) === 2) wireFields(field.resolvedType, reader.bytes(), out);
    else reader.skipType(tag & 7);
  }
  return out;
}

const requestType = (signal: Signal) => SIGNAL_SPECS[signal].request as unknown as Type;

describe('OTLP message definitions (otel otlp-messages.ts)', () => {
  it('know every field that otlp-transformer 0.214.0 decoded, with its number, type and repetition', () => {
    const { fields } = readFixture('otlp-transformer-0.214.0-fields.json') as { fields: FieldTable };
    expect(Object.keys(fields)).to.have.length.above(40);
    expect(tableDifferences(fields)).to.deep.equal([]);
  });

  describe('decode requests as otlp-transformer 0.214.0 did, and encode them back to the same bytes', () => {
    const { requests } = readFixture('otlp-transformer-0.214.0-golden.json') as { requests: Golden[] };
    for (const request of requests) {
      it(`${request.signal} from ${request.source}`, () => {
        const { signal } = request;
        const bytes = Buffer.from(request.bytes, 'base64');
        const decoded = decodeResources(signal, bytes);
        expect(decoded).to.deep.equal(request.decoded);
        const resources = resourceMessages(signal, { [SIGNAL_SPECS[signal].resources]: decoded });
        expect(encodeRequest(signal, resources, false).toString('base64')).to.equal(request.reencoded ?? request.bytes);
        const json = encodeRequest(signal, resources, true);
        expect(json.toString()).to.equal(JSON.stringify({ [SIGNAL_SPECS[signal].resources]: request.decoded }));
        expect(decodeJsonResources(signal, json)).to.deep.equal(request.decoded);
      });
    }
    it('cover every signal from every source, and the every-field requests every field of the table', () => {
      expect(requests.map((r) => `${r.source} ${r.signal}`)).to.include.members(
        ['every-field', 'exporter-grpc', 'collector'].flatMap((source) => SIGNALS.map((s) => `${source} ${s}`)),
      );
      // each field of the 0.214.0 table is on the wire of an every-field request, so the comparison above saw it
      const seen = new Set<string>();
      for (const r of requests.filter((x) => x.source === 'every-field')) wireFields(requestType(r.signal), Buffer.from(r.bytes, 'base64'), seen);
      const { fields } = readFixture('otlp-transformer-0.214.0-fields.json') as { fields: FieldTable };
      // the *Data messages (TracesData, ...) are for files, not the Export requests
      const table = Object.entries(fields)
        .filter(([name]) => !/\.(Traces|Logs|Metrics)Data$/.test(name) && !/Response$|PartialSuccess$/.test(name))
        .flatMap(([name, f]) => Object.keys(f).map((field) => `${name}.${field}`));
      expect(table.filter((f) => !seen.has(f))).to.deep.equal([]);
    });
  });

  it('read a fixed64 above 2^63 from OTLP/JSON exactly (0.214.0 wrapped it to a negative number)', () => {
    const body = { resourceSpans: [{ scopeSpans: [{ spans: [{ name: 'late', startTimeUnixNano: '18446744073709551615' }] }] }] };
    const [resource] = decodeJsonResources('trace', Buffer.from(JSON.stringify(body)));
    expect((resource as { scopeSpans: { spans: { startTimeUnixNano: string }[] }[] }).scopeSpans[0].spans[0].startTimeUnixNano).to.equal(
      '18446744073709551615',
    );
  });

  describe('live requests hold no field unknown to them', function () {
    this.timeout(60000);
    const closers: (() => unknown)[] = [];
    afterEach(async () => {
      for (const close of closers.splice(0).reverse()) await close();
    });

    /** A gRPC server that keeps the raw bytes of every Export request, per signal. */
    async function grpcCapture(captured: Map<Signal, Buffer[]>): Promise<number> {
      const server = new Server();
      for (const signal of SIGNALS) {
        const handler = (call: { request: Buffer }, done: (err: null, response: Buffer) => void) => {
          captured.set(signal, [...(captured.get(signal) ?? []), call.request]);
          done(null, Buffer.alloc(0));
        };
        server.register(
          SIGNAL_SPECS[signal].path,
          handler,
          (b: Buffer) => b,
          (b: Buffer) => b,
          'unary',
        );
      }
      const port = await new Promise<number>((resolve, reject) =>
        server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
      );
      closers.push(() => server.forceShutdown());
      return port;
    }

    /** An HTTP server that keeps the raw bytes of every OTLP/HTTP request, per signal. */
    async function httpCapture(captured: Map<Signal, Buffer[]>): Promise<number> {
      const byPath = Object.fromEntries(SIGNALS.map((s) => [SIGNAL_SPECS[s].httpPath, s]));
      const server: HttpServer = createHttpServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          const signal = byPath[req.url ?? ''];
          captured.set(signal, [...(captured.get(signal) ?? []), Buffer.concat(chunks)]);
          res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
        });
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      closers.push(() => new Promise((r) => server.close(r)));
      return (server.address() as AddressInfo).port;
    }

    /**
     * Spans (with an event, a link, a status, a parent), log records (with
     * an event name and a trace context) and metrics of every kind the SDK
     * makes (sum, up-down sum, histogram, exponential histogram, gauge),
     * exported with the OTLP/gRPC or the OTLP/HTTP protobuf exporters.
     */
    async function exportEverything(kind: 'grpc' | 'proto', port: number): Promise<void> {
      const url = `http://127.0.0.1:${port}`;
      const grpc = { url, credentials: credentials.createInsecure() };
      const resource = resourceFromAttributes({ 'service.name': 'otlp-messages', n: 42, f: 1.25, ok: true, list: ['a', 'b'] });
      const spanExporter = kind === 'grpc' ? new GrpcTraceExporter(grpc) : new ProtoTraceExporter({ url: `${url}/v1/traces` });
      const tracerProvider = new TracerProvider({ resource, spanProcessors: [new SimpleSpanProcessor({ exporter: spanExporter })] });
      const tracer = tracerProvider.getTracer('otlp-messages', '1.0.0', { schemaUrl: 'https://opentelemetry.io/schemas/1.30.0' });
      const parent = tracer.startSpan('parent');
      const inParent = trace.setSpan(context.active(), parent);
      const span = tracer.startSpan(
        'child',
        { kind: SpanKind.CLIENT, attributes: { s: 'x', i: 7, d: 2.5, b: false }, links: [{ context: parent.spanContext(), attributes: { why: 'a' } }] },
        inParent,
      );
      span.addEvent('evt', { at: 1 });
      span.setStatus({ code: SpanStatusCode.ERROR, message: 'broken' });
      span.end();
      parent.end();

      const logExporter = kind === 'grpc' ? new GrpcLogExporter(grpc) : new ProtoLogExporter({ url: `${url}/v1/logs` });
      const loggerProvider = new LoggerProvider({ resource, processors: [new SimpleLogRecordProcessor({ exporter: logExporter })] });
      loggerProvider.getLogger('otlp-messages-logs', '2.0.0').emit({
        body: { nested: { k: [1, 'two'] } },
        severityNumber: SeverityNumber.ERROR,
        severityText: 'ERROR',
        attributes: { a: 'b' },
        eventName: 'app.event',
        context: inParent,
      });

      const metricExporter = kind === 'grpc' ? new GrpcMetricExporter(grpc) : new ProtoMetricExporter({ url: `${url}/v1/metrics` });
      const reader = new PeriodicExportingMetricReader({ exporter: metricExporter, exportIntervalMillis: 600_000 });
      const views = [{ instrumentName: 'exp', aggregation: { type: AggregationType.EXPONENTIAL_HISTOGRAM } }];
      const meterProvider = new MeterProvider({ resource, readers: [reader], views });
      const meter = meterProvider.getMeter('otlp-messages-metrics', '3.0.0');
      meter.createCounter('count', { unit: 'By', description: 'a counter' }).add(5, { k: 'v' });
      meter.createUpDownCounter('updown').add(-3);
      meter.createHistogram('hist').record(12.5);
      const exp = meter.createHistogram('exp');
      for (const v of [0, 0.5, 3, 1000]) exp.record(v);
      meter.createObservableGauge('gauge').addCallback((r) => r.observe(3.75, { g: 1 }));
      await Promise.all([tracerProvider.forceFlush(), loggerProvider.forceFlush(), meterProvider.forceFlush()]);
      await Promise.all([tracerProvider.shutdown(), loggerProvider.shutdown(), meterProvider.shutdown()]);
    }

    /** Every unknown field in the captured requests; each signal must have come, and decode. */
    function unknownIn(captured: Map<Signal, Buffer[]>): string[] {
      const seen = new Set<string>();
      for (const signal of SIGNALS) {
        for (const bytes of captured.get(signal) ?? []) {
          expect(decodeResources(signal, bytes)).to.have.length.above(0);
          wireFields(requestType(signal), bytes, seen);
        }
      }
      return [...seen].filter((f) => f.includes('#'));
    }

    const allSignals = (captured: Map<Signal, Buffer[]>) => SIGNALS.every((s) => (captured.get(s)?.length ?? 0) > 0);

    for (const kind of ['grpc', 'proto'] as const) {
      it(`from the OpenTelemetry JS exporters (${kind === 'grpc' ? 'OTLP/gRPC' : 'OTLP/HTTP protobuf'})`, async () => {
        const captured = new Map<Signal, Buffer[]>();
        const port = kind === 'grpc' ? await grpcCapture(captured) : await httpCapture(captured);
        await exportEverything(kind, port);
        expect(allSignals(captured)).to.equal(true);
        expect(unknownIn(captured)).to.deep.equal([]);
      });
    }

    it('from an OpenTelemetry Collector (a private one, sending on what the JS exporters sent it)', async function () {
      const captured = new Map<Signal, Buffer[]>();
      const port = await grpcCapture(captured);
      const collector = await PrivateService.start(this, 'otelcol', { exportPort: port });
      closers.push(() => collector.dispose());
      await exportEverything('grpc', collector.address.port);
      await eventually(() => allSignals(captured), 30000, 'a request of each signal from the collector');
      expect(unknownIn(captured)).to.deep.equal([]);
    });
  });
});
