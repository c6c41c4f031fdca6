import { expect } from 'chai';
import { createLogger } from '../../../src/core/logger';
import type { EddyEvent } from '../../../src/core/event';
import type { Sink } from '../../../src/connectors/connector';
import { endpointOf, keyHeader, logvendorOfframp, MAX_BODY_BYTES, REGION_ENDPOINTS, type LogvendorConfig } from '../../../src/connectors/logvendor/offramp';
import { Runtime } from '../../../src/runtime/runtime';
import { eventually } from '../../helpers/runtime';
import { probeOnramp, registriesWith, type ProbeLog } from '../../integration/delivery/helpers';
import { fakeOfframpContext, passthrough, recordingLogger, testEvent } from '../net-helpers';
import { logServer, makeCert, type LogServer, type TestCert } from './helpers';

const KEY = 'eddy0test0license0key0000000000000NRAL';
const INSERT_KEY = 'NRII-eddy-test-insert-key';

/**
 * The logvendor offramp against a local HTTPS stand-in for the Log API
 * (node:https, a certificate made by openssl for this run, trusted through
 * `ca_file`): the request (path, key header, JSON body in the API's detailed
 * format, gzip), delivery (never acked; refusals failed and counted), TLS
 * verification, the breaker on connection loss and on 429, and the config.
 */
describe('logvendor offramp (local HTTPS stand-in for the Log API)', function () {
  this.timeout(20_000);
  let cert: TestCert;
  let server: LogServer | undefined;
  let runtime: Runtime | undefined;
  let sink: Sink | undefined;

  before(() => {
    cert = makeCert();
  });
  after(() => cert?.remove());
  afterEach(async () => {
    await runtime?.shutdown();
    await sink?.close?.();
    await server?.close();
    runtime = sink = server = undefined;
  });

  const config = (extra: Partial<LogvendorConfig> = {}): Record<string, unknown> => ({
    license_key: KEY,
    endpoint: server!.url,
    ca_file: cert.certFile,
    ...extra,
  });

  /** A transactional probe source of `count` events {id} through a passthrough into a logvendor offramp. */
  async function flow(offramp: Record<string, unknown>, count: number, logger = createLogger('silent')): Promise<ProbeLog> {
    const log: ProbeLog = { read: 0, acks: [], fails: [] };
    runtime = new Runtime({ registries: registriesWith([probeOnramp(log)], []), logger });
    await runtime.start();
    runtime.publish('onramp', { id: 'src', type: 'probe', config: { count } });
    runtime.publish('pipeline', passthrough('p'));
    runtime.publish('offramp', { id: 'dst', type: 'logvendor', ...offramp });
    runtime.publish('binding', {
      id: 'flow',
      links: { '/onramp/src/{instance}/out': ['/pipeline/p/{instance}/in'], '/pipeline/p/{instance}/out': ['/offramp/dst/{instance}/in'] },
    });
    await runtime.activate('binding', 'flow', 'main');
    return log;
  }
  const counters = () => runtime!.offramp('/offramp/dst/main')!.counters;

  it('posts each event to the endpoint as JSON in the detailed format, the key in X-License-Key, whatever the codec and postprocessors; never acks', async () => {
    server = await logServer(cert);
    const log = await flow({ codec: 'yaml', postprocessors: ['base64'], config: config() }, 3);
    await eventually(() => counters().out === 3, 10_000, 'three events sent');
    expect(server.requests).to.have.length(3);
    for (const req of server.requests) {
      expect(req.method).to.equal('POST');
      expect(req.path).to.equal('/log/v1');
      expect(req.headers['content-type']).to.equal('application/json');
      expect(req.headers['content-encoding']).to.equal(undefined);
      expect(req.headers['x-license-key']).to.equal(KEY);
      expect(req.headers['api-key']).to.equal(undefined);
      expect(req.problem).to.equal(undefined);
    }
    expect(server.requests.map((r) => r.json)).to.deep.equal([1, 2, 3].map((id) => [{ logs: [{ id }] }]));
    // delivered, and still never acked (the spec's delivery table); nothing failed either
    expect(log.acks).to.deep.equal([]);
    expect(log.fails).to.deep.equal([]);
    expect(counters().error).to.equal(0);
  });

  it('gzips the body with compress_logs (Content-Encoding: gzip)', async () => {
    server = await logServer(cert);
    await flow({ config: config({ compress_logs: true }) }, 2);
    await eventually(() => counters().out === 2, 10_000, 'two events sent');
    for (const req of server.requests) {
      expect(req.headers['content-encoding']).to.equal('gzip');
      expect(req.raw.subarray(0, 2).toString('hex'), 'the gzip magic number').to.equal('1f8b');
      expect(req.problem).to.equal(undefined);
    }
    expect(server.entries()).to.deep.equal([{ id: 1 }, { id: 2 }]);
  });

  it('sends an insert-only key (NRII-...) in Api-Key instead', async () => {
    server = await logServer(cert);
    await flow({ config: config({ license_key: INSERT_KEY }) }, 1);
    await eventually(() => counters().out === 1, 10_000, 'the event sent');
    expect(server.requests[0].headers['api-key']).to.equal(INSERT_KEY);
    expect(server.requests[0].headers['x-license-key']).to.equal(undefined);
    expect(keyHeader(KEY)).to.equal('x-license-key');
  });

  it('sends a batch as one request with every member a log entry; a value that is not a record becomes the message', async () => {
    server = await logServer(cert);
    const { ctx, log } = fakeOfframpContext();
    sink = await logvendorOfframp.create(
      { license_key: KEY, compress_logs: false, region: 'usa', endpoint: server.url, ca_file: cert.certFile, concurrency: 4 },
      ctx,
    );
    const values = [{ message: 'one', level: 'info' }, 'plain text', 42];
    const batch: EddyEvent = { ...testEvent(1), isBatch: true, data: values.map((value) => ({ data: { value, meta: {} } })) };
    await sink.send(
      values.map((v) => Buffer.from(JSON.stringify(v))),
      batch,
    );
    expect(server.requests).to.have.length(1);
    expect(server.requests[0].json).to.deep.equal([{ logs: [{ message: 'one', level: 'info' }, { message: 'plain text' }, { message: 42 }] }]);
    expect(log.acks).to.deep.equal([]);
  });

  it('fails an event the Log API refuses (non-2xx): counted as an error, logged, failed to its transactional source', async () => {
    server = await logServer(cert);
    server.answer = () => ({ status: 403, body: '{"error":"license key is not valid"}' });
    const logger = recordingLogger();
    const log = await flow({ config: config() }, 2, logger);
    await eventually(() => log.fails.length === 2, 10_000, 'two fails');
    expect(counters().error).to.equal(2);
    expect(counters().out).to.equal(0);
    expect(log.acks).to.deep.equal([]);
    expect(
      logger.lines.some((l) => /^warn .*send failed: the Log API answered 403: \{"error":"license key is not valid"\}/.test(l)),
      logger.lines.join('\n'),
    ).to.equal(true);
  });

  it("verifies TLS: without ca_file the test server's certificate is not trusted and nothing is posted", async () => {
    server = await logServer(cert);
    const logger = recordingLogger();
    const log = await flow({ config: { license_key: KEY, endpoint: server.url } }, 1, logger);
    await eventually(() => log.fails.length === 1, 10_000, 'the fail');
    expect(server.requests).to.have.length(0);
    expect(logger.lines.join('\n')).to.match(/send failed: cannot post to https:\/\/127\.0\.0\.1:\d+: .*(self[- ]signed|certificate)/i);
  });

  it('triggers the breaker when the endpoint goes away (sends fail at once, unsent) and restores it when it is back', async () => {
    server = await logServer(cert);
    const port = server.port;
    const { ctx, log } = fakeOfframpContext();
    sink = await logvendorOfframp.create(
      { license_key: KEY, compress_logs: false, region: 'usa', endpoint: server.url, ca_file: cert.certFile, concurrency: 4 },
      ctx,
    );
    await sink.send([Buffer.from('{"n":1}')], testEvent(1, { n: 1 }));
    await server.close();
    const lost = await Promise.resolve(sink.send([Buffer.from('{"n":2}')], testEvent(2, { n: 2 }))).then(
      () => 'sent',
      (err: unknown) => (err as Error).message,
    );
    expect(lost).to.match(/cannot post to https:\/\/127\.0\.0\.1/);
    expect(log.down, 'triggered').to.equal(true);
    const unsent = await Promise.resolve(sink.send([Buffer.from('{"n":3}')], testEvent(3, { n: 3 }))).then(
      () => 'sent',
      (err: unknown) => (err as Error).message,
    );
    expect(unsent).to.match(/^not sent: .* cannot be reached/);
    server = await logServer(cert, port);
    await eventually(() => !log.down, 10_000, 'restored once the endpoint answers a probe');
    await sink.send([Buffer.from('{"n":4}')], testEvent(4, { n: 4 }));
    expect(server.entries()).to.deep.equal([{ n: 4 }]);
  });

  it('on 429 triggers the breaker for the Retry-After it was given, then restores it', async () => {
    server = await logServer(cert);
    server.answer = () => ({ status: 429, headers: { 'retry-after': '1' } });
    const { ctx, log } = fakeOfframpContext();
    sink = await logvendorOfframp.create(
      { license_key: KEY, compress_logs: false, region: 'usa', endpoint: server.url, ca_file: cert.certFile, concurrency: 4 },
      ctx,
    );
    const refused = await Promise.resolve(sink.send([Buffer.from('{"n":1}')], testEvent(1, { n: 1 }))).then(
      () => 'sent',
      (err: unknown) => (err as Error).message,
    );
    expect(refused).to.match(/answered 429/);
    expect(log.down).to.equal(true);
    await eventually(() => !log.down, 10_000, 'restored after Retry-After');
    expect(log.triggers).to.equal(1);
  });

  it("refuses a body over the Log API's 1 MB limit without posting it", async () => {
    server = await logServer(cert);
    const { ctx } = fakeOfframpContext();
    sink = await logvendorOfframp.create(
      { license_key: KEY, compress_logs: false, region: 'usa', endpoint: server.url, ca_file: cert.certFile, concurrency: 4 },
      ctx,
    );
    const big = { message: 'x'.repeat(MAX_BODY_BYTES) };
    const error = await Promise.resolve(sink.send([Buffer.from(JSON.stringify(big))], testEvent(1, big))).then(
      () => 'sent',
      (err: unknown) => (err as Error).message,
    );
    expect(error).to.match(/^not sent: the body is \d+ bytes, the Log API takes at most 1000000/);
    expect(server.requests).to.have.length(0);
  });

  describe('config', () => {
    it("posts to the region's endpoint unless endpoint is set", () => {
      expect(endpointOf({ region: 'usa' }).href).to.equal('https://log-api.newrelic.com/log/v1');
      expect(endpointOf({ region: 'europe' }).href).to.equal('https://log-api.eu.newrelic.com/log/v1');
      expect(REGION_ENDPOINTS.europe).to.equal('https://log-api.eu.newrelic.com/log/v1');
      expect(endpointOf({ region: 'europe', endpoint: 'http://127.0.0.1:1/x' }).href).to.equal('http://127.0.0.1:1/x');
      expect(() => endpointOf({ region: 'usa', endpoint: 'ftp://example.invalid/' })).to.throw(/endpoint: the scheme must be https or http, not ftp/);
    });

    async function refusal(offramp: Record<string, unknown>): Promise<string> {
      try {
        await flow(offramp, 0);
      } catch (err) {
        return (err as Error).message;
      }
      throw new Error('activated');
    }

    it('refuses a region it does not know, a bad endpoint, and a ca_file it cannot read', async () => {
      expect(await refusal({ config: { license_key: KEY, region: 'mars' } })).to.match(/region/);
      expect(await refusal({ config: { license_key: KEY, endpoint: 'not a url' } })).to.match(/endpoint: not a URL/);
      expect(await refusal({ config: { license_key: KEY, endpoint: 'https://127.0.0.1:1/log/v1', ca_file: '/nonexistent/ca.pem' } })).to.match(
        /offramp 'dst' \(logvendor\) cannot start: ca_file: cannot read \/nonexistent\/ca\.pem/,
      );
    });
  });
});
