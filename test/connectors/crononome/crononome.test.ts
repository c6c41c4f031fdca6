import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { VirtualTimeScheduler, type Observable } from 'rxjs';
import type { Frame, OnrampContext } from '../../../src/connectors/connector';
import { crononome } from '../../../src/connectors/crononome/onramp';
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
    const sub = rt.runtime
      .pipeline('/pipeline/system::passthrough/one')!
      .output('out')
      .subscribe((e: EddyEvent) => origins.push(e.originUri));

    const read = (): Tick[] =>
      readFileSync(out, 'utf8')
        .split('\n')
        .filter((l) => l.length > 0)
        .map((l) => JSON.parse(l));
    await eventually(
      () => read().some((t) => t.trigger.name === 'even') && read().filter((t) => t.trigger.name === 'each').length >= 2,
      6000,
      'ticks of both entries',
    );
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

    const bad = await publish('bad', {
      entries: [
        { name: 'fine', expr: '*/5 * * * * *' },
        { name: 'broken', expr: '0 0 25 * * *' },
      ],
    });
    expect(bad.status).to.equal(400);
    expect(JSON.stringify(bad.body)).to.match(/config\.entries\[1\] \(broken\): illegal expression '0 0 25 \* \* \*'/);

    const five = await publish('five', { entries: [{ name: 'minutely', expr: '* * * * *' }] });
    expect(five.status).to.equal(400);
    expect(JSON.stringify(five.body)).to.match(/config\.entries\[0\] \(minutely\): illegal expression '\* \* \* \* \*': expected six fields/);
    expect((await call(rt.base, 'GET', '/onramp')).body).not.to.include.members(['bad', 'five']);
  });

  it('accepts a seventh field, the year (a year, range, step, list or *); a bad one is a 400 naming the entry and the year field', async () => {
    const publish = (id: string, expr: string) =>
      call(rt.base, 'POST', '/onramp', {
        body: {
          id,
          type: 'crononome',
          config: {
            entries: [
              { name: 'ok', expr: '* * * * * *' },
              { name: 'dated', expr },
            ],
          },
        },
      });
    for (const [id, expr] of [
      ['one', '0 0 0 1 1 * 2031'],
      ['past', '0 0 0 1 1 * 2001'],
      ['range', '0 0 0 1 1 * 2030-2040'],
      ['list', '0 0 0 1 1 * 2030,2032-2034,2040/5'],
      ['step', '0 0 0 1 1 * */4'],
      ['star', '0 0 0 1 1 * *'],
    ]) {
      expect((await publish(id, expr)).status, expr).to.equal(201);
    }
    const refused: [string, string, RegExp][] = [
      ['word', '0 0 0 1 1 * 20x5', /'20x5' is not a year, a range \(2027-2030\), a step \(\*\/2\) or '\*'/],
      ['early', '0 0 0 1 1 * 1969', /'1969': 1969 is not a year from 1970 to 2100/],
      ['late', '0 0 0 1 1 * 2030-2101', /'2030-2101': 2101 is not a year from 1970 to 2100/],
      ['backwards', '0 0 0 1 1 * 2040-2030', /'2040-2030': the range runs backwards/],
      ['zerostep', '0 0 0 1 1 * */0', /'\*\/0': the step must be at least 1/],
    ];
    for (const [id, expr, reason] of refused) {
      const reply = await publish(id, expr);
      expect(reply.status, expr).to.equal(400);
      const error = (reply.body as { error: string }).error;
      expect(error, expr).to.include(`config.entries[1] (dated): illegal expression '${expr}': year field '${expr.split(' ')[6]}': `);
      expect(error, expr).to.match(reason);
    }
    const eight = await publish('eight', '0 0 0 1 1 * 2030 2031');
    expect(eight.status).to.equal(400);
    expect((eight.body as { error: string }).error).to.match(
      /illegal expression '0 0 0 1 1 \* 2030 2031': expected six fields .* and an optional seventh \(year\), got 8/,
    );
  });
});

describe('crononome year field (virtual time)', () => {
  /** The onramp on a virtual clock that starts at `start`: what each entry fired, as ISO times, and what it warned. */
  const run = (start: number, until: number, entries: { name: string; expr: string }[]) => {
    const scheduler = new VirtualTimeScheduler(undefined, until);
    scheduler.frame = start;
    const warnings: string[] = [];
    const infos: string[] = [];
    const logger = {
      debug: () => undefined,
      info: (m: string) => infos.push(m),
      warn: (m: string) => warnings.push(m),
      error: (m: string) => warnings.push(m),
    };
    const ctx = { scheduler, url: '/onramp/cron/main', hostname: 'test', logger, requestExit: () => undefined } as unknown as OnrampContext;
    const source = crononome.create({ entries }, ctx) as { frames: Observable<Frame> };
    const fired: Record<string, string[]> = {};
    const sub = source.frames.subscribe((frame) => {
      const { name } = (frame.value as Tick).trigger;
      (fired[name] ??= []).push(new Date(Number(frame.ingestNs! / 1_000_000n)).toISOString());
    });
    scheduler.flush();
    sub.unsubscribe();
    return { fired, warnings, infos };
  };

  it('ignores an entry whose years are past (warned at start, never fires); entries of the current and later years fire on time', () => {
    const start = Date.UTC(2030, 5, 15, 12, 0, 0); // 2030-06-15T12:00:00Z
    // until 2032-01-01T00:30:00Z, the first tick of 'evenyears' after the start
    const { fired, warnings, infos } = run(start, Date.UTC(2032, 0, 1, 0, 30, 0), [
      { name: 'past', expr: '0 0 0 * * * 2029' },
      { name: 'pastlist', expr: '0 0 0 * * * 1999,2020-2029' },
      { name: 'earlierthisyear', expr: '0 0 0 1 1 * 2030' },
      { name: 'thisyear', expr: '0 0 0 * * * 2030' },
      { name: 'later', expr: '0 0 0 1 1 * 2031-2032' },
      // 2031 is skipped: its first instant must count
      { name: 'skipone', expr: '0 0 0 1 1 * 2032' },
      { name: 'evenyears', expr: '0 30 0 1 1 * */2' },
      { name: 'anyyear', expr: '0 0 12 1 * * *' },
    ]);
    const daily: string[] = [];
    for (let t = Date.UTC(2030, 5, 16); t < Date.UTC(2031, 0, 1); t += 86_400_000) daily.push(new Date(t).toISOString());
    expect(daily).to.have.length(199);
    const monthly: string[] = [];
    for (let m = 6; m < 24; m++) monthly.push(new Date(Date.UTC(2030, m, 1, 12)).toISOString());
    expect(fired).to.deep.equal({
      thisyear: daily,
      later: ['2031-01-01T00:00:00.000Z', '2032-01-01T00:00:00.000Z'],
      skipone: ['2032-01-01T00:00:00.000Z'],
      evenyears: ['2032-01-01T00:30:00.000Z'],
      anyyear: monthly,
    });
    expect(warnings).to.deep.equal(
      ['past', 'pastlist', 'earlierthisyear'].map(
        (name) =>
          `Onramp /onramp/cron/main: crononome entry '${name}' is ignored: '${
            { past: '0 0 0 * * * 2029', pastlist: '0 0 0 * * * 1999,2020-2029', earlierthisyear: '0 0 0 1 1 * 2030' }[name]
          }' has no time after 2030-06-15T12:00:00.000Z, it lies in the past`,
      ),
    );
    // the current year's entry ran out at the year's end
    expect(infos).to.include("Onramp /onramp/cron/main: crononome entry 'thisyear' has no upcoming time; it is done");
  });
});

describe('examples/crononome.yaml', () => {
  it('runs: ticks of its every-second entry, with payload, reach standard output as JSON lines', async () => {
    const config = join(__dirname, '../../../../examples/crononome.yaml');
    const child = spawn(process.execPath, [EDDY, 'server', 'run', '-f', config, '--no-api'], { stdio: 'pipe' });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += String(d)));
    child.stderr.on('data', (d) => (stderr += String(d)));
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
    expect(ticks.find((t) => t.trigger.name === 'every-second')!.trigger).to.deep.equal({ name: 'every-second', payload: { hello: 'world' } });
  });
});
