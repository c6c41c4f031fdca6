import { expect } from 'chai';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from 'pg';
import { eventually } from '../../helpers/runtime';
import { requireService, type ServiceAddress } from '../../helpers/services';
import { connection, poller, sql, tcpProxy, uniqueName, valueOf, type Poller, type Proxy } from './helpers';

/**
 * Queries shift both bounds by the same lag: intervals still follow each
 * other exactly, and a row is only polled once its INSERT (started at its
 * `ts`) has surely committed, so the tests never race a commit.
 */
const LAG = `interval '250 milliseconds'`;

describe('postgres onramp (real server)', function () {
  this.timeout(40_000);
  let pg: ServiceAddress;
  let db: Client;
  let table: string;
  let dir: string;
  const pollers: Poller[] = [];
  let proxy: Proxy | undefined;

  before(async function () {
    pg = await requireService(this, 'postgres');
    db = await sql(pg);
  });
  after(async () => db?.end());

  beforeEach(async () => {
    table = uniqueName('eddy_in');
    dir = mkdtempSync(join(tmpdir(), 'eddy-pg-'));
    await db.query(`CREATE TABLE ${table} (id int4 NOT NULL, note text, ts timestamptz NOT NULL DEFAULT clock_timestamp())`);
  });
  afterEach(async () => {
    for (const p of pollers.splice(0)) await p.stop();
    await proxy?.stop();
    proxy = undefined;
    await db.query(`DROP TABLE IF EXISTS ${table}`);
    rmSync(dir, { recursive: true, force: true });
  });

  const query = () => `SELECT id, note FROM ${table} WHERE ts >= $1::timestamptz - ${LAG} AND ts < $2::timestamptz - ${LAG} ORDER BY id`;
  const start = async (config: Record<string, unknown>) => {
    const p = await poller(config);
    pollers.push(p);
    return p;
  };
  const stop = async (p: Poller) => {
    pollers.splice(pollers.indexOf(p), 1);
    await p.stop();
  };
  const ids = (p: Poller) => p.events.map((e) => valueOf(e, 'id'));
  const insert = (from: number, to: number) => db.query(`INSERT INTO ${table} (id, note) SELECT n, 'row ' || n FROM generate_series(${from}, ${to}) AS n`);

  it('emits each row once as field records {fieldType, name, value}, interval after interval, and keeps the last interval in its cache', async () => {
    const cache = join(dir, 'sub', 'poll.cache');
    const p = await start({ ...connection(pg), query: query(), interval_ms: 20, cache: { path: cache } });
    await insert(1, 3);
    await eventually(() => p.events.length >= 3, 20_000, 'the first three rows');
    // more rows than one step hands on (256): all of them, in order
    await insert(4, 700);
    await eventually(() => p.events.length >= 700, 20_000, '700 rows');
    await insert(701, 701); // a marker: a row polled twice would show before it
    await eventually(() => p.events.length >= 701, 20_000, 'the marker row');
    expect(ids(p)).to.deep.equal(Array.from({ length: 701 }, (_, i) => i + 1));
    expect(p.events[0].data).to.deep.equal({
      id: { fieldType: 'INT4', name: 'id', value: 1 },
      note: { fieldType: 'TEXT', name: 'note', value: 'row 1' },
    });
    expect(p.events[0].originUri).to.equal(`svc-postgres://${pg.host}:${pg.port}/postgres`);
    const interval = JSON.parse(readFileSync(cache, 'utf8')) as { start: string; end: string };
    expect(interval.start).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
    expect(interval.end).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
    expect(Date.parse(interval.end)).to.be.at.least(Date.parse(interval.start));
  });

  it('resumes from its cache after a restart: rows written while it was down are read once, none twice', async () => {
    const config = { ...connection(pg), query: query(), interval_ms: 20, cache: { path: join(dir, 'poll.cache'), size: 256 } };
    const first = await start(config);
    await insert(1, 3);
    await eventually(() => first.events.length >= 3, 20_000, 'rows 1-3 in the first run');
    await stop(first);
    expect(ids(first)).to.deep.equal([1, 2, 3]);

    await insert(4, 6); // while eddy is down
    const second = await start(config);
    await insert(7, 7);
    await eventually(() => second.events.length >= 4, 20_000, 'rows 4-7 in the second run');
    expect(ids(second), 'neither re-read nor skipped').to.deep.equal([4, 5, 6, 7]);
  });

  it('a failing query is logged once and retried: the onramp keeps polling and then reads the rows of the failed intervals', async () => {
    const later = uniqueName('eddy_later');
    const p = await start({
      ...connection(pg),
      query: `SELECT id FROM ${later} WHERE ts >= $1::timestamptz - ${LAG} AND ts < $2::timestamptz - ${LAG}`,
      interval_ms: 20,
    });
    try {
      const failures = (level: string) => p.log.filter((l) => l.startsWith(level) && l.includes(`relation "${later}" does not exist`));
      await eventually(() => failures('debug').length >= 3, 20_000, 'the query failing again and again');
      expect(failures('warn')).to.have.length(1);
      expect(failures('warn')[0]).to.match(/query failed: .* the interval from \S+ is polled again/);
      await db.query(`CREATE TABLE ${later} (id int4, ts timestamptz NOT NULL DEFAULT clock_timestamp()); INSERT INTO ${later} (id) VALUES (1), (2)`);
      await eventually(() => p.events.length >= 2, 20_000, 'the rows once the table exists');
      expect(ids(p)).to.deep.equal([1, 2]);
      expect(p.log.some((l) => l.startsWith('info') && l.includes('polling again'))).to.equal(true);
    } finally {
      await db.query(`DROP TABLE IF EXISTS ${later}`);
    }
  });

  it('a lost connection is logged and reconnected: rows written during the outage are read once it is back', async () => {
    proxy = await tcpProxy(pg);
    const p = await start({ ...connection(pg), port: proxy.port, query: query(), interval_ms: 20 });
    await insert(1, 2);
    await eventually(() => p.events.length >= 2, 20_000, 'rows 1-2');
    await proxy.stop();
    await eventually(() => p.log.some((l) => l.startsWith('warn') && l.includes('connection to postgres@')), 20_000, 'the loss logged');
    await insert(3, 4); // while the onramp cannot reach the server
    await proxy.start();
    await eventually(() => p.events.length >= 4, 20_000, 'rows 3-4 after the reconnect');
    await insert(5, 5);
    await eventually(() => p.events.length >= 5, 20_000, 'row 5');
    expect(ids(p)).to.deep.equal([1, 2, 3, 4, 5]);
    expect(p.log.filter((l) => l.startsWith('warn'))).to.have.length(1);
  });

  it('does not poll while its circuit breaker is triggered, and polls again on restore', async () => {
    // every poll bumps a counter (a data-modifying WITH runs whether or not it is read)
    await db.query(`CREATE TABLE ${table}_polls (n int4 NOT NULL); INSERT INTO ${table}_polls VALUES (0)`);
    try {
      const polls = async () => (await db.query<{ n: number }>(`SELECT n FROM ${table}_polls`)).rows[0].n;
      const bumping = `WITH bump AS (UPDATE ${table}_polls SET n = n + 1) ${query()}`;
      const p = await start({ ...connection(pg), query: bumping, interval_ms: 10 });
      await eventually(async () => (await polls()) >= 3, 20_000, 'a few polls');
      p.breaker().trigger('test');
      // a poll already running finishes; then the poller parks, and no poll runs until the restore
      const onramp = p.runtime.onramp('/onramp/src/main')!.runtime;
      await eventually(() => onramp.inputs()!.reading === 0, 5000, 'the poller parked');
      const paused = await polls();
      await insert(1, 1);
      expect(await polls(), 'polls while triggered').to.equal(paused);
      expect(p.events).to.have.length(0);
      p.breaker().restore('test');
      await eventually(() => p.events.length === 1, 20_000, 'the row after the restore');
      expect(await polls()).to.be.greaterThan(paused);
    } finally {
      await db.query(`DROP TABLE IF EXISTS ${table}_polls`);
    }
  });
});
