import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from 'pg';
import { call, eventually, startRuntime, type Started } from '../../helpers/runtime';
import { requireService, type ServiceAddress } from '../../helpers/services';
import { freePort, passthrough } from '../net-helpers';
import { connection, sql, uniqueName } from './helpers';

describe('postgres over REST (real server)', function () {
  this.timeout(40_000);
  let pg: ServiceAddress;
  let db: Client;
  let rt: Started;
  let dir: string;
  const tables: string[] = [];

  before(async function () {
    pg = await requireService(this, 'postgres');
    db = await sql(pg);
  });
  after(async () => db?.end());
  beforeEach(async () => {
    rt = await startRuntime();
    dir = mkdtempSync(join(tmpdir(), 'eddy-pg-e2e-'));
  });
  afterEach(async () => {
    await rt.stop();
    for (const table of tables.splice(0)) await db.query(`DROP TABLE IF EXISTS ${table}`);
    rmSync(dir, { recursive: true, force: true });
  });

  const publish = async (artefacts: [string, unknown][]) => {
    for (const [kind, body] of artefacts) expect((await call(rt.base, 'POST', `/${kind}`, { body })).status, `POST /${kind}`).to.equal(201);
  };

  it('a postgres onramp polling one table feeds a postgres offramp writing another, published and activated over REST', async () => {
    const from = uniqueName('eddy_from');
    const to = uniqueName('eddy_to');
    tables.push(from, to);
    await db.query(`CREATE TABLE ${from} (id int8 NOT NULL, body jsonb, ts timestamptz NOT NULL DEFAULT clock_timestamp())`);
    await db.query(`CREATE TABLE ${to} (LIKE ${from})`);
    const lag = `interval '250 milliseconds'`;
    await publish([
      [
        'onramp',
        {
          id: 'rows',
          type: 'postgres',
          config: {
            ...connection(pg),
            query: `SELECT * FROM ${from} WHERE ts >= $1::timestamptz - ${lag} AND ts < $2::timestamptz - ${lag}`,
            interval_ms: 20,
            cache: { path: join(dir, 'rows.cache') },
          },
        },
      ],
      ['pipeline', passthrough('p')],
      ['offramp', { id: 'copy', type: 'postgres', config: { ...connection(pg), table: to } }],
      [
        'binding',
        { id: 'flow', links: { '/onramp/rows/{instance}/out': ['/pipeline/p/{instance}/in'], '/pipeline/p/{instance}/out': ['/offramp/copy/{instance}/in'] } },
      ],
    ]);
    expect((await call(rt.base, 'POST', '/binding/flow/main')).status).to.equal(201);
    await db.query(`INSERT INTO ${from} (id, body) SELECT n, jsonb_build_object('n', n, 'big', 9007199254740993 + n) FROM generate_series(1, 20) AS n`);
    const rows = async (table: string) =>
      (await db.query<{ row: string }>(`SELECT row_to_json(t)::text AS row FROM ${table} t ORDER BY id`)).rows.map((r) => r.row);
    await eventually(async () => (await rows(to)).length >= 20, 20_000, '20 rows copied');
    expect(await rows(to)).to.deep.equal(await rows(from));
  });

  describe('an activation that cannot connect or read its cache answers 400 naming the artefact and the cause', () => {
    const activate = async (side: 'onramp' | 'offramp', config: Record<string, unknown>) => {
      const stdout = '/offramp/system::stdout/system/in';
      const links =
        side === 'onramp'
          ? { '/onramp/src/{instance}/out': ['/pipeline/p/{instance}/in'], '/pipeline/p/{instance}/out': [stdout] }
          : { '/onramp/ticks/{instance}/out': ['/pipeline/p/{instance}/in'], '/pipeline/p/{instance}/out': ['/offramp/src/{instance}/in'] };
      await publish([
        [side, { id: 'src', type: 'postgres', config }],
        ...(side === 'offramp' ? ([['onramp', { id: 'ticks', type: 'metronome', config: { interval: 1000 } }]] as [string, unknown][]) : []),
        ['pipeline', passthrough('p')],
        ['binding', { id: 'flow', links }],
      ]);
      const reply = await call(rt.base, 'POST', '/binding/flow/main');
      return { status: reply.status, error: (reply.body as { error?: string }).error ?? reply.text };
    };
    const poll = { query: 'SELECT 1 WHERE $1::timestamptz < $2::timestamptz', interval_ms: 100 };

    it('onramp: nothing listens on the port', async () => {
      const port = await freePort();
      const answer = await activate('onramp', { ...connection(pg), port, ...poll });
      expect(answer.status).to.equal(400);
      expect(answer.error).to.match(
        new RegExp(`onramp 'src' \\(postgres\\) cannot start: cannot connect to postgres postgres@127\\.0\\.0\\.1:${port}/postgres: .*ECONNREFUSED`),
      );
    });

    it('onramp: an unknown user', async () => {
      const answer = await activate('onramp', { ...connection(pg), user: 'eddy_nobody', ...poll });
      expect(answer).to.deep.include({ status: 400 });
      expect(answer.error).to.match(/onramp 'src' \(postgres\) cannot start: cannot connect to postgres eddy_nobody@.*: role "eddy_nobody" does not exist/);
    });

    it('onramp: an unknown database', async () => {
      const answer = await activate('onramp', { ...connection(pg), dbname: 'eddy_no_such_db', ...poll });
      expect(answer).to.deep.include({ status: 400 });
      expect(answer.error).to.match(/onramp 'src' \(postgres\) cannot start: .*database "eddy_no_such_db" does not exist/);
    });

    it('onramp: a cache file that is not one eddy wrote', async () => {
      const cache = join(dir, 'broken.cache');
      writeFileSync(cache, 'not json');
      const answer = await activate('onramp', { ...connection(pg), ...poll, cache: { path: cache } });
      expect(answer).to.deep.include({ status: 400 });
      expect(answer.error).to.match(/onramp 'src' \(postgres\) cannot start: the cache .*broken\.cache is not JSON/);
      // larger than cache.size (default 4096)
      writeFileSync(cache, 'x'.repeat(5000));
      const again = await call(rt.base, 'POST', '/binding/flow/main');
      expect(again.status).to.equal(400);
      expect(String((again.body as { error?: unknown }).error)).to.match(/cannot read the cache .*: 5000 bytes, more than cache.size \(4096\)/);
    });

    it('offramp: nothing listens on the port, or an unknown user', async () => {
      const port = await freePort();
      const refused = await activate('offramp', { ...connection(pg), port, table: 'anything' });
      expect(refused.status).to.equal(400);
      expect(refused.error).to.match(
        new RegExp(`offramp 'src' \\(postgres\\) cannot start: cannot connect to postgres postgres@127\\.0\\.0\\.1:${port}/postgres: .*ECONNREFUSED`),
      );
      await call(rt.base, 'DELETE', '/binding/flow');
      await call(rt.base, 'DELETE', '/offramp/src');
      expect(
        (
          await call(rt.base, 'POST', '/offramp', {
            body: { id: 'src', type: 'postgres', config: { ...connection(pg), user: 'eddy_nobody', table: 'anything' } },
          })
        ).status,
      ).to.equal(201);
      await call(rt.base, 'POST', '/binding', {
        body: {
          id: 'flow',
          links: { '/onramp/ticks/{instance}/out': ['/pipeline/p/{instance}/in'], '/pipeline/p/{instance}/out': ['/offramp/src/{instance}/in'] },
        },
      });
      const reply = await call(rt.base, 'POST', '/binding/flow/main');
      expect(reply.status).to.equal(400);
      expect(String((reply.body as { error?: unknown }).error)).to.match(/offramp 'src' \(postgres\) cannot start: .*role "eddy_nobody" does not exist/);
    });
  });
});
