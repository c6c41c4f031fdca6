import { expect } from 'chai';
import { createServer, type Server, type Socket } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Runtime } from '../../../src/runtime/runtime';
import { runEddy } from '../../helpers/cli';
import { call, eventually, startRuntime, type Started } from '../../helpers/runtime';
import { documentsIn, freePort, proxyTo, range, sorted, startElasticFlow, useElastic, type ElasticFlow, type Proxy } from './helpers';

describe('elastic offramp: concurrency, connection loss and activation', function () {
  this.timeout(30_000);
  const elastic = useElastic();
  let flow: ElasticFlow | undefined;
  let proxy: Proxy | undefined;
  afterEach(async () => {
    await flow?.stop();
    await proxy?.close();
    flow = proxy = undefined;
  });

  it('never has more than `concurrency` bulk requests in flight at the cluster, and delivers every event', async () => {
    const idx = elastic.index('concurrency');
    // each bulk is held 30 ms at the proxy, so requests overlap when the offramp lets them
    proxy = await proxyTo(elastic.es, { delayMs: 30 });
    flow = await startElasticFlow({ offramp: { config: { nodes: [`http://127.0.0.1:${proxy.port}`], concurrency: 2 } } });
    for (const n of range(1, 30)) flow.feed.push({ n }, { index: idx, doc_id: String(n) });
    await eventually(() => flow!.feed.acks.length === 30, 25_000, '30 acks');
    expect(proxy.bulks).to.equal(30);
    expect(proxy.maxInFlight).to.equal(2);
    expect(flow.feed.fails).to.deep.equal([]);
    expect((await documentsIn(elastic.client, idx)).map((d) => Number(d._id)).sort((a, b) => a - b)).to.deep.equal(range(1, 30));
  });

  it('connection loss: triggers the breaker and fails what cannot be sent; restores once the cluster answers, and delivers what waited', async () => {
    const idx = elastic.index('outage');
    proxy = await proxyTo(elastic.es);
    const port = proxy.port;
    flow = await startElasticFlow({ offramp: { linked: true, config: { nodes: [`http://127.0.0.1:${port}`] } } });
    for (const n of range(1, 5)) flow.feed.push({ n }, { index: idx, doc_id: String(n) });
    await eventually(() => flow!.feed.acks.length === 5, 20_000, 'the first 5 acked');

    // the cluster goes away
    await proxy.close();
    proxy = undefined;
    for (const n of range(6, 8)) flow.feed.push({ n }, { index: idx, doc_id: String(n), correlation: n });
    await eventually(() => !flow!.gateOpen(), 20_000, 'the breaker triggered');
    await eventually(() => flow!.feed.fails.length === 3, 20_000, 'the 3 sends failed back');
    expect(sorted(flow.feed.fails)).to.deep.equal([6, 7, 8]);
    // every failed document is reported on err, with the cause
    await eventually(() => flow!.err.length === 3, 20_000, '3 err replies');
    expect(flow.err.map((e) => e.meta.correlation).sort()).to.deep.equal([6, 7, 8]);
    for (const e of flow.err) expect((e.data as { error: { type: string } }).error.type).to.equal('cluster_unreachable');

    // an event already past the onramp (in transit in the pipeline) while the cluster is down fails at once, without a request
    const sample = flow.err[0];
    flow.runtime
      .pipeline('/pipeline/p/main')!
      .input('in')
      .next({ ...sample, id: { uid: 999_999, seq: 1 }, data: { n: 0 }, meta: { index: idx, doc_id: '0', correlation: 'in transit' } });
    await eventually(() => flow!.err.length === 4, 20_000, 'the in-transit event on err');
    expect(flow.err[3].meta.correlation).to.equal('in transit');
    expect((flow.err[3].data as { error: { reason: string } }).error.reason).to.match(/^not sent: the cluster cannot be reached/);

    // events that arrive while the breaker is triggered are held by the machinery, not sent and not dropped
    for (const n of range(9, 12)) flow.feed.push({ n }, { index: idx, doc_id: String(n) });
    proxy = await proxyTo(elastic.es, { port });
    await eventually(() => flow!.gateOpen(), 20_000, 'the breaker restored');
    await eventually(() => flow!.feed.acks.length === 9, 20_000, 'the held events acked');
    expect(sorted(flow.feed.acks)).to.deep.equal([...range(1, 5), ...range(9, 12)]);
    expect(sorted([...flow.feed.acks, ...flow.feed.fails])).to.deep.equal(range(1, 12));
    // exactly what was acked is in the index
    expect((await documentsIn(elastic.client, idx)).map((d) => Number(d._id)).sort((a, b) => a - b)).to.deep.equal(sorted(flow.feed.acks));
  });

  describe('an unreachable cluster at activation answers 400 naming the offramp and the cause', () => {
    let rt: Started | undefined;
    let silent: { server: Server; sockets: Set<Socket> } | undefined;
    afterEach(async () => {
      await rt?.stop();
      if (silent) {
        for (const s of silent.sockets) s.destroy();
        await new Promise((r) => silent!.server.close(r));
      }
      rt = silent = undefined;
    });

    async function activate(node: string, runtime?: Runtime) {
      rt = await startRuntime(runtime);
      const artefacts: [string, unknown][] = [
        ['onramp', { id: 'ticks', type: 'metronome', config: { interval: 1000 } }],
        ['offramp', { id: 'search', type: 'elastic', config: { nodes: [node] } }],
        [
          'binding',
          {
            id: 'index',
            links: {
              '/onramp/ticks/{instance}/out': ['/pipeline/system::passthrough/{instance}/in'],
              '/pipeline/system::passthrough/{instance}/out': ['/offramp/search/{instance}/in'],
            },
          },
        ],
      ];
      for (const [kind, body] of artefacts) expect((await call(rt.base, 'POST', `/${kind}`, { body })).status, kind).to.equal(201);
      return call(rt.base, 'POST', '/binding/index/main');
    }

    it('nothing listens on the node port: refused at once', async () => {
      const port = await freePort();
      const answer = await activate(`http://127.0.0.1:${port}`);
      expect(answer.status).to.equal(400);
      expect(answer.body).to.deep.equal({
        error: `offramp 'search' (elastic) cannot start: no node answers GET /_cluster/health (http://127.0.0.1:${port}: connect ECONNREFUSED 127.0.0.1:${port})`,
      });
      // nothing of the failed activation is left running
      for (const path of ['/binding/index', '/offramp/search', '/onramp/ticks'])
        expect((await call(rt!.base, 'GET', path)).body, path)
          .to.have.property('instances')
          .that.deep.equals([]);
    });

    it("a node URL's password is in no answer and no log line: the 400, GET, /status (docs/security.md)", async () => {
      const port = await freePort(); // bound and closed: nothing listens there
      const logged: string[] = [];
      const log = (msg: string, fields?: Record<string, unknown>) => void logged.push(`${msg} ${JSON.stringify(fields ?? {})}`);
      const answer = await activate(`http://elastic:s3cret@127.0.0.1:${port}`, new Runtime({ logger: { debug: log, info: log, warn: log, error: log } }));
      expect(answer.status).to.equal(400);
      expect(answer.body).to.deep.equal({
        error: `offramp 'search' (elastic) cannot start: no node answers GET /_cluster/health (http://elastic:***@127.0.0.1:${port}: connect ECONNREFUSED 127.0.0.1:${port})`,
      });
      const got = await call(rt!.base, 'GET', '/offramp/search');
      expect((got.body as { artefact: { config: unknown } }).artefact.config).to.deep.equal({ nodes: [`http://elastic:***@127.0.0.1:${port}`] });
      const texts = [answer.text, got.text, (await call(rt!.base, 'GET', '/status')).text, (await call(rt!.base, 'GET', '/health')).text, ...logged];
      for (const text of texts) expect(text).not.to.contain('s3cret');
    });

    it("nor in what `eddy server run -f` prints when the file's flow cannot start", async () => {
      const port = await freePort();
      const dir = mkdtempSync(join(tmpdir(), 'eddy-elastic-secret-'));
      try {
        const file = join(dir, 'flows.yaml');
        writeFileSync(
          file,
          `onramp:
  - { id: ticks, type: metronome, config: { interval: 1000 } }
offramp:
  - { id: search, type: elastic, config: { nodes: ["http://elastic:s3cret@127.0.0.1:${port}"] } }
binding:
  - id: index
    links:
      "/onramp/ticks/{instance}/out": ["/pipeline/system::passthrough/{instance}/in"]
      "/pipeline/system::passthrough/{instance}/out": ["/offramp/search/{instance}/in"]
mapping:
  /binding/index/main: {}
`,
        );
        const run = await runEddy(['server', 'run', '--no-api', '-f', file], { env: { EDDY_LOG: 'debug' } });
        expect(run.code, run.stderr).to.equal(1);
        expect(run.stderr).to.contain(`http://elastic:***@127.0.0.1:${port}: connect ECONNREFUSED`);
        expect(run.stdout + run.stderr).not.to.contain('s3cret');
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it('the node accepts connections but never answers: refused after the probe timeout, not a hang', async () => {
      const sockets = new Set<Socket>();
      const server = createServer((s) => {
        sockets.add(s);
        s.on('error', () => undefined);
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      silent = { server, sockets };
      const port = (server.address() as { port: number }).port;
      const answer = await activate(`http://127.0.0.1:${port}`);
      expect(answer.status).to.equal(400);
      const error = JSON.stringify(answer.body);
      expect(error).to.contain("offramp 'search' (elastic) cannot start");
      expect(error).to.contain(`http://127.0.0.1:${port}: no answer within 5000 ms`);
    });
  });
});
