import { expect } from 'chai';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from 'pg';
import { createLogger } from '../../../src/core/logger';
import { Runtime } from '../../../src/runtime/runtime';
import { eventually } from '../../helpers/runtime';
import { requireService, type ServiceAddress } from '../../helpers/services';
import { probeOnramp, registriesWith, type ProbeLog } from '../../integration/delivery/helpers';
import { Subject } from 'rxjs';
import type { Frame } from '../../../src/connectors/connector';
import { Registries } from '../../../src/runtime/registries';
import { feedOnramp } from '../../helpers/feed-onramp';
import { passthrough } from '../net-helpers';
import { InsertStatements } from '../../../src/connectors/postgres/offramp';
import { batch, connection, directSink, event, failure, field, sql, tcpProxy, uniqueName, type DirectSink, type Proxy } from './helpers';

describe('postgres offramp (real server)', function () {
  this.timeout(40_000);
  let pg: ServiceAddress;
  let db: Client;
  let table: string;
  let sink: DirectSink | undefined;
  let proxy: Proxy | undefined;
  let runtime: Runtime | undefined;

  before(async function () {
    pg = await requireService(this, 'postgres');
    db = await sql(pg);
  });
  after(async () => db?.end());

  beforeEach(async () => {
    table = uniqueName('eddy_out');
    await db.query(`CREATE TABLE ${table} (id int4 PRIMARY KEY, "Label" text NOT NULL DEFAULT 'none', amount numeric, seen timestamptz)`);
    // counts INSERT statements (not rows): a batch must be one statement
    await db.query(`CREATE TABLE ${table}_stmts (n int4 NOT NULL)`);
    await db.query(`INSERT INTO ${table}_stmts VALUES (0)`);
    await db.query(`CREATE FUNCTION ${table}_count() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN UPDATE ${table}_stmts SET n = n + 1; RETURN NULL; END $$`);
    await db.query(`CREATE TRIGGER ${table}_count AFTER INSERT ON ${table} FOR EACH STATEMENT EXECUTE FUNCTION ${table}_count()`);
  });
  afterEach(async () => {
    await runtime?.shutdown();
    await sink?.close();
    await proxy?.stop();
    runtime = sink = proxy = undefined;
    await db.query(`DROP TABLE IF EXISTS ${table}, ${table}_stmts; DROP FUNCTION IF EXISTS ${table}_count()`);
  });

  const rows = async () => (await db.query(`SELECT id, "Label" AS label, amount, seen FROM ${table} ORDER BY id`)).rows;
  const statements = async () => (await db.query<{ n: number }>(`SELECT n FROM ${table}_stmts`)).rows[0].n;

  it('inserts an event as one row: column from `name` (quoted, case kept), omitted columns get their DEFAULT', async () => {
    sink = await directSink({ ...connection(pg), table });
    await sink.send(event(1, { a: field('INT4', 'id', 1), b: field('TEXT', 'Label', 'first'), c: field('NUMERIC', 'amount', '12.50') }));
    // a record without `name`: its key is the column
    await sink.send(event(2, { id: field('INT4', 'id', 2), seen: field('TIMESTAMPTZ', 'seen', '2024-05-06T07:08:09.5Z') }));
    const stored = await rows();
    expect(stored.map((r) => ({ ...r, seen: r.seen?.toISOString() ?? null }))).to.deep.equal([
      { id: 1, label: 'first', amount: '12.50', seen: null },
      { id: 2, label: 'none', amount: null, seen: '2024-05-06T07:08:09.500Z' },
    ]);
    expect(await statements()).to.equal(2);
  });

  it('a batch event is ONE multi-row INSERT statement; members with different columns get DEFAULTs', async () => {
    sink = await directSink({ ...connection(pg), table });
    const members = Array.from({ length: 50 }, (_, i) =>
      i % 2 === 0
        ? { id: field('INT4', 'id', i), label: field('TEXT', 'Label', `row ${i}`) }
        : { id: field('INT4', 'id', i), amount: field('NUMERIC', 'amount', i / 2) },
    );
    await sink.send(batch(1, members));
    const stored = await rows();
    expect(stored).to.have.length(50);
    expect(stored[0]).to.deep.include({ id: 0, label: 'row 0', amount: null });
    expect(stored[1]).to.deep.include({ id: 1, label: 'none', amount: '0.5' });
    expect(await statements(), 'INSERT statements for a batch of 50').to.equal(1);
  });

  it('sends rows of one shape as a named prepared statement, the same name for the same text; unnamed with prepare: false, and for rows of differing columns', async () => {
    // a column whose DEFAULT reads the inserting session's prepared statements: what the sink's connection holds
    await db.query(
      `CREATE FUNCTION ${table}_prepared() RETURNS text LANGUAGE sql AS $$ SELECT coalesce(string_agg(name, ','), '') FROM pg_prepared_statements $$`,
    );
    await db.query(`ALTER TABLE ${table} ADD COLUMN prepared text DEFAULT ${table}_prepared()`);
    const two = (from: number) =>
      batch(
        from,
        [0, 1].map((i) => ({ id: field('INT4', 'id', from + i), label: field('TEXT', 'Label', 'x') })),
      );
    const prepared = async () => (await db.query<{ id: number; prepared: string }>(`SELECT id, prepared FROM ${table} ORDER BY id`)).rows;
    try {
      sink = await directSink({ ...connection(pg), table, concurrency: 1 });
      await sink.send(two(0));
      await sink.send(two(10));
      // differing columns: unnamed (one statement per batch shape would be a name per mix)
      await sink.send(batch(20, [{ id: field('INT4', 'id', 20) }, { id: field('INT4', 'id', 21), label: field('TEXT', 'Label', 'y') }]));
      await sink.close();
      sink = await directSink({ ...connection(pg), table, concurrency: 1, prepare: false });
      await sink.send(two(30));
      const byId = new Map((await prepared()).map((r) => [r.id, r.prepared]));
      const name = byId.get(0);
      expect(name).to.match(/^eddy_[0-9a-f]{24}$/);
      expect(
        [1, 10, 11].map((id) => byId.get(id)),
        'the same statement again',
      ).to.deep.equal([name, name, name]);
      expect(
        [20, 21].map((id) => byId.get(id)),
        'differing columns, unnamed: the connection still holds the first',
      ).to.deep.equal([name, name]);
      expect(
        [30, 31].map((id) => byId.get(id)),
        'prepare: false, a new connection',
      ).to.deep.equal(['', '']);
    } finally {
      await db.query(`ALTER TABLE ${table} DROP COLUMN prepared`);
      await db.query(`DROP FUNCTION ${table}_prepared()`);
    }
  });

  it('names at most 256 statement texts (a stream of ever new column sets), the rest unnamed', () => {
    const statements = new InsertStatements('"t"', true);
    const names = Array.from({ length: 300 }, (_, i) => statements.insert([{ columns: [`"c${i}"`], params: ['1'], bytes: 1 }])[0].name);
    expect(new Set(names.slice(0, 256)).size).to.equal(256);
    expect(names.slice(256)).to.deep.equal(Array.from({ length: 44 }, () => undefined));
    // a text named before keeps its name
    expect(statements.insert([{ columns: ['"c0"'], params: ['2'], bytes: 1 }])[0].name).to.equal(names[0]);
  });

  it('a batch with one bad member stores nothing and fails with the database message', async () => {
    sink = await directSink({ ...connection(pg), table });
    await sink.send(event(1, { id: field('INT4', 'id', 7) }));
    const members = [{ id: field('INT4', 'id', 1) }, { id: field('INT4', 'id', 7) }, { id: field('INT4', 'id', 3) }];
    let error = await failure(sink.send(batch(2, members)));
    expect(error?.message).to.match(/duplicate key value violates unique constraint/);
    expect((await rows()).map((r) => r.id)).to.deep.equal([7]);
    // a value the column's type refuses: the server's own message
    error = await failure(sink.send(batch(3, [{ id: field('INT4', 'id', 4) }, { id: field('INT4', 'id', 'four') }])));
    expect(error?.message).to.match(/invalid input syntax for type integer: "four"/);
    expect((await rows()).map((r) => r.id)).to.deep.equal([7]);
  });

  it('a batch beyond 65535 parameters is split into INSERTs inside one transaction: still all or nothing', async () => {
    sink = await directSink({ ...connection(pg), table });
    // 4 columns x 16400 rows = 65600 parameters: 16383 rows fit in one statement
    const member = (id: number) => ({
      id: field('INT4', 'id', id),
      l: field('TEXT', 'Label', `r${id}`),
      a: field('NUMERIC', 'amount', id),
      s: field('TIMESTAMPTZ', 'seen', id * 1000),
    });
    const members = Array.from({ length: 16400 }, (_, i) => member(i));
    members[16399] = member(0); // a duplicate key in the second statement
    const error = await failure(sink.send(batch(1, members)));
    expect(error?.message).to.match(/duplicate key value/);
    expect((await db.query(`SELECT count(*)::int AS n FROM ${table}`)).rows[0].n, 'rows after the failed batch').to.equal(0);
    members[16399] = member(16399);
    await sink.send(batch(2, members));
    expect((await db.query(`SELECT count(*)::int AS n FROM ${table}`)).rows[0].n).to.equal(16400);
    expect(await statements(), 'statements of the stored batch (the failed one rolled back its count too)').to.equal(2);
  });

  it('refuses events that are not field records, without a statement', async () => {
    sink = await directSink({ ...connection(pg), table });
    const refused: string[] = [];
    for (const data of ['text', [1, 2], { id: 5 }, { id: { fieldType: 'INT4', name: 'id' } }, {}, { a: field('INT4', 'id', 1), b: field('INT4', 'id', 2) }]) {
      refused.push((await failure(sink.send(event(1, data))))?.message ?? 'accepted');
    }
    expect(refused).to.have.length(6);
    expect(refused[0]).to.match(/must be an object of field records/);
    expect(refused[1]).to.match(/must be an object of field records/);
    expect(refused[2]).to.match(/field "id": a field record \{fieldType, name, value\} is needed/);
    expect(refused[3]).to.match(/field "id": a field record/);
    expect(refused[4]).to.match(/no field records/);
    expect(refused[5]).to.match(/column "id" is given twice/);
    expect(await statements()).to.equal(0);
  });

  it('binds values and quotes identifiers: SQL in a value or a column name is stored as text, never run', async () => {
    const odd = uniqueName('eddy_odd');
    await db.query(`CREATE TABLE "${odd}.x" ("we""ird; col" text, "v" text)`);
    try {
      // a dot separates the schema: address the table with a dot in its name through its schema
      sink = await directSink({ ...connection(pg), table: `public.${odd}.x` });
      const value = `'); DROP TABLE ${table}; --`;
      await sink.send(event(1, { c: field('TEXT', 'we"ird; col', value), v: field('VARCHAR', 'v', '$1 \\x00 "quoted"') }));
      const { rows: stored } = await db.query(`SELECT * FROM "${odd}.x"`);
      expect(stored).to.deep.equal([{ 'we"ird; col': value, v: '$1 \\x00 "quoted"' }]);
      expect((await db.query(`SELECT to_regclass('${table}') IS NOT NULL AS exists`)).rows[0].exists).to.equal(true);
    } finally {
      await db.query(`DROP TABLE "${odd}.x"`);
    }
  });

  it('acks a transactional event once its INSERT committed and fails it with the database message', async () => {
    const log: ProbeLog = { read: 0, acks: [], fails: [] };
    runtime = new Runtime({ registries: registriesWith([probeOnramp(log)], []), logger: createLogger('silent') });
    await runtime.start();
    // every event has the same primary key: one INSERT commits, the others are refused
    runtime.publish('onramp', { id: 'src', type: 'probe', config: { count: 3, data: { id: field('INT4', 'id', 42) } } });
    runtime.publish('pipeline', passthrough('p'));
    runtime.publish('offramp', { id: 'db', type: 'postgres', config: { ...connection(pg), table, concurrency: 1 } });
    runtime.publish('binding', {
      id: 'flow',
      links: { '/onramp/src/{instance}/out': ['/pipeline/p/{instance}/in'], '/pipeline/p/{instance}/out': ['/offramp/db/{instance}/in'] },
    });
    await runtime.activate('binding', 'flow', 'main');
    await eventually(() => log.acks.length + log.fails.length === 3, 20_000, 'an ack or fail for each event');
    expect(log.acks).to.deep.equal([1]);
    expect(log.fails).to.deep.equal([2, 3]);
    expect((await rows()).map((r) => r.id)).to.deep.equal([42]);
    const counters = runtime.offramp('/offramp/db/main')!.counters;
    expect({ in: counters.in, out: counters.out, error: counters.error }).to.deep.equal({ in: 3, out: 1, error: 2 });
  });

  it('routes an INSERT the database refuses (a primary key taken) to a dead-letter file with its reason; with ack_source the source is acked once the file took it', async () => {
    const log: ProbeLog = { read: 0, acks: [], fails: [] };
    const dead = join(mkdtempSync(join(tmpdir(), 'eddy-pg-dlq-')), 'dead.json');
    runtime = new Runtime({ registries: registriesWith([probeOnramp(log)], []), logger: createLogger('silent') });
    await runtime.start();
    runtime.publish('onramp', { id: 'src', type: 'probe', config: { count: 3, data: { id: field('INT4', 'id', 42) } } });
    runtime.publish('pipeline', passthrough('p'));
    runtime.publish('pipeline', {
      id: 'dlq',
      interface: { inputs: ['in'], outputs: ['out'] },
      nodes: [{ id: 'reason', type: 'runtime::cel', config: { set: { error: 'meta.error' } } }],
      links: { in: ['reason'], reason: ['out'] },
    });
    runtime.publish('offramp', { id: 'db', type: 'postgres', config: { ...connection(pg), table, concurrency: 1 }, dead_letter: { ack_source: true } });
    runtime.publish('offramp', { id: 'dead', type: 'file', config: { file: dead } });
    runtime.publish('binding', {
      id: 'flow',
      links: {
        '/onramp/src/{instance}/out': ['/pipeline/p/{instance}/in'],
        '/pipeline/p/{instance}/out': ['/offramp/db/{instance}/in'],
        '/offramp/db/{instance}/err': ['/pipeline/dlq/{instance}/in'],
        '/pipeline/dlq/{instance}/out': ['/offramp/dead/{instance}/in'],
      },
    });
    await runtime.activate('binding', 'flow', 'main');
    await eventually(() => log.acks.length === 3, 20_000, 'an ack for each event: one inserted, two delivered as dead letters');
    expect(log.fails).to.deep.equal([]);
    expect((await rows()).map((r) => r.id)).to.deep.equal([42]);
    const letters = readFileSync(dead, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { id: { value: number }; error: { type: string; message: string; attempt: number } });
    // the two refused events, as they were sent, with the reason
    expect(letters.map((l) => l.id.value)).to.deep.equal([42, 42]);
    for (const l of letters) {
      expect(l.error).to.include({ type: 'send', attempt: 1 });
      expect(l.error.message).to.match(/duplicate key value violates unique constraint/);
    }
  });

  /** feed onramp (json) -> `nodes` -> postgres offramp `db`; the frames pushed are the events. */
  async function feedFlow(nodes: { id: string; type: string; config?: Record<string, unknown> }[]): Promise<{ frames: Subject<Frame>; acks: number[] }> {
    const frames = new Subject<Frame>();
    const acks: number[] = [];
    const registries = Registries.withBuiltins();
    registries.onramps.register('feed', feedOnramp(frames, { ack: (id) => acks.push(id.seq), fail: () => undefined }));
    runtime = new Runtime({ registries, logger: createLogger('silent') });
    await runtime.start();
    runtime.publish('onramp', { id: 'src', type: 'feed', config: {} });
    const links: Record<string, string[]> = { in: [nodes[0].id] };
    nodes.forEach((n, i) => (links[n.id] = [nodes[i + 1]?.id ?? 'out']));
    runtime.publish('pipeline', { id: 'p', interface: { inputs: ['in'], outputs: ['out'] }, nodes, links });
    runtime.publish('offramp', { id: 'db', type: 'postgres', config: { ...connection(pg), table } });
    runtime.publish('binding', {
      id: 'flow',
      links: { '/onramp/src/{instance}/out': ['/pipeline/p/{instance}/in'], '/pipeline/p/{instance}/out': ['/offramp/db/{instance}/in'] },
    });
    await runtime.activate('binding', 'flow', 'main');
    return { frames, acks };
  }

  // the same row three ways: compact JSON (an unread frame), pretty-printed (decoded: the codec cannot vouch for it), and a value
  const record = (id: number) => ({ id: field('INT4', 'id', id), label: field('TEXT', 'Label', `é "${id}"`) });
  const compact = (id: number) => JSON.stringify(record(id));
  const asFrames = (): Frame[] => [
    { stream: 0, data: Buffer.from(compact(1)), originUri: 'svc-feed://test' },
    { stream: 0, data: Buffer.from(JSON.stringify(record(2), null, 2)), originUri: 'svc-feed://test' },
    { stream: 0, value: record(3), originUri: 'svc-feed://test' },
  ];
  // the parameters sent: the id's text and the label's UTF-8 bytes (é is two), not the SQL nor the JSON
  const parameterBytes = [1, 2, 3].map((id) => String(id).length + Buffer.byteLength(`é "${id}"`)).reduce((a, b) => a + b);

  it('counts `bytes` as the bound parameters sent (not the SQL, not the events as JSON)', async () => {
    const flow = await feedFlow([{ id: 'pass', type: 'passthrough' }]);
    for (const frame of asFrames()) flow.frames.next(frame);
    await eventually(() => flow.acks.length === 3, 20_000, 'three inserts');
    expect((await rows()).map((r) => r.label)).to.deep.equal(['é "1"', 'é "2"', 'é "3"']);
    expect(runtime!.offramp('/offramp/db/main')!.counters.bytes).to.equal(parameterBytes);
  });

  it('counts `bytes` of a batch as the parameters of its one INSERT', async () => {
    const flow = await feedFlow([{ id: 'batch', type: 'generic::batch', config: { count: 3 } }]);
    for (const frame of asFrames()) flow.frames.next(frame);
    await eventually(async () => (await rows()).length === 3, 20_000, 'one batch of three rows');
    expect(await statements(), 'one INSERT for the batch').to.equal(1);
    expect(runtime!.offramp('/offramp/db/main')!.counters.bytes).to.equal(parameterBytes);
  });

  it('a lost connection triggers the breaker, sends fail back while it is down, and it restores and inserts again once the server is back', async () => {
    proxy = await tcpProxy(pg);
    sink = await directSink({ ...connection(pg), port: proxy.port, table });
    await sink.send(event(1, { id: field('INT4', 'id', 1) }));
    expect(sink.log.down).to.equal(false);

    await proxy.stop();
    let error = await failure(sink.send(event(2, { id: field('INT4', 'id', 2) })));
    expect(error?.message).to.match(/INSERT into .* failed/);
    expect(sink.log.down, 'triggered').to.equal(true);
    error = await failure(sink.send(event(3, { id: field('INT4', 'id', 3) })));
    expect(error?.message).to.match(/not connected to postgres@127\.0\.0\.1:\d+\/postgres/);

    await proxy.start();
    await eventually(() => !sink!.log.down, 20_000, 'the breaker restored');
    expect(sink.log).to.include({ triggers: 1, restores: 1 });
    await sink.send(event(4, { id: field('INT4', 'id', 4) }));
    expect((await rows()).map((r) => r.id)).to.deep.equal([1, 4]);
  });
});
