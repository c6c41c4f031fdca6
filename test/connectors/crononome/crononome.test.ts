import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EddyEvent } from '../../../src/core/event';
import { EDDY } from '../../helpers/cli';
import { call, eventually, startRuntime, type Started } from '../../helpers/runtime';

interface Tick {
  onramp: string;
  ingest_ns: number;
  id: number;
  trigger: { name: string; payload?: unknown };
}

describe('crononome onramp over REST', () => {
  let rt: Started;
  let dir: string;
  beforeEach(async () => {
    rt = await startRuntime();
    dir = mkdtempSync(join(tmpdir(), 'eddy-cron-'));
  });
  afterEach(async () => {
    await rt.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('fires each entry on its schedule, through a pipeline to a file, with payload only where given and the origin svc-crononome://<host>', async () => {
    const out = join(dir, 'ticks.json');
    const artefacts: [string, unknown][] = [
      [
        'onramp',
        {
          id: 'cron',
          type: 'crononome',
          config: {
            entries: [
              { name: 'each', expr: '* * * * * *', payload: { n: 1, tags: ['a'] } },
              { name: 'even', expr: '*/2 * * * * *' },
            ],
          },
        },
      ],
      ['offramp', { id: 'ticks', type: 'file', config: { file: out } }],
      [
        'binding',
        {
          id: 'cronflow',
          links: {
            '/onramp/cron/{instance}/out': ['/pipeline/system::passthrough/{instance}/in'],
            '/pipeline/system::passthrough/{instance}/out': ['/offramp/ticks/{instance}/in'],
          },
        },
      ],
    ];
    for (const [kind, body] of artefacts) expect((await call(rt.base, 'POST', `/${kind}`, { body })).status, kind).to.equal(201);
    expect((await call(rt.base, 'POST', '/binding/cronflow/one')).status).to.equal(201);
    const origins: string[] = [];
    const sub = rt.runtime.pipeline('/pipeline/system::passthrough/one')!.output('out').subscribe((e: EddyEvent) => origins.push(e.originUri));

    const read = (): Tick[] =>
      readFileSync(out, 'utf8')
        .split('\n')
        .filter((l) => l.length > 0)
        .map((l) => JSON.parse(l));
    await eventually(() => read().some((t) => t.trigger.name === 'even') && read().filter((t) => t.trigger.name === 'each').length >= 2, 6000, 'ticks of both entries');
    sub.unsubscribe();
    const ticks = read();
    expect(ticks.map((t) => t.id)).to.deep.equal(ticks.map((_t, i) => i));
    for (const tick of ticks) {
      expect(tick.onramp).to.equal('crononome');
      expect(tick.ingest_ns).to.be.a('number').greaterThan(1.6e18);
      if (tick.trigger.name === 'each') expect(tick.trigger).to.deep.equal({ name: 'each', payload: { n: 1, tags: ['a'] } });
      else {
        expect(tick.trigger).to.deep.equal({ name: 'even' });
      }
    }
    expect(new Set(origins)).to.deep.equal(new Set([`svc-crononome://${hostname()}`]));
  });

  it('publishing checks the shape and every expression, refusing an illegal one with 400 naming the entry', async () => {
    const publish = (id: string, config: unknown) => call(rt.base, 'POST', '/onramp', { body: { id, type: 'crononome', config } });
    expect((await publish('none', { entries: [] })).status).to.equal(400);
    expect((await publish('extra', { entries: [{ name: 'a', expr: '* * * * * *', when: 'now' }] })).status).to.equal(400);
    expect((await publish('noexpr', { entries: [{ name: 'a' }] })).status).to.equal(400);

    const bad = await publish('bad', { entries: [{ name: 'fine', expr: '*/5 * * * * *' }, { name: 'broken', expr: '0 0 25 * * *' }] });
    expect(bad.status).to.equal(400);
    expect(JSON.stringify(bad.body)).to.match(/config\.entries\[1\] \(broken\): illegal expression '0 0 25 \* \* \*'/);

    const five = await publish('five', { entries: [{ name: 'minutely', expr: '* * * * *' }] });
    expect(five.status).to.equal(400);
    expect(JSON.stringify(five.body)).to.match(/config\.entries\[0\] \(minutely\): illegal expression '\* \* \* \* \*': expected six fields/);
    expect((await call(rt.base, 'GET', '/onramp')).body).not.to.include.members(['bad', 'five']);
  });
});

describe('examples/crononome.yaml', () => {
  it('runs: ticks of its every-second entry, with payload, reach standard output as JSON lines', async () => {
    const config = join(__dirname, '../../../../examples/crononome.yaml');
    const child = spawn(process.execPath, [EDDY, 'server', 'run', '-f', config, '--no-api'], { stdio: 'pipe' });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    const lines = () => stdout.split('\n').filter((l) => l.length > 0);
    try {
      await eventually(() => lines().length >= 2, 10000, 'two ticks on stdout');
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited, stderr).to.equal(0);
    const ticks: Tick[] = lines().map((l) => JSON.parse(l));
    expect(ticks[0]).to.have.keys(['onramp', 'ingest_ns', 'id', 'trigger']);
    expect(ticks.map((t) => t.id)).to.deep.equal(ticks.map((_t, i) => i));
    expect(ticks.filter((t) => t.trigger.name === 'every-second')[0].trigger).to.deep.equal({ name: 'every-second', payload: { hello: 'world' } });
  });
});
