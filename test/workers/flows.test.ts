import { expect } from 'chai';
import Ajv2020 from 'ajv/dist/2020';
import { connect } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { call, eventually } from '../helpers/runtime';
import { freePort } from '../connectors/net-helpers';
import { created } from '../runtime/persistence-server';
import { collector, flow, killAll, startWorkers, workersRunning, type Collector } from './helpers';

/** Sends `lines` over one fresh connection and closes it. */
function sendOver(port: number, lines: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.end(lines.map((l) => l + '\n').join('')));
    socket.on('close', () => resolve());
    socket.on('error', reject);
  });
}

describe('eddy server run --workers 2: where flows run', function () {
  this.timeout(180000);
  let sink: Collector | undefined;
  let dir: string | undefined;
  afterEach(async () => {
    await killAll();
    await sink?.close();
    sink = undefined;
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });

  it('runs a tcp onramp on every worker on one port; every event arrives exactly once at a tcp offramp', async () => {
    sink = await collector();
    const port = await freePort();
    const server = await startWorkers();
    await created(server.base, '/onramp', { id: 'in', type: 'tcp', preprocessors: ['lines'], config: { host: '127.0.0.1', port } });
    await created(server.base, '/offramp', { id: 'out', type: 'tcp', postprocessors: ['lines'], config: { host: '127.0.0.1', port: sink.port } });
    await created(server.base, '/binding', flow('tcpflow', 'in', 'out'));
    await created(server.base, '/binding/tcpflow/main');
    expect(await workersRunning(server.base, '/onramp/in/main')).to.deep.equal([0, 1]);
    // the primary hands the connections to the workers, the one holding fewer first: 20 connections of 5 events each
    const expected: string[] = [];
    for (let c = 0; c < 20; c++) {
      const lines = [0, 1, 2, 3, 4].map((i) => JSON.stringify({ c, i }));
      expected.push(...lines);
      await sendOver(port, lines);
    }
    await eventually(() => sink!.lines().length >= expected.length, 20000, 'every event at the collector').catch((e: unknown) => {
      throw new Error(`${(e as Error).message}: ${sink!.lines().length} lines; ${server.out.stderr}`);
    });
    expect([...sink.lines()].sort()).to.deep.equal([...expected].sort());
    // one offramp connection per worker, each carried events: both workers took connections
    expect(sink.connections.filter((c) => c.length > 0)).to.have.length(2);
    // GET /status and /metrics count what passed in every worker
    interface Observed {
      url: string;
      ports: { port: string; direction: string; events: number }[];
    }
    const status = (await (await fetch(`${server.base}/status`)).json()) as { instances: Observed[] };
    const events = (url: string, port: string) => status.instances.find((i) => i.url.endsWith(url))?.ports.find((p) => p.port === port)?.events;
    expect(events('/onramp/in/main', 'out'), 'onramp out, both workers').to.equal(expected.length);
    expect(events('/offramp/out/main', 'in'), 'offramp in, both workers').to.equal(expected.length);
    const metrics = await (await fetch(`${server.base}/metrics`)).text();
    expect(metrics).to.match(new RegExp(`eddy_port_events_total\\{[^}]*artefact="in"[^}]*port="out"[^}]*\\} ${expected.length}\\b`));
    // GET /health, with its per-worker fields, is what the served OpenAPI document says it is
    const doc = (await (await fetch(`${server.base}/openapi.json`)).json()) as { components: { schemas: Record<string, object> } };
    const healthValid = new Ajv2020({ strict: false }).compile(doc.components.schemas.health);
    const health = (await (await fetch(`${server.base}/health`)).json()) as { instances: { worker?: number }[] };
    expect(health.instances.some((i) => i.worker === 1)).to.equal(true);
    expect(healthValid(health), JSON.stringify(healthValid.errors)).to.equal(true);
    // the tap cannot reach the workers: refused, not a stream that stays empty
    const tap = await fetch(`${server.base}/tap/onramp/in/main/out`);
    expect(tap.status).to.equal(409);
    expect(await tap.text()).to.include('the live tap is not available with --workers N > 1');
  });

  it('runs a binding with a file onramp on worker 0 only: its events arrive once', async () => {
    sink = await collector();
    dir = mkdtempSync(join(tmpdir(), 'eddy-workers-'));
    const source = join(dir, 'events.json');
    writeFileSync(source, [1, 2, 3, 4, 5].map((n) => JSON.stringify({ n }) + '\n').join(''));
    const server = await startWorkers();
    await created(server.base, '/onramp', { id: 'lines', type: 'file', config: { source } });
    await created(server.base, '/offramp', { id: 'out', type: 'tcp', postprocessors: ['lines'], config: { host: '127.0.0.1', port: sink.port } });
    await created(server.base, '/binding', flow('fileflow', 'lines', 'out'));
    await created(server.base, '/binding/fileflow/main');
    expect(await workersRunning(server.base, '/onramp/lines/main')).to.deep.equal([0]);
    expect(await workersRunning(server.base, '/offramp/out/main')).to.deep.equal([0]);
    await eventually(() => sink!.lines().length >= 5, 20000, 'the file lines at the collector');
    expect(sink.lines().map((l) => JSON.parse(l).n)).to.deep.equal([1, 2, 3, 4, 5]);
    expect(sink.connections.filter((c) => c.length > 0)).to.have.length(1);
    expect(server.out.stderr).to.include("/binding/fileflow/main runs on worker 0 only: onramp 'lines' (file) runs on one worker");
  });

  it('hands publish, activate and deactivate over the API to the workers', async () => {
    const server = await startWorkers();
    await created(server.base, '/onramp', {
      id: 'blast',
      type: 'blaster',
      config: { source: join(__dirname, '../../../test/fixtures/workers-data.json'), iters: 1 },
    });
    await created(server.base, '/offramp', { id: 'hole', type: 'blackhole', config: { warmup_secs: 0, stop_after_secs: 0, significant_figures: 2 } });
    await created(server.base, '/binding', flow('bench', 'blast', 'hole'));
    await created(server.base, '/binding/bench/main');
    for (const url of ['/binding/bench/main', '/onramp/blast/main', '/pipeline/system::passthrough/main', '/offramp/hole/main']) {
      expect(await workersRunning(server.base, url), url).to.deep.equal([0, 1]);
    }
    const instances = await call(server.base, 'GET', '/binding/bench');
    expect((instances.body as { instances: string[] }).instances).to.deep.equal(['main']);
    const removed = await call(server.base, 'DELETE', '/binding/bench/main');
    expect(removed.status).to.equal(200);
    await eventually(async () => (await workersRunning(server.base, '/onramp/blast/main')).length === 0, 10000, 'the onramp gone from the workers');
    expect(await workersRunning(server.base, '/offramp/hole/main')).to.deep.equal([]);
    // the artefacts stay published, and run again
    await created(server.base, '/binding/bench/again');
    expect(await workersRunning(server.base, '/onramp/blast/again')).to.deep.equal([0, 1]);
  });
});
