import { expect } from 'chai';
import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { Subject, asyncScheduler } from 'rxjs';
import type { EddyEvent, Insight, PortEvent } from '../../src/core/event';
import type { Logger } from '../../src/core/logger';
import type { OperatorContext } from '../../src/pipeline/operator';
import { parseCsv } from '../../src/pipeline/lookup/csv';
import { lookup, lookupNode, type LookupConfig } from '../../src/pipeline/operators/lookup';
import { eventually } from '../helpers/runtime';
import { requireService } from '../helpers/services';

const ev = (seq: number, data: unknown, transactional = false): EddyEvent => ({
  id: { uid: 1, seq },
  data,
  meta: {},
  ingestNs: 0n,
  originUri: 'test://x',
  isBatch: false,
  transactional,
});

/** A node on the real clock, fed by hand; what it emits, raises and logs is collected. */
function start(config: LookupConfig) {
  const raised: Insight[] = [];
  const warnings: string[] = [];
  const logger: Logger = { debug() {}, info() {}, warn: (m) => warnings.push(m), error: (m) => warnings.push(m) };
  const ctx: OperatorContext = { nodeId: 'owners', pipelineUrl: '/pipeline/p/one', uid: 7, scheduler: asyncScheduler, insight: (i) => raised.push(i), logger };
  const input = new Subject<EddyEvent>();
  const outs: PortEvent[] = [];
  const sub = lookupNode(config, ctx)
    .apply(input)
    .subscribe((o) => outs.push(o));
  return { input, outs, raised, warnings, stop: () => sub.unsubscribe() };
}

describe('enrich::lookup', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'eddy-lookup-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  describe('a CSV file', () => {
    const csv = (file: string, text: string) => writeFileSync(join(dir, file), text);

    it("puts the row of the event's key into the field `into` names; a miss passes, drops (acked) or leaves on miss", () => {
      csv('owners.csv', 'host,team,oncall\nweb1,web,"Ann, Bob"\ndb1,data,Cy\n');
      const table = { file: join(dir, 'owners.csv'), key: 'host' };
      for (const [onMiss, port] of [
        ['pass', 'out'],
        ['port', 'miss'],
        ['drop', undefined],
      ] as const) {
        const n = start({ table, key: 'event.host', into: 'owner', on_miss: onMiss });
        n.input.next(ev(1, { host: 'web1', msg: 'x' }));
        n.input.next(ev(2, { host: 'nowhere' }, true));
        n.stop();
        expect(n.outs[0]).to.deep.equal({ port: 'out', event: ev(1, { host: 'web1', msg: 'x', owner: { host: 'web1', team: 'web', oncall: 'Ann, Bob' } }) });
        if (port) expect(n.outs[1]).to.deep.equal({ port, event: ev(2, { host: 'nowhere' }, true) });
        else {
          expect(n.outs).to.have.length(1);
          expect(n.raised).to.deep.equal([{ kind: 'ack', event: ev(2, { host: 'nowhere' }, true), from: '/pipeline/p/one/owners' }]);
        }
      }
    });

    it('can put the row into meta, matches a number key with its CSV text, and sends a key that fails to err', () => {
      csv('codes.csv', 'code,text\n404,not found\n');
      const n = start({ table: { file: join(dir, 'codes.csv'), key: 'code' }, key: 'event.status', into: 'meta.status' });
      n.input.next(ev(1, { status: 404 }));
      n.input.next(ev(2, {}));
      n.stop();
      expect(n.outs[0].event.meta).to.deep.equal({ status: { code: '404', text: 'not found' } });
      expect(n.outs[1]).to.deep.equal({ port: 'err', event: { ...ev(2, {}), meta: { error: 'enrich::lookup node owners: key: field not found: status' } } });
    });

    it('reloads the file when it changes (replaced by a rename, as editors and config tools do), and keeps the old rows when the new file is broken', async () => {
      csv('t.csv', 'k,v\na,1\n');
      const n = start({ table: { file: join(dir, 't.csv'), key: 'k', check_every: 20 }, key: 'event.k', into: 'r' });
      const lookupA = async () => {
        const before = n.outs.length;
        n.input.next(ev(1, { k: 'a' }));
        return (n.outs[before].event.data as { r?: { v: string } }).r?.v;
      };
      try {
        expect(await lookupA()).to.equal('1');
        writeFileSync(join(dir, 'next.csv'), 'k,v\na,2\n');
        renameSync(join(dir, 'next.csv'), join(dir, 't.csv'));
        await eventually(async () => (await lookupA()) === '2', 5000, 'the reloaded row');
        writeFileSync(join(dir, 't.csv'), 'k,v\na,"3\n');
        await eventually(() => n.warnings.length > 0, 5000, 'the failed reload to be logged');
        expect(n.warnings[0]).to.match(
          /^enrich::lookup node owners: the table was not \(re\)loaded, 1 row kept: .*t\.csv: line 2: a quoted field is not closed$/,
        );
        expect(await lookupA()).to.equal('2');
      } finally {
        n.stop();
      }
    });

    it('refuses a missing or broken file at activation, naming it', () => {
      expect(() => start({ table: { file: join(dir, 'none.csv'), key: 'k' }, key: 'event.k', into: 'r' })).to.throw(
        /enrich::lookup node owners: table\.file: ENOENT.*none\.csv/,
      );
      csv('bad.csv', 'k,v\nx\n');
      expect(() => start({ table: { file: join(dir, 'bad.csv'), key: 'k' }, key: 'event.k', into: 'r' })).to.throw(
        'bad.csv: line 2: 1 fields, the header has 2',
      );
      csv('nokey.csv', 'k,v\n,1\n');
      expect(() => start({ table: { file: join(dir, 'nokey.csv'), key: 'id' }, key: 'event.k', into: 'r' })).to.throw(
        "nokey.csv: line 2: no value in key column 'id'",
      );
    });
  });

  it('reads JSON lines', () => {
    writeFileSync(join(dir, 't.jsonl'), '{"id": 1, "name": "one"}\n\n{"id": 2, "name": "two", "tags": ["x"]}\n');
    const n = start({ table: { file: join(dir, 't.jsonl'), key: 'id' }, key: 'event.id', into: 'who' });
    n.input.next(ev(1, { id: 2 }));
    n.stop();
    expect(n.outs[0].event.data).to.deep.equal({ id: 2, who: { id: 2, name: 'two', tags: ['x'] } });
  });

  it('refuses a bad config naming the field', () => {
    expect(() => lookup.validate!({ table: { file: 'x.csv', key: 'k' }, key: 'event.', into: 'r' }, 'n')).to.throw('enrich::lookup node n: key:');
    expect(() => lookup.validate!({ table: { file: 'x.csv', key: 'k' }, key: 'event.k', into: 'a..b' }, 'n')).to.throw(
      'enrich::lookup node n: into: empty segment',
    );
    expect(() => lookup.validate!({ table: { file: 'x.csv', key: 'k', check_every: 'often' }, key: 'event.k', into: 'r' }, 'n')).to.throw(
      'table.check_every: "often" is not a duration',
    );
  });

  describe('CSV', () => {
    it('reads quoted fields with commas, quotes and line breaks, CRLF records, and skips empty lines', () => {
      expect(parseCsv('a,b\r\n"x,1","say ""hi"""\r\n\r\n"two\nlines",\n', 'f.csv')).to.deep.equal([
        { a: 'x,1', b: 'say "hi"' },
        { a: 'two\nlines', b: '' },
      ]);
    });

    it('refuses a repeated or empty column name', () => {
      expect(() => parseCsv('a,a\n1,2\n', 'f.csv')).to.throw("f.csv: line 1: column 'a' appears twice");
      expect(() => parseCsv('a,\n1,2\n', 'f.csv')).to.throw('f.csv: line 1: an empty column name');
    });
  });

  describe('a PostgreSQL query', function () {
    this.timeout(20000);
    let client: Client;
    const tableName = `eddy_lookup_${process.pid}_${Date.now()}`;
    let address: { host: string; port: number };

    before(async function () {
      address = await requireService(this, 'postgres');
      client = new Client({ host: address.host, port: address.port, user: 'postgres', database: 'postgres' });
      await client.connect();
      await client.query(`CREATE TABLE ${tableName} (host text PRIMARY KEY, team text, size int)`);
      await client.query(`INSERT INTO ${tableName} VALUES ('web1', 'web', 3), ('db1', 'data', 5)`);
    });
    after(async () => {
      await client?.query(`DROP TABLE IF EXISTS ${tableName}`);
      await client?.end();
    });

    it('holds the sources back until the query answered, enriches what waited, and follows the table on refresh', async () => {
      const postgres = {
        host: address.host,
        port: address.port,
        user: 'postgres',
        dbname: 'postgres',
        query: `SELECT host, team, size FROM ${tableName}`,
        refresh: 50,
      };
      const n = start({ table: { postgres, key: 'host' }, key: 'event.host', into: 'owner' });
      try {
        expect(n.raised, 'held back at once').to.deep.equal([{ kind: 'trigger', from: '/pipeline/p/one/owners' }]);
        n.input.next(ev(1, { host: 'web1' }));
        await eventually(() => n.raised.length === 2, 10000, 'the restore once the query answered');
        expect(n.raised[1]).to.deep.equal({ kind: 'restore', from: '/pipeline/p/one/owners' });
        expect(n.outs[0].event.data).to.deep.equal({ host: 'web1', owner: { host: 'web1', team: 'web', size: 3 } });

        await client.query(`UPDATE ${tableName} SET team = 'frontend' WHERE host = 'web1'`);
        await eventually(
          () => {
            n.input.next(ev(2, { host: 'web1' }));
            return (n.outs[n.outs.length - 1].event.data as { owner: { team: string } }).owner.team === 'frontend';
          },
          10000,
          'the refreshed row',
        );
      } finally {
        n.stop();
      }
    });

    it('logs a query that fails and keeps holding the sources back', async () => {
      const postgres = {
        host: address.host,
        port: address.port,
        user: 'postgres',
        dbname: 'postgres',
        query: `SELECT host FROM ${tableName}_missing`,
        refresh: 50,
      };
      const n = start({ table: { postgres, key: 'host' }, key: 'event.host', into: 'owner' });
      try {
        await eventually(() => n.warnings.length > 0, 10000, 'the failure to be logged');
        expect(n.warnings[0]).to.include(`relation "${tableName}_missing" does not exist`);
        expect(n.raised).to.deep.equal([{ kind: 'trigger', from: '/pipeline/p/one/owners' }]);
      } finally {
        n.stop();
      }
    });
  });
});
