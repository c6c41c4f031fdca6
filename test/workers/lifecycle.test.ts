import { expect } from 'chai';
import { createServer } from 'node:net';
import { availableParallelism, tmpdir } from 'node:os';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { call, eventually } from '../helpers/runtime';
import { runEddy } from '../helpers/cli';
import { freePort } from '../connectors/net-helpers';
import { created } from '../runtime/persistence-server';
import { parseWorkers } from '../../src/cli/server-run';
import { flow, health, isAlive, killAll, runningPid, startWorkers, workerPids, workersRunning, START_MS } from './helpers';

const TCP_IN = (port: number) => ({ id: 'in', type: 'tcp', preprocessors: ['lines'], config: { host: '127.0.0.1', port } });
const HOLE = { id: 'hole', type: 'blackhole', config: { warmup_secs: 0, stop_after_secs: 0, significant_figures: 2 } };

describe('eddy server run --workers 2: failures, signals, exit', function () {
  this.timeout(180000);
  let dir: string | undefined;
  afterEach(async () => {
    await killAll();
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });

  it("answers a failed activation with the workers' error and leaves nothing running anywhere", async () => {
    // the port is taken by this test: every worker fails to listen
    const taken = createServer();
    const port = await freePort();
    await new Promise<void>((r) => taken.listen(port, '127.0.0.1', r));
    const server = await startWorkers();
    await created(server.base, '/onramp', TCP_IN(port));
    await created(server.base, '/offramp', HOLE);
    await created(server.base, '/binding', flow('f', 'in', 'hole'));
    const failed = await call(server.base, 'POST', '/binding/f/main', { body: {} });
    await new Promise<void>((r) => taken.close(() => r()));
    expect(failed.status, failed.text).to.equal(400);
    expect((failed.body as { error: string }).error).to.match(/^onramp 'in' \(tcp\) cannot start: .*EADDRINUSE/);
    expect((await call(server.base, 'GET', '/binding/f')).body)
      .to.have.property('instances')
      .that.deep.equals([]);
    expect(await workersRunning(server.base, '/offramp/hole/main')).to.deep.equal([]);
    // nothing of it stayed in a worker: with the port free it activates everywhere
    await created(server.base, '/binding/f/main');
    expect(await workersRunning(server.base, '/onramp/in/main')).to.deep.equal([0, 1]);
  });

  it('restarts a worker killed with SIGKILL and activates its instances on it again', async () => {
    const server = await startWorkers();
    await created(server.base, '/onramp', TCP_IN(await freePort()));
    await created(server.base, '/offramp', HOLE);
    await created(server.base, '/binding', flow('f', 'in', 'hole'));
    await created(server.base, '/binding/f/main');
    expect(await workersRunning(server.base, '/onramp/in/main')).to.deep.equal([0, 1]);
    const [, second] = await workerPids(server.base);
    process.kill(second, 'SIGKILL');
    // a new process in place 1, running what the old one ran
    await eventually(
      async () => (await runningPid(server.base, 1)) !== undefined && (await runningPid(server.base, 1)) !== second,
      60000,
      'worker 1 to run again',
    );
    await eventually(async () => (await workersRunning(server.base, '/onramp/in/main')).join() === '0,1', 30000, 'the onramp to run on both workers again');
    expect(await workersRunning(server.base, '/offramp/hole/main')).to.deep.equal([0, 1]);
    // the delay is drawn with full jitter up to 250 ms (core/jitter.ts)
    const restarting = new RegExp(`worker 1 \\(pid ${second}\\) exited with signal SIGKILL; restarting it in (\\d+) ms \\(restart 1 in a row\\)`).exec(
      server.out.stderr,
    );
    expect(restarting, server.out.stderr).to.not.equal(null);
    expect(Number(restarting![1])).to.be.within(1, 250);
    expect(server.out.stderr).to.include('/binding/f/main activated again on worker 1');
    await eventually(async () => (await health(server.base)).status === 200, 30000, 'GET /health to answer 200 again');
    expect((await call(server.base, 'GET', '/health/live')).status).to.equal(200);
  });

  it('gives a worker up after five deaths in a row: health and liveness fail, and what needs it is refused (409)', async () => {
    const server = await startWorkers();
    let pid = (await workerPids(server.base))[1];
    for (let death = 1; death < 5; death++) {
      process.kill(pid, 'SIGKILL');
      const old = pid;
      await eventually(async () => (pid = (await runningPid(server.base, 1)) ?? old) !== old, 60000, `worker 1 to run again after death ${death}`);
    }
    process.kill(pid, 'SIGKILL');
    const reason = `worker 1 (pid ${pid}) exited with signal SIGKILL; given up after 5 deaths in a row, each within 60 s of its start`;
    await eventually(
      async () => (await health(server.base)).entries.some((e) => e.url === '/worker/1' && e.state === 'failed'),
      20000,
      'worker 1 to be given up',
    );
    const entry = (await health(server.base)).entries.find((e) => e.url === '/worker/1')!;
    expect(entry).to.include({ state: 'failed', worker: 1, pid, reason });
    expect((await health(server.base)).status).to.equal(503);
    expect(server.out.stderr).to.include(`${reason}: its instances are gone until the server restarts`);
    // given up, so the server asks for a restart: liveness fails too
    const live = await call(server.base, 'GET', '/health/live');
    expect(live.status).to.equal(503);
    expect(live.body).to.deep.equal({ status: 'unhealthy', reason });
    // a binding for every worker: worker 0 opens it, worker 1 cannot, worker 0 closes it again
    await created(server.base, '/onramp', TCP_IN(await freePort()));
    await created(server.base, '/offramp', HOLE);
    await created(server.base, '/binding', flow('f', 'in', 'hole'));
    const refused = await call(server.base, 'POST', '/binding/f/main', { body: {} });
    expect(refused.status, refused.text).to.equal(409);
    expect((refused.body as { error: string }).error).to.equal(`${reason}: try again once GET /health shows it running`);
    expect(await workersRunning(server.base, '/onramp/in/main')).to.deep.equal([]);
    expect((await call(server.base, 'GET', '/binding/f')).body)
      .to.have.property('instances')
      .that.deep.equals([]);
  });

  it('drains every worker on SIGTERM and leaves no worker process', async () => {
    const server = await startWorkers();
    await created(server.base, '/onramp', TCP_IN(await freePort()));
    await created(server.base, '/offramp', HOLE);
    await created(server.base, '/binding', flow('f', 'in', 'hole'));
    await created(server.base, '/binding/f/main');
    const pids = await workerPids(server.base);
    expect(pids).to.have.length(2);
    expect(await server.stop('SIGTERM')).to.equal(0);
    expect(pids.filter(isAlive)).to.deep.equal([]);
  });

  it('leaves no worker process behind when the primary is killed with SIGKILL', async () => {
    const server = await startWorkers();
    const pids = await workerPids(server.base);
    await server.stop('SIGKILL');
    await eventually(() => pids.every((p) => !isAlive(p)), 20000, 'the workers to exit');
  });

  it('exits the whole server with the code an exit offramp in a worker asks for', async () => {
    dir = mkdtempSync(join(tmpdir(), 'eddy-workers-'));
    const source = join(dir, 'exit.json');
    writeFileSync(source, '{"exit":3}\n');
    const config = join(dir, 'exit.yaml');
    writeFileSync(
      config,
      JSON.stringify({
        onramp: [{ id: 'lines', type: 'file', config: { source } }],
        offramp: [{ id: 'bye', type: 'exit' }],
        binding: [flow('f', 'lines', 'bye')],
        mapping: { '/binding/f/main': {} },
      }),
    );
    const run = await runEddy(['server', 'run', '-f', config, '--no-api', '--workers', '2'], { timeoutMs: START_MS + 30000 });
    expect(run.code, run.stderr).to.equal(3);
    expect(run.stderr).to.include('Exit requested with status 3: worker 0: exit offramp /offramp/bye/main');
    const pids = [...run.stderr.matchAll(/worker \d ready \(pid (\d+)\)/g)].map((m) => Number(m[1]));
    expect(pids).to.have.length(2);
    expect(pids.filter(isAlive)).to.deep.equal([]);
  });

  it('prints one blackhole report per worker and a combined one', async () => {
    dir = mkdtempSync(join(tmpdir(), 'eddy-workers-'));
    const config = join(dir, 'bench.yaml');
    writeFileSync(
      config,
      JSON.stringify({
        onramp: [{ id: 'blast', type: 'blaster', codec: 'json', config: { source: join(__dirname, '../../../test/fixtures/workers-data.json') } }],
        offramp: [{ id: 'hole', type: 'blackhole', codec: 'json', config: { warmup_secs: 0, stop_after_secs: 1, significant_figures: 2, structured: true } }],
        binding: [flow('bench', 'blast', 'hole')],
        mapping: { '/binding/bench/main': {} },
      }),
    );
    const run = await runEddy(['server', 'run', '-f', config, '--no-api', '--workers', '2'], { timeoutMs: START_MS + 30000 });
    expect(run.code, run.stderr).to.equal(0);
    const reports = run.stdout
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, number> & { per_worker?: { events: number }[] });
    const perWorker = reports.filter((r) => r.workers === undefined);
    const combined = reports.filter((r) => r.workers !== undefined);
    expect(perWorker).to.have.length(2);
    expect(combined).to.have.length(1);
    expect(combined[0].workers).to.equal(2);
    expect(combined[0].events).to.equal(perWorker[0].events + perWorker[1].events);
    expect(combined[0].per_worker!.map((w) => w.events).sort()).to.deep.equal(perWorker.map((r) => r.events).sort());
    expect(perWorker.every((r) => r.events > 0)).to.equal(true);
  });
});

describe('eddy server run --workers: the flag', function () {
  this.timeout(60000);

  for (const bad of ['0', 'x']) {
    it(`refuses --workers ${bad} with a usage error`, async () => {
      const run = await runEddy(['server', 'run', '--no-api', '--workers', bad]);
      expect(run.code).to.equal(2);
      expect(run.stderr).to.include(`error: --workers: '${bad}' is not a number of workers (a whole number >= 1, or auto)`);
    });
  }

  it('reads auto as one worker per core', () => {
    expect(parseWorkers('auto')).to.equal(availableParallelism());
    expect(parseWorkers('3')).to.equal(3);
    for (const bad of ['0', '1.5', '-2', ''])
      expect(() => parseWorkers(bad)).to.throw(`--workers: '${bad}' is not a number of workers (a whole number >= 1, or auto)`);
  });
});
