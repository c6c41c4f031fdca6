import { expect } from 'chai';
import { gzipSync } from 'node:zlib';
import { Root } from 'protobufjs';
import { createServer, type AddressInfo } from 'node:net';
import { otlpRoot } from '../../../src/connectors/otel/otlp-messages';
import { call, eventually, startRuntime } from '../../helpers/runtime';
import { freePort } from '../net-helpers';
import { EXPORT_PATHS, otelFlow, RawClient, signalOf, type OtelFlow } from './helpers';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- OTLP JSON read field by field in assertions

/** The OTLP messages (their definitions are checked against the OpenTelemetry exporters and the Collector in otlp-messages.test.ts): the test encodes its protobuf requests and reads responses with them. */
const TraceRequest = otlpRoot.lookupType('opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest');
const TraceResponse = otlpRoot.lookupType('opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse');

/** The test's own google.rpc.Status, for reading protobuf error bodies. */
const Status = Root.fromJSON({ nested: { Status: { fields: { code: { type: 'int32', id: 1 }, message: { type: 'string', id: 2 } } } } }).lookupType('Status');

const TRACE_ID = '5b8efff798038103d269b633813fc60c';
const SPAN_ID = 'eee19b7ec3c1b174';

/** One request with one resource of two spans, in the OTLP/JSON mapping (the OTLP/HTTP JSON body). */
const jsonRequest = {
  resourceSpans: [
    {
      resource: { attributes: [{ key: 'service.name', value: { stringValue: 'http-test' } }] },
      scopeSpans: [
        {
          scope: { name: 's', version: '1' },
          spans: [
            {
              traceId: TRACE_ID,
              spanId: SPAN_ID,
              name: 'one',
              kind: 2,
              startTimeUnixNano: '1700000000000000001',
              endTimeUnixNano: '1700000000000000002',
              attributes: [{ key: 'n', value: { intValue: '9007199254740993' } }],
            },
            {
              traceId: TRACE_ID,
              spanId: 'eee19b7ec3c1b175',
              parentSpanId: SPAN_ID,
              name: 'two',
              startTimeUnixNano: '1700000000000000003',
              endTimeUnixNano: '1700000000000000004',
            },
          ],
        },
      ],
    },
  ],
};

/** The same request as protobuf, encoded by the generated messages (ids as bytes). */
function protobufRequest(): Buffer {
  const copy = JSON.parse(JSON.stringify(jsonRequest)) as Json;
  for (const span of copy.resourceSpans[0].scopeSpans[0].spans) {
    for (const key of ['traceId', 'spanId', 'parentSpanId']) if (span[key]) span[key] = Buffer.from(span[key], 'hex');
  }
  return Buffer.from(TraceRequest.encode(TraceRequest.fromObject(copy)).finish());
}

describe('otel onramp over OTLP/HTTP', function () {
  this.timeout(20_000);
  let flow: OtelFlow | undefined;
  let base = '';
  afterEach(async () => {
    await flow?.stop();
    flow = undefined;
  });

  async function start(config: Record<string, unknown> = {}) {
    const httpPort = await freePort();
    flow = await otelFlow({ host: '127.0.0.1', port: 0, http_port: httpPort, ...config });
    base = `http://127.0.0.1:${httpPort}`;
    return flow;
  }
  const post = (path: string, body: Buffer | string, headers: Record<string, string>) => fetch(`${base}${path}`, { method: 'POST', body, headers });
  const bytes = async (res: Response) => Buffer.from(await res.arrayBuffer());

  it('a protobuf body and the same request as JSON make equal events (one per resource, OTLP/JSON mapping); each is answered 200 in its own content type', async () => {
    const flow = await start();
    const proto = await post('/v1/traces', protobufRequest(), { 'content-type': 'application/x-protobuf' });
    expect(proto.status).to.equal(200);
    expect(proto.headers.get('content-type')).to.equal('application/x-protobuf');
    expect(TraceResponse.toObject(TraceResponse.decode(await bytes(proto)))).to.deep.equal({});
    const json = await post('/v1/traces', JSON.stringify(jsonRequest), { 'content-type': 'application/json' });
    expect(json.status).to.equal(200);
    expect(json.headers.get('content-type')).to.equal('application/json');
    expect(await json.json()).to.deep.equal({});
    await eventually(() => flow.collected.out.length === 2, 5000, 'two events');
    const [a, b] = flow.collected.out;
    expect(a.data).to.deep.equal(b.data);
    expect(a.data).to.deep.equal(jsonRequest.resourceSpans[0]);
    expect(signalOf(a)).to.equal('trace');
    expect(a.originUri).to.match(new RegExp(`^svc-otel://127\\.0\\.0\\.1:\\d+/${new URL(base).port}/trace$`));
  });

  it('a JSON body may write 64-bit integers as numbers: one beyond 2^53 stays exact', async () => {
    const flow = await start();
    const text = `{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"${TRACE_ID}","spanId":"${SPAN_ID}","name":"n","startTimeUnixNano":1700000000000000001,"attributes":[{"key":"n","value":{"intValue":9007199254740993}}]}]}]}]}`;
    expect((await post('/v1/traces', text, { 'content-type': 'application/json' })).status).to.equal(200);
    await eventually(() => flow.collected.out.length === 1, 5000, 'the event');
    const span = (flow.collected.out[0].data as Json).scopeSpans[0].spans[0];
    expect(span.startTimeUnixNano).to.equal('1700000000000000001');
    expect(span.attributes[0].value).to.deep.equal({ intValue: '9007199254740993' });
  });

  it('gzip-compressed bodies are taken; an unknown Content-Encoding is 415', async () => {
    const flow = await start();
    const gz = await post('/v1/traces', gzipSync(protobufRequest()), { 'content-type': 'application/x-protobuf', 'content-encoding': 'gzip' });
    expect(gz.status).to.equal(200);
    await eventually(() => flow.collected.out.length === 1, 5000, 'the event');
    const br = await post('/v1/traces', 'x', { 'content-type': 'application/json', 'content-encoding': 'br' });
    expect(br.status).to.equal(415);
    expect(((await br.json()) as Json).message).to.contain('Content-Encoding "br" is not served');
  });

  it('a body that is not OTLP is answered 400 with a google.rpc.Status in the request content type, and goes to err with its bytes; the next request passes', async () => {
    const flow = await start();
    const badProto = await post('/v1/traces', Buffer.from([0x0a, 0x05, 0xff]), { 'content-type': 'application/x-protobuf' });
    expect(badProto.status).to.equal(400);
    const status = Status.toObject(Status.decode(await bytes(badProto))) as { code: number; message: string };
    expect(status.code).to.equal(3);
    expect(status.message).to.match(/^not an OTLP trace export request \(application\/x-protobuf\): /);
    const badJson = await post('/v1/logs', '{"resourceLogs": [', { 'content-type': 'application/json' });
    expect(badJson.status).to.equal(400);
    expect(((await badJson.json()) as Json).message).to.match(/^not an OTLP logs export request \(application\/json\): not JSON/);
    const badId = await post('/v1/traces', JSON.stringify({ resourceSpans: [{ scopeSpans: [{ spans: [{ traceId: 'xyz' }] }] }] }), {
      'content-type': 'application/json',
    });
    expect(badId.status).to.equal(400);
    expect(((await badId.json()) as Json).message).to.contain('resourceSpans[0].scopeSpans[0].spans[0].traceId: not a hex string');
    await eventually(() => flow.collected.err.length === 3, 5000, 'three errors');
    expect((flow.collected.err[0].data as Json).raw).to.match(/^base64:/);
    expect((flow.collected.err[1].data as Json).raw).to.equal('{"resourceLogs": [');
    const good = await post('/v1/traces', JSON.stringify(jsonRequest), { 'content-type': 'application/json' });
    expect(good.status).to.equal(200);
    await eventually(() => flow.collected.out.length === 1, 5000, 'the good event');
  });

  it('requests that can never succeed: 404 for an unknown path, 405 for a GET, 415 for another content type, 413 for a body over 4 MiB', async () => {
    await start();
    const notFound = await post('/v1/profiles', '{}', { 'content-type': 'application/json' });
    expect(notFound.status).to.equal(404);
    expect(((await notFound.json()) as Json).message).to.contain('no OTLP service at /v1/profiles');
    const get = await fetch(`${base}/v1/traces`);
    expect(get.status).to.equal(405);
    expect(get.headers.get('allow')).to.equal('POST');
    const text = await post('/v1/traces', 'hello', { 'content-type': 'text/plain' });
    expect(text.status).to.equal(415);
    expect(((await text.json()) as Json).message).to.contain('Content-Type "text/plain" is not served');
    const big = await post('/v1/traces', Buffer.alloc(4 * 1024 * 1024 + 1), { 'content-type': 'application/x-protobuf' });
    expect(big.status).to.equal(413);
    // a body that grows past the limit once decompressed
    const bomb = await post('/v1/traces', gzipSync(Buffer.alloc(5 * 1024 * 1024)), { 'content-type': 'application/x-protobuf', 'content-encoding': 'gzip' });
    expect(bomb.status).to.equal(413);
    expect(Status.toObject(Status.decode(await bytes(bomb))).message).to.contain('once decompressed');
  });

  it('while the circuit breaker is triggered: 503 with Retry-After (retryable); after the restore the same request is taken', async () => {
    const flow = await start();
    const breaker = flow.runtime.onramp(flow.url)!.runtime.breaker;
    breaker.trigger('/test/holder');
    const refused = await post('/v1/traces', JSON.stringify(jsonRequest), { 'content-type': 'application/json' });
    expect(refused.status).to.equal(503);
    expect(refused.headers.get('retry-after')).to.equal('1');
    expect(((await refused.json()) as Json).code).to.equal(14);
    breaker.restore('/test/holder');
    const taken = await post('/v1/traces', JSON.stringify(jsonRequest), { 'content-type': 'application/json' });
    expect(taken.status).to.equal(200);
    await eventually(() => flow.collected.out.length === 1, 5000, 'one event');
  });

  it('a disabled signal is answered 200 with a partial success counting the rejected items, and reported on err', async () => {
    const flow = await start({ trace: false });
    const answer = await post('/v1/traces', protobufRequest(), { 'content-type': 'application/x-protobuf' });
    expect(answer.status).to.equal(200);
    const response = TraceResponse.toObject(TraceResponse.decode(await bytes(answer)), { longs: Number });
    expect(response.partialSuccess).to.deep.equal({ rejectedSpans: 2, errorMessage: 'this onramp has trace: false; the trace data was dropped' });
    const json = await post('/v1/traces', JSON.stringify(jsonRequest), { 'content-type': 'application/json' });
    expect(((await json.json()) as Json).partialSuccess).to.deep.equal({
      rejectedSpans: 2,
      errorMessage: 'this onramp has trace: false; the trace data was dropped',
    });
    await eventually(() => flow.collected.err.length === 2, 5000, 'two errors');
    expect((flow.collected.err[0].data as Json).error).to.equal('a trace export was dropped: this onramp has trace: false');
    expect(flow.collected.out).to.deep.equal([]);
  });

  it('over gRPC too, a disabled signal is answered with a partial success counting the rejected items', async () => {
    const grpcPort = await freePort();
    flow = await otelFlow({ host: '127.0.0.1', port: grpcPort, trace: false });
    const second = flow;
    const raw = new RawClient(grpcPort);
    try {
      const { error, response } = await raw.export(EXPORT_PATHS.trace, protobufRequest());
      expect(error).to.equal(null);
      expect(TraceResponse.toObject(TraceResponse.decode(response!), { longs: Number }).partialSuccess).to.deep.equal({
        rejectedSpans: 2,
        errorMessage: 'this onramp has trace: false; the trace data was dropped',
      });
      await eventually(() => second.collected.err.length === 1, 5000, 'the error');
    } finally {
      raw.close();
    }
  });

  it('an http_port in use fails the activation with a 400 naming the onramp and the port', async () => {
    const rt = await startRuntime();
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const { port } = blocker.address() as AddressInfo;
    try {
      await call(rt.base, 'POST', '/onramp', { body: { id: 'otlp', type: 'otel', config: { port: 0, http_port: port } } });
      await call(rt.base, 'POST', '/binding', { body: { id: 'b', links: { '/onramp/otlp/{instance}/out': ['/pipeline/system::passthrough/{instance}/in'] } } });
      const answer = await call(rt.base, 'POST', '/binding/b/one');
      expect(answer.status).to.equal(400);
      expect(answer.text).to.match(new RegExp(`onramp 'otlp' \\(otel\\) cannot start: cannot listen on 127\\.0\\.0\\.1:${port} \\(OTLP/HTTP\\): .*EADDRINUSE`));
    } finally {
      await rt.stop();
      await new Promise((r) => blocker.close(r));
    }
  });
});
