import { expect } from 'chai';
import { call, eventually, startRuntime, type Started } from '../../helpers/runtime';
import { freePort } from '../net-helpers';
import { logServer, makeCert, type LogServer, type TestCert } from './helpers';

/**
 * Published and activated over the REST API: HTTP requests into a rest
 * onramp, through a pipeline that makes each a log entry, out through the
 * logvendor offramp to the HTTPS stand-in of the Log API (gzip on, the
 * stand-in's CA trusted through ca_file).
 */
describe('logvendor end to end over REST (local HTTPS stand-in)', function () {
  this.timeout(30_000);
  let cert: TestCert;
  let server: LogServer;
  let rt: Started;

  before(() => {
    cert = makeCert();
  });
  after(() => cert.remove());
  beforeEach(async () => {
    server = await logServer(cert);
    rt = await startRuntime(undefined, { allowSecrets: true }); // the license key goes over the API here (docs/security.md)
  });
  afterEach(async () => {
    await rt.stop();
    await server.close();
  });

  async function publish(kind: string, body: unknown): Promise<void> {
    const reply = await call(rt.base, 'POST', `/${kind}`, { body });
    expect(reply.status, `${kind}: ${reply.text}`).to.equal(201);
  }

  it('rest onramp -> runtime::cel -> logvendor: every request becomes one gzipped log entry at the Log API', async () => {
    const port = await freePort();
    await publish('onramp', { id: 'web', type: 'rest', config: { host: '127.0.0.1', port } });
    await publish('pipeline', {
      id: 'to_log',
      interface: { inputs: ['in'], outputs: ['out'] },
      nodes: [{ id: 'entry', type: 'runtime::cel', config: { set: { logtype: "'access'", path: 'meta.request.url.path' } } }],
      links: { in: ['entry'], entry: ['out'] },
    });
    await publish('offramp', {
      id: 'logs',
      type: 'logvendor',
      config: { license_key: 'eddy-e2e-license-key', compress_logs: true, region: 'europe', endpoint: server.url, ca_file: cert.certFile },
    });
    await publish('binding', {
      id: 'ship',
      links: { '/onramp/web/{instance}/out': ['/pipeline/to_log/{instance}/in'], '/pipeline/to_log/{instance}/out': ['/offramp/logs/{instance}/in'] },
    });
    expect((await call(rt.base, 'POST', '/binding/ship/main')).status).to.equal(201);

    for (let n = 1; n <= 5; n++) {
      const res = await fetch(`http://127.0.0.1:${port}/orders/${n}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ message: `order ${n}`, n }),
      });
      expect(res.status).to.equal(202);
    }
    await eventually(() => server.entries().length === 5, 20_000, 'five log entries');
    expect(server.entries()).to.have.deep.members([1, 2, 3, 4, 5].map((n) => ({ message: `order ${n}`, n, logtype: 'access', path: `/orders/${n}` })));
    expect(server.requests.every((r) => r.headers['content-encoding'] === 'gzip' && r.headers['x-license-key'] === 'eddy-e2e-license-key')).to.equal(true);
    expect((await call(rt.base, 'DELETE', '/binding/ship/main')).status).to.equal(200);
  });
});
