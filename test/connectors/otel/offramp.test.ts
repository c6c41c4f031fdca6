import { expect } from 'chai';
import { Server as GrpcServer, ServerCredentials, status, type sendUnaryData, type ServerUnaryCall } from '@grpc/grpc-js';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { eventually, startRuntime, call } from '../../helpers/runtime';
import { makeCert, type TestCert } from '../logvendor/helpers';
import { RETRY_DELAY_MS } from '../../../src/connectors/otel/onramp';
import { reverseDnsName } from '../../../src/connectors/otel/transport';
import { freePort, recordingLogger } from '../net-helpers';
import { EXPORT_PATHS, otelFlow, type OtelFlow } from './helpers';
import { feedToOfframp, FileCollector, spanResource, withoutEmpty, type FeedFlow } from './offramp-helpers';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- OTLP JSON read field by field in assertions

/** A tiny OTLP/HTTP endpoint whose answers the test scripts: each request gets the next answer (the last one repeats). */
class ScriptedEndpoint {
  readonly requests: { path: string; headers: IncomingMessage['headers']; body: Buffer }[] = [];
  private server: Server | undefined;
  port = 0;
  constructor(private readonly answers: { status: number; headers?: Record<string, string>; body?: string | Buffer }[]) {}
  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        this.requests.push({ path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks) });
        const answer = this.answers[Math.min(this.requests.length - 1, this.answers.length - 1)];
        res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers });
        res.end(answer.body ?? '{}');
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }
  /** the OTLP/JSON body of request `i` */
  json(i: number): Json {
    const { headers, body } = this.requests[i];
    return JSON.parse((headers['content-encoding'] === 'gzip' ? gunzipSync(body) : body).toString()) as Json;
  }
  stop(): Promise<void> {
    return new Promise((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

describe('otel offramp', function () {
  this.timeout(30_000);
  let flow: FeedFlow | undefined;
  let collector: FileCollector | undefined;
  let endpoint: ScriptedEndpoint | undefined;
  let receiving: OtelFlow | undefined;
  let cert: TestCert | undefined;
  afterEach(async () => {
    cert?.remove();
    cert = undefined;
    await flow?.stop();
    await receiving?.stop();
    receiving = undefined;
    await collector?.dispose();
    await endpoint?.stop();
    flow = collector = endpoint = undefined;
  });

  for (const protocol of ['grpc', 'http/protobuf', 'http/json'] as const) {
    it(`${protocol}: events batched into Export requests to a real Collector, each acked; the collector's file holds them field by field`, async function () {
      collector = await FileCollector.create(this);
      const port = protocol === 'grpc' ? collector.grpcPort : collector.httpPort;
      flow = await feedToOfframp({ endpoint: `http://127.0.0.1:${port}`, protocol, batch: { size: 3, timeout: '50ms' } });
      const attributes = [
        { key: 'http.route', value: { stringValue: '/a/b' } },
        { key: 'retries', value: { intValue: '9007199254740993' } },
        { key: 'ratio', value: { doubleValue: 0.25 } },
        { key: 'ok', value: { boolValue: true } },
        { key: 'tags', value: { arrayValue: { values: [{ stringValue: 'x' }, { intValue: '2' }] } } },
        { key: 'raw', value: { bytesValue: Buffer.from([0, 1, 254, 255]).toString('base64') } },
      ];
      const sent = [1, 2, 3, 4].map((n) => spanResource(`svc-${n}`, [`op-${n}`], attributes));
      for (const resource of sent) flow.feed.push(resource, { otel: { signal: 'trace' } });
      const log = {
        resource: { attributes: [{ key: 'service.name', value: { stringValue: 'logger' } }] },
        scopeLogs: [
          {
            scope: { name: 'log-scope' },
            logRecords: [
              {
                timeUnixNano: '1700000000000000007',
                observedTimeUnixNano: '1700000000000000008',
                severityNumber: 9,
                severityText: 'INFO',
                body: { stringValue: 'hello' },
                attributes: [{ key: 'k', value: { stringValue: 'v' } }],
                traceId: '5b8efff798038103d269b633813fc60c',
                spanId: 'eee19b7ec3c1b174',
              },
            ],
          },
        ],
      };
      const metric = {
        resource: { attributes: [{ key: 'service.name', value: { stringValue: 'meter' } }] },
        scopeMetrics: [
          {
            metrics: [
              {
                name: 'requests',
                unit: '1',
                sum: {
                  aggregationTemporality: 2,
                  isMonotonic: true,
                  dataPoints: [{ asInt: '42', timeUnixNano: '1700000000000000009', attributes: [{ key: 'code', value: { intValue: '200' } }] }],
                },
              },
              {
                name: 'latency',
                histogram: {
                  aggregationTemporality: 1,
                  dataPoints: [{ count: '3', sum: 1.5, bucketCounts: ['1', '2'], explicitBounds: [0.5], timeUnixNano: '1700000000000000010' }],
                },
              },
            ],
          },
        ],
      };
      // no meta: the signal is read from the data
      flow.feed.push(log);
      flow.feed.push(metric);
      await eventually(() => flow!.feed.acks.length === 6, 20_000, 'six acks');
      expect(flow.feed.fails).to.deep.equal([]);

      await eventually(
        () =>
          collector!.resources('resourceSpans').length === 4 &&
          collector!.resources('resourceLogs').length === 1 &&
          collector!.resources('resourceMetrics').length === 1,
        10_000,
        'everything in the file',
      );
      // batch size 3: the four span resources came in two requests (3 + 1)
      expect(
        collector
          .requests()
          .filter((r) => r.resourceSpans)
          .map((r) => r.resourceSpans.length),
      ).to.deep.equal([3, 1]);
      const spans = collector.resources('resourceSpans');
      expect(spans.map(withoutEmpty)).to.deep.equal(sent.map(withoutEmpty));
      expect(spans[0].scopeSpans[0].spans[0].attributes.find((a: Json) => a.key === 'retries').value).to.deep.equal({ intValue: '9007199254740993' });
      expect(withoutEmpty(collector.resources('resourceLogs')[0])).to.deep.equal(withoutEmpty(log));
      expect(withoutEmpty(collector.resources('resourceMetrics')[0])).to.deep.equal(withoutEmpty(metric));
    });
  }

  for (const protocol of ['grpc', 'http/protobuf'] as const) {
    it(`${protocol} over TLS to a Collector serving TLS: tls.ca verifies it; without it the system CAs refuse the self-signed certificate and the event fails`, async function () {
      cert = makeCert();
      collector = await FileCollector.create(this, { tls: { cert: cert.cert, key: cert.key } });
      const port = protocol === 'grpc' ? collector.grpcPort : collector.httpPort;
      flow = await feedToOfframp({ endpoint: `https://127.0.0.1:${port}`, protocol, batch: { size: 1 }, tls: { ca: cert.certFile } });
      flow.feed.push(spanResource('secret', ['over tls']));
      await eventually(() => flow!.feed.acks.length === 1, 10_000, 'the ack');
      await eventually(() => collector!.resources('resourceSpans').length === 1, 10_000, 'the span in the file');
      expect(collector.resources('resourceSpans')[0].scopeSpans[0].spans[0].name).to.equal('over tls');
      await flow.stop();

      flow = await feedToOfframp({ endpoint: `https://127.0.0.1:${port}`, protocol, batch: { size: 1 }, retry: { attempts: 2, backoff: { initial: '10ms' } } });
      flow.feed.push(spanResource('secret', ['untrusted']));
      await eventually(() => flow!.feed.fails.length === 1, 10_000, 'the fail');
      expect(flow.feed.fails[0].error).to.match(protocol === 'grpc' ? /gRPC UNAVAILABLE/ : /the receiver refused .*certificate/i);
      expect(collector.resources('resourceSpans')).to.have.length(1);
    });
  }

  it('a collector that is down: requests are retried with back-off while the breaker holds the source; once it listens every event is delivered and acked once', async function () {
    collector = await FileCollector.create(this, { start: false });
    const logger = recordingLogger();
    flow = await feedToOfframp(
      {
        endpoint: `http://127.0.0.1:${collector.grpcPort}`,
        protocol: 'grpc',
        batch: { size: 2, timeout: '20ms' },
        retry: { attempts: 1000, backoff: { initial: '20ms', max: '100ms' } },
      },
      logger,
    );
    flow.feed.push(spanResource('down-then-up', ['a']));
    flow.feed.push(spanResource('down-then-up', ['b']));
    const retries = () => logger.lines.filter((l) => /attempt \d+ of 1000 to send 2 trace resources failed \(gRPC UNAVAILABLE/.test(l)).length;
    await eventually(() => retries() >= 2, 10_000, 'two failed attempts');
    expect(flow.gateOpen(), 'the source is paused while the request waits to be retried').to.equal(false);
    expect(flow.feed.acks).to.deep.equal([]);

    await collector.start();
    await eventually(() => flow!.feed.acks.length === 2, 20_000, 'both acked');
    expect(flow.feed.fails).to.deep.equal([]);
    await eventually(() => flow!.gateOpen(), 5_000, 'the source reading again');
    await eventually(() => collector!.resources('resourceSpans').length === 2, 10_000, 'both in the file');
    expect(collector.resources('resourceSpans').map((r) => r.scopeSpans[0].spans[0].name)).to.deep.equal(['a', 'b']);
    expect(collector.requests()).to.have.length(1);
  });

  it('HTTP 503 with Retry-After: the request waits what the receiver asked (not the back-off), is sent again, and its events are acked on the 200', async () => {
    endpoint = new ScriptedEndpoint([{ status: 503, headers: { 'retry-after': '1' }, body: '{"code":14,"message":"busy"}' }, { status: 200 }]);
    await endpoint.start();
    const logger = recordingLogger();
    flow = await feedToOfframp(
      { endpoint: `http://127.0.0.1:${endpoint.port}`, protocol: 'http/json', batch: { size: 1 }, retry: { backoff: { initial: '10ms' } } },
      logger,
    );
    flow.feed.push(spanResource('busy', ['x']));
    await eventually(() => flow!.feed.acks.length === 1, 10_000, 'the ack');
    expect(flow.feed.fails).to.deep.equal([]);
    expect(endpoint.requests.map((r) => r.path)).to.deep.equal(['/v1/traces', '/v1/traces']);
    expect(endpoint.json(1)).to.deep.equal(endpoint.json(0));
    expect(endpoint.requests[0].headers['content-type']).to.equal('application/json');
    expect(logger.lines.filter((l) => l.includes('attempt 1 of 10 to send 1 trace resource failed (HTTP 503: busy); retrying in 1000 ms'))).to.have.length(1);
  });

  it('gRPC UNAVAILABLE with a RetryInfo (an eddy otel onramp whose breaker is triggered): the request waits the delay the receiver asked, then is delivered', async () => {
    const port = await freePort();
    receiving = await otelFlow({ host: '127.0.0.1', port });
    const breaker = receiving.runtime.onramp(receiving.url)!.runtime.breaker;
    breaker.trigger('/test/holder');
    const logger = recordingLogger();
    flow = await feedToOfframp({ endpoint: `http://127.0.0.1:${port}`, protocol: 'grpc', batch: { size: 1 }, retry: { backoff: { initial: '10ms' } } }, logger);
    flow.feed.push(spanResource('throttled', ['x']));
    await eventually(() => logger.lines.some((l) => l.includes('failed (gRPC UNAVAILABLE')), 10_000, 'a refusal');
    expect(logger.lines.find((l) => l.includes('failed (gRPC UNAVAILABLE'))).to.match(new RegExp(`retrying in ${RETRY_DELAY_MS} ms$`));
    breaker.restore('/test/holder');
    await eventually(() => flow!.feed.acks.length === 1, 10_000, 'the ack');
    expect((receiving.collected.out[0].data as Json).scopeSpans[0].spans[0].name).to.equal('x');
  });

  it('a non-retryable answer (HTTP 400) fails the events of the request at once, naming the answer; nothing is sent again', async () => {
    endpoint = new ScriptedEndpoint([{ status: 400, body: '{"code":3,"message":"bad span"}' }, { status: 200 }]);
    await endpoint.start();
    flow = await feedToOfframp({
      endpoint: `http://127.0.0.1:${endpoint.port}`,
      protocol: 'http/protobuf',
      batch: { size: 2 },
      headers: { Authorization: 'Bearer t0k3n' },
    });
    flow.feed.push(spanResource('refused', ['x']));
    flow.feed.push(spanResource('refused', ['y']));
    await eventually(() => flow!.feed.fails.length === 2, 10_000, 'two fails');
    expect(flow.feed.fails.map((f) => f.seq)).to.deep.equal([1, 2]);
    expect(flow.feed.fails[0].error).to.equal('the receiver refused 2 trace resources: HTTP 400: bad span');
    expect(flow.feed.acks).to.deep.equal([]);
    expect(endpoint.requests).to.have.length(1);
    expect(endpoint.requests[0].headers['content-type']).to.equal('application/x-protobuf');
    expect(endpoint.requests[0].headers.authorization).to.equal('Bearer t0k3n');
    expect(endpoint.requests[0].headers['content-encoding'], 'gzip by default').to.equal('gzip');
  });

  it('a non-retryable gRPC status (PERMISSION_DENIED) fails the events at once, naming it; nothing is sent again', async () => {
    const calls: Buffer[] = [];
    const tenants: unknown[] = [];
    const server = new GrpcServer();
    const raw = (b: Buffer) => b;
    server.addService(
      {
        Export: {
          path: EXPORT_PATHS.trace,
          requestStream: false,
          responseStream: false,
          requestSerialize: raw,
          requestDeserialize: raw,
          responseSerialize: raw,
          responseDeserialize: raw,
        },
      },
      {
        Export: (call: ServerUnaryCall<Buffer, Buffer>, callback: sendUnaryData<Buffer>) => {
          calls.push(call.request);
          tenants.push(...call.metadata.get('x-tenant'));
          callback({ code: status.PERMISSION_DENIED, details: 'no tenant' });
        },
      },
    );
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
    );
    try {
      flow = await feedToOfframp({ endpoint: `http://127.0.0.1:${port}`, protocol: 'grpc', batch: { size: 1 }, headers: { 'x-tenant': 'none' } });
      flow.feed.push(spanResource('denied', ['x']));
      await eventually(() => flow!.feed.fails.length === 1, 10_000, 'the fail');
      expect(flow.feed.fails[0].error).to.equal('the receiver refused 1 trace resource: gRPC PERMISSION_DENIED: no tenant');
      expect(calls).to.have.length(1);
      expect(tenants, 'headers are sent as gRPC metadata').to.deep.equal(['none']);
    } finally {
      server.forceShutdown();
    }
  });

  it('retries wait initial x factor^n up to max, and end after retry.attempts: the events are failed with the last error', async () => {
    endpoint = new ScriptedEndpoint([{ status: 502 }]);
    await endpoint.start();
    const logger = recordingLogger();
    flow = await feedToOfframp(
      {
        endpoint: `http://127.0.0.1:${endpoint.port}`,
        protocol: 'http/json',
        batch: { size: 1 },
        retry: { attempts: 6, backoff: { initial: '5ms', max: '30ms', factor: 3, jitter: false } },
      },
      logger,
    );
    flow.feed.push(spanResource('gateway', ['x']));
    await eventually(() => flow!.feed.fails.length === 1, 10_000, 'the fail');
    expect(flow.feed.fails[0].error).to.equal('1 trace resource not delivered after 6 attempts: HTTP 502');
    expect(endpoint.requests).to.have.length(6);
    // the back-off: initial, times the factor, capped at max
    const waits = logger.lines.flatMap((l) => /retrying in (\d+) ms$/.exec(l)?.[1] ?? []).map(Number);
    expect(waits).to.deep.equal([5, 15, 30, 30, 30]);
    await eventually(() => flow!.gateOpen(), 5_000, 'the source reading again');
  });

  it('a partial success is acked (the receiver took the request) and logged with what was rejected', async () => {
    endpoint = new ScriptedEndpoint([{ status: 200, body: '{"partialSuccess":{"rejectedSpans":"1","errorMessage":"span too old"}}' }]);
    await endpoint.start();
    const logger = recordingLogger();
    flow = await feedToOfframp({ endpoint: `http://127.0.0.1:${endpoint.port}`, protocol: 'http/json', batch: { size: 1 } }, logger);
    flow.feed.push(spanResource('partial', ['x', 'y']));
    await eventually(() => flow!.feed.acks.length === 1, 10_000, 'the ack');
    expect(logger.lines.some((l) => l.includes('the receiver took 1 trace resource but rejected 1 spans: span too old'))).to.equal(true);
  });

  it('a batch event (generic::batch) sends each member in the request of its signal; every member is acked', async () => {
    endpoint = new ScriptedEndpoint([{ status: 200 }]);
    await endpoint.start();
    flow = await feedToOfframp({ endpoint: `http://127.0.0.1:${endpoint.port}`, protocol: 'http/json', batch: { size: 10, timeout: '20ms' } }, undefined, {
      id: 'batch',
      type: 'generic::batch',
      config: { count: 3 },
    });
    flow.feed.push(spanResource('batched', ['a']));
    flow.feed.push({ scopeLogs: [{ logRecords: [{ body: { stringValue: 'b' } }] }] });
    flow.feed.push(spanResource('batched', ['c']));
    await eventually(() => flow!.feed.acks.length === 3, 10_000, 'three acks');
    const bodies = endpoint.requests.map((r, i) => [r.path, endpoint!.json(i)] as const);
    const traces = bodies.find(([path]) => path === '/v1/traces')![1];
    const logs = bodies.find(([path]) => path === '/v1/logs')![1];
    expect(endpoint.requests).to.have.length(2);
    expect(traces.resourceSpans.map((r: Json) => r.scopeSpans[0].spans[0].name)).to.deep.equal(['a', 'c']);
    expect(logs.resourceLogs[0].scopeLogs[0].logRecords[0].body).to.deep.equal({ stringValue: 'b' });
  });

  it('an event that is not OTLP fails alone, naming why; the events beside it are sent', async () => {
    endpoint = new ScriptedEndpoint([{ status: 200 }]);
    await endpoint.start();
    flow = await feedToOfframp({ endpoint: `http://127.0.0.1:${endpoint.port}`, protocol: 'http/json', batch: { size: 2 }, compression: 'none' });
    flow.feed.push({ hello: 'world' });
    flow.feed.push(spanResource('good', ['x']), { otel: { signal: 'logs' } });
    flow.feed.push({ scopeSpans: [{ spans: [{ traceId: 'not hex', name: 'x' }] }] });
    flow.feed.push({ scopeSpans: [{ spans: [{ startTimeUnixNano: 'noon', name: 'x' }] }] });
    flow.feed.push(spanResource('good', ['y']));
    flow.feed.push(spanResource('good', ['z']));
    await eventually(() => flow!.feed.acks.length + flow!.feed.fails.length === 6, 10_000, 'six outcomes');
    expect(flow.feed.acks).to.deep.equal([5, 6]);
    expect(flow.feed.fails.map((f) => f.error)).to.deep.equal([
      'not an OTLP resource: cannot tell the signal: the data has no scopeSpans, scopeLogs or scopeMetrics (nor resourceSpans, resourceLogs, resourceMetrics) and meta otel.signal is not set',
      'not an OTLP resource: meta otel.signal says logs but the data holds trace',
      'not an OTLP resource: resourceSpans[0].scopeSpans[0].spans[0].traceId: not a hex string: "not hex"',
      'not an OTLP resource: resourceSpans[0].scopeSpans[0].spans[0].startTimeUnixNano: not an integer: "noon"',
    ]);
    expect(endpoint.requests).to.have.length(1);
    expect(endpoint.json(0).resourceSpans.map((r: Json) => r.scopeSpans[0].spans[0].name)).to.deep.equal(['y', 'z']);
  });

  it('refuses bad config at publish time, naming the field', async () => {
    const rt = await startRuntime();
    try {
      let n = 0;
      const bad = async (config: Record<string, unknown>) => {
        const answer = await call(rt.base, 'POST', '/offramp', { body: { id: `bad_${'abcdefghij'[n++]}`, type: 'otel', config } });
        expect(answer.status, JSON.stringify(config)).to.equal(400);
        return answer.text;
      };
      expect(await bad({ protocol: 'grpc' })).to.contain('endpoint');
      expect(await bad({ endpoint: 'http://x:1', protocol: 'http' })).to.contain('protocol');
      expect(await bad({ endpoint: 'ftp://x:1' })).to.contain('endpoint: the scheme must be http or https');
      expect(await bad({ endpoint: 'http://x:1/v1', protocol: 'grpc' })).to.contain('a gRPC endpoint is a host and port, without a path');
      expect(await bad({ endpoint: 'https://x:1', tls: { ca: '/nonexistent/ca.pem' } })).to.contain('tls.ca: cannot read /nonexistent/ca.pem');
      expect(await bad({ endpoint: 'http://x:1', tls: { ca: '/etc/hostname' } })).to.contain('tls: given for an http:// endpoint');
      expect(await bad({ endpoint: 'http://x:1', retry: { backoff: { initial: '1m', max: '1s' } } })).to.contain('retry.backoff.max');
    } finally {
      await rt.stop();
    }
  });
});

describe('otel offramp: the TLS name of an IP endpoint (Node 26 refuses an IP as the server name)', () => {
  it('is the reverse DNS name of the address', () => {
    expect(reverseDnsName('127.0.0.1')).to.equal('1.0.0.127.in-addr.arpa');
    expect(reverseDnsName('::1')).to.equal(`1${'.0'.repeat(31)}.ip6.arpa`);
    expect(reverseDnsName('2001:db8::567:89ab')).to.equal('b.a.9.8.7.6.5.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa');
    expect(reverseDnsName('::ffff:10.0.0.1')).to.equal(reverseDnsName('::ffff:a00:1'));
  });
});
