import { expect } from 'chai';
import { mkdtempSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { call, eventually, startRuntime, type Started } from '../../helpers/runtime';
import { freePort } from '../net-helpers';
import { exportSpans, metering, recordedSpans, SUCCESS, traceExporter } from './helpers';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- OTLP JSON read field by field in assertions

describe('otel end to end over the REST API', function () {
  this.timeout(20000);
  let rt: Started | undefined;
  let blocker: Server | undefined;
  let dir: string | undefined;
  const closers: (() => unknown)[] = [];
  afterEach(async () => {
    for (const close of closers.splice(0)) await close();
    await rt?.stop();
    if (blocker) await new Promise((r) => blocker!.close(r));
    if (dir) rmSync(dir, { recursive: true, force: true });
    rt = blocker = dir = undefined;
  });

  it('published and activated over REST: OTLP exports -> otel onramp -> pipeline -> file offramp; deactivating closes the port', async () => {
    rt = await startRuntime();
    dir = mkdtempSync(join(tmpdir(), 'eddy-otel-'));
    const file = join(dir, 'otlp.jsonl');
    const port = await freePort();
    const artefacts: [string, unknown][] = [
      ['onramp', { id: 'otlp', type: 'otel', config: { port } }], // host: the default, 127.0.0.1
      ['offramp', { id: 'store', type: 'file', codec: 'json', postprocessors: ['lines'], config: { file } }],
      [
        'binding',
        {
          id: 'keep',
          links: {
            '/onramp/otlp/{instance}/out': ['/pipeline/system::passthrough/{instance}/in'],
            '/pipeline/system::passthrough/{instance}/out': ['/offramp/store/{instance}/in'],
          },
        },
      ],
    ];
    for (const [kind, body] of artefacts) expect((await call(rt.base, 'POST', `/${kind}`, { body })).status, kind).to.equal(201);
    expect((await call(rt.base, 'POST', '/binding/keep/one')).status).to.equal(201);

    const exporter = traceExporter(port);
    closers.push(() => exporter.shutdown());
    expect((await exportSpans(exporter, recordedSpans({ 'service.name': 'e2e' }, ['first', 'second']))).code).to.equal(SUCCESS);
    const m = metering(port, { 'service.name': 'e2e' });
    closers.push(m.shutdown);
    m.meter.createGauge('temperature').record(21.5);
    await m.flush();

    const lines = () =>
      existsSync(file)
        ? readFileSync(file, 'utf8')
            .split('\n')
            .filter((l) => l !== '')
        : [];
    await eventually(() => lines().length >= 2, 10000, 'two lines in the file');
    const [spans, metrics] = lines().map((l) => JSON.parse(l) as Json);
    expect(spans.scopeSpans[0].spans.map((s: Json) => s.name)).to.deep.equal(['first', 'second']);
    const gauge = metrics.scopeMetrics[0].metrics.find((x: Json) => x.name === 'temperature').gauge;
    expect(gauge.dataPoints[0].asDouble).to.equal(21.5);

    // the clients go first (the meter provider exports once more as it shuts down)
    for (const close of closers.splice(0)) await close();
    // deactivating releases the port: another server can take it
    expect((await call(rt.base, 'DELETE', '/binding/keep/one')).status).to.equal(200);
    const taker = createServer();
    await new Promise<void>((resolve, reject) => taker.once('error', reject).listen(port, '127.0.0.1', resolve));
    await new Promise((r) => taker.close(r));
  });

  it('a port in use fails the activation with a 400 naming the onramp', async () => {
    rt = await startRuntime();
    blocker = createServer();
    await new Promise<void>((resolve) => blocker!.listen(0, '127.0.0.1', resolve));
    const { port } = blocker.address() as { port: number };
    await call(rt.base, 'POST', '/onramp', { body: { id: 'otlp', type: 'otel', config: { host: '127.0.0.1', port } } });
    await call(rt.base, 'POST', '/binding', { body: { id: 'b', links: { '/onramp/otlp/{instance}/out': ['/pipeline/system::passthrough/{instance}/in'] } } });
    const answer = await call(rt.base, 'POST', '/binding/b/one');
    expect(answer.status).to.equal(400);
    expect(answer.text).to.match(
      new RegExp(`onramp 'otlp' \\(otel\\) cannot start: cannot listen on 127\\.0\\.0\\.1:${port}: .*(EADDRINUSE|address already in use)`),
    );
  });

  it('refuses unknown config keys and values of the wrong type at publish time', async () => {
    rt = await startRuntime();
    const unknown = await call(rt.base, 'POST', '/onramp', { body: { id: 'a', type: 'otel', config: { port: 0, traces: false } } });
    expect(unknown.status).to.equal(400);
    expect(unknown.text).to.contain('traces');
    const wrong = await call(rt.base, 'POST', '/onramp', { body: { id: 'b', type: 'otel', config: { logs: 'no' } } });
    expect(wrong.status).to.equal(400);
    expect(wrong.text).to.contain('logs');
  });
});
