import { expect } from 'chai';
import { appendFileSync, mkdtempSync, renameSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { Subject, asyncScheduler } from 'rxjs';
import type { EddyEvent, Insight, PortEvent } from '../../src/core/event';
import type { Logger } from '../../src/core/logger';
import type { OperatorContext } from '../../src/pipeline/operator';
import { parseCsv } from '../../src/pipeline/lookup/csv';
import { FileTable, type LoadObserver } from '../../src/pipeline/lookup/file-table';
import type { LookupTable } from '../../src/pipeline/lookup/tables';
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

/** A node on the real clock, fed by hand; what it emits, raises and logs is collected. `table`: the node's table, made here when absent. */
function start(config: LookupConfig, table?: LookupTable) {
  const raised: Insight[] = [];
  const warnings: string[] = [];
  const infos: string[] = [];
  const logger: Logger = { debug: () => undefined, info: (m) => infos.push(m), warn: (m) => warnings.push(m), error: (m) => warnings.push(m) };
  const ctx: OperatorContext = { nodeId: 'owners', pipelineUrl: '/pipeline/p/one', uid: 7, scheduler: asyncScheduler, insight: (i) => raised.push(i), logger };
  const input = new Subject<EddyEvent>();
  const outs: PortEvent[] = [];
  const sub = lookupNode(config, ctx, table)
    .apply(input)
    .subscribe((o) => outs.push(o));
  /** the row `into: r` got for key `k`, looked up now */
  const lookUp = (k: string) => {
    const before = outs.length;
    input.next(ev(1, { k }));
    return (outs[before].event.data as { r?: Record<string, string> }).r;
  };
  return { input, outs, raised, warnings, infos, lookUp, stop: () => sub.unsubscribe() };
}

/** A table whose refreshes are counted: a check of the file, whether or not it reads it. */
class CountedChecks implements LookupTable {
  checks = 0;
  constructor(private readonly inner: LookupTable) {}
  get rows() {
    return this.inner.rows;
  }
  get loaded() {
    return this.inner.loaded;
  }
  refresh(signal?: AbortSignal) {
    this.checks++;
    return this.inner.refresh(signal);
  }
}

describe('enrich::lookup', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'eddy-lookup-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  describe('a CSV file', () => {
    const csv = (file: string, text: string) => writeFileSync(join(dir, file), text);
    /** writes `text` over `file` by a rename, so no check sees it half-written */
    const replace = (file: string, text: string) => {
      writeFileSync(join(dir, 'next'), text);
      renameSync(join(dir, 'next'), join(dir, file));
    };

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
          /^enrich::lookup node owners: the table was not \(re\)loaded, 1 row kept \(tried again when the file changes\): .*t\.csv: line 2: a quoted field is not closed$/,
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

    it('reads a broken version of the file once and warns once; tries again only when the file changes, and logs a reload with rows and time', async () => {
      csv('t.csv', 'k,v\na,1\n');
      const file = join(dir, 't.csv');
      let reads = 0;
      const table = new CountedChecks(new FileTable(file, 'k', { observer: { read: () => reads++ } }));
      const n = start({ table: { file, key: 'k', check_every: 5 }, key: 'event.k', into: 'r' }, table);
      /** waits for `count` more checks of the file */
      const checks = async (count: number) => {
        const target = table.checks + count;
        await eventually(() => table.checks >= target, 5000, `${count} more checks`);
      };
      try {
        expect(reads, 'at activation').to.equal(1);
        replace('t.csv', 'k,v\na,"2\n');
        await eventually(() => n.warnings.length > 0, 5000, 'the failed reload to be logged');
        await checks(5);
        expect(reads, 'the broken version read once').to.equal(2);
        expect(n.warnings).to.have.length(1);
        expect(n.warnings[0]).to.include('t.csv: line 2: a quoted field is not closed');

        // another broken version: read once more, one more warning
        replace('t.csv', 'k,v\na,2,x\n');
        await eventually(() => n.warnings.length > 1, 5000, 'the second broken version to be logged');
        await checks(5);
        expect(reads).to.equal(3);
        expect(n.warnings).to.have.length(2);
        expect(n.warnings[1]).to.include('t.csv: line 2: 3 fields, the header has 2');
        expect(n.lookUp('a')).to.deep.equal({ k: 'a', v: '1' });

        // gone: one warning however many checks
        unlinkSync(file);
        await eventually(() => n.warnings.length > 2, 5000, 'the missing file to be logged');
        await checks(5);
        expect(n.warnings).to.have.length(3);
        expect(n.warnings[2], JSON.stringify(n.warnings)).to.match(/1 row kept \(tried again when the file changes\): ENOENT/);

        expect(n.infos).to.deep.equal([]);
        replace('t.csv', 'k,v\na,3\nb,4\n');
        await eventually(() => n.infos.length > 0, 5000, 'the reload to be logged');
        expect(n.infos).to.have.length(1);
        expect(n.infos[0]).to.match(new RegExp(`^enrich::lookup node owners: table reloaded from ${file.replace(/[.]/g, '\\.')}: 2 rows in \\d+ ms$`));
        expect(n.lookUp('b')).to.deep.equal({ k: 'b', v: '4' });
        expect(reads).to.equal(4);
      } finally {
        n.stop();
      }
    });

    it('keeps answering events from the old table while a large one loads, piece by piece between other work, and swaps at the end', async () => {
      csv('t.csv', 'k,v\na,old\n');
      const file = join(dir, 't.csv');
      const rows = 50_000;
      writeFileSync(join(dir, 'next.csv'), ['k,v', ...Array.from({ length: rows }, (_, i) => `${i === rows - 1 ? 'a' : `k${i}`},new`)].join('\n') + '\n');
      // the turns of the event loop, counted by a setImmediate that renews itself, and the turn each piece was parsed in
      let turns = 0;
      let counting = true;
      const count = () => {
        turns++;
        if (counting) setImmediate(count);
      };
      const piecesAt: number[] = [];
      const answers: (string | undefined)[] = [];
      const observer: LoadObserver = { piece: () => piecesAt.push(turns) };
      const n = start({ table: { file, key: 'k', check_every: 2 }, key: 'event.k', into: 'r' }, new FileTable(file, 'k', { chunkBytes: 16 * 1024, observer }));
      // an event every turn, answered by the table of the moment
      const ask = () => {
        if (!counting) return;
        answers.push(n.lookUp('a')?.v);
        setImmediate(ask);
      };
      try {
        renameSync(join(dir, 'next.csv'), file);
        setImmediate(count);
        setImmediate(ask);
        await eventually(() => n.infos.length > 0, 10000, 'the reload');
        counting = false;
        expect(n.infos[0]).to.include(`: ${rows} rows in `);
        expect(piecesAt.length, 'pieces').to.be.greaterThan(20);
        // the event loop turned between the first and the last piece, again and again: no piece waits for the whole file
        expect(new Set(piecesAt).size, 'turns in which pieces were parsed').to.be.greaterThan(piecesAt.length / 2);
        // events asked meanwhile were answered from the old row, then from the new one, never nothing
        const firstNew = answers.indexOf('new');
        expect(firstNew, 'answers from the old table before the new one').to.be.greaterThan(piecesAt.length / 2);
        expect(answers.slice(0, firstNew).every((v) => v === 'old')).to.equal(true);
        expect(answers.slice(firstNew).every((v) => v === 'new')).to.equal(true);
      } finally {
        counting = false;
        n.stop();
      }
    });

    it('does not take a file written in place while it was read: the next check reads it again', async () => {
      csv('t.csv', 'k,v\na,1\n');
      const file = join(dir, 't.csv');
      let pieces = 0;
      // the first piece of the reload appends a row to the file being read
      const observer: LoadObserver = {
        piece: () => {
          if (pieces++ === 0) appendFileSync(file, 'late,9\n');
        },
      };
      const table = new FileTable(file, 'k', { chunkBytes: 64, observer });
      replace('t.csv', ['k,v', ...Array.from({ length: 50 }, (_, i) => `k${i},${i}`)].join('\n') + '\n');
      expect(await table.refresh(), 'the read that saw the file change').to.deep.equal({ kind: 'unchanged' });
      expect([...table.rows.keys()]).to.deep.equal(['a']);
      expect(await table.refresh()).to.include({ kind: 'loaded', rows: 51 });
      expect(table.rows.get('late')).to.deep.equal({ k: 'late', v: '9' });
    });

    it("reads a file that starts with a byte-order mark (as Excel writes), a ';' delimiter, and a .tsv file's tabs", () => {
      csv('bom.csv', '\ufeffhost;team\r\nweb1;"web; front"\r\n');
      const a = start({ table: { file: join(dir, 'bom.csv'), key: 'host', delimiter: ';' }, key: 'event.k', into: 'r' });
      expect(a.lookUp('web1')).to.deep.equal({ host: 'web1', team: 'web; front' });
      a.stop();
      csv('t.tsv', 'host\tteam\nweb1\tweb, front\n');
      const b = start({ table: { file: join(dir, 't.tsv'), key: 'host' }, key: 'event.k', into: 'r' });
      expect(b.lookUp('web1')).to.deep.equal({ host: 'web1', team: 'web, front' });
      b.stop();
      csv('pipes.csv', 'host|team\nweb1|web\n');
      const c = start({ table: { file: join(dir, 'pipes.csv'), key: 'host', delimiter: '|' }, key: 'event.k', into: 'r' });
      expect(c.lookUp('web1')).to.deep.equal({ host: 'web1', team: 'web' });
      c.stop();
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
    expect(() => lookup.validate!({ table: { file: 'x.csv', key: 'k', delimiter: '"' }, key: 'event.k', into: 'r' }, 'n')).to.throw(
      'enrich::lookup node n: table.delimiter cannot be "\\"" (it has a meaning of its own in CSV)',
    );
    expect(() => lookup.validate!({ table: { file: 'x.csv', key: 'k', delimiter: ';;' }, key: 'event.k', into: 'r' }, 'n')).to.throw(
      'enrich::lookup node n: table.delimiter must be one character, not ";;"',
    );
    expect(() => lookup.validate!({ table: { file: 'x.jsonl', key: 'k', delimiter: ';' }, key: 'event.k', into: 'r' }, 'n')).to.throw(
      'enrich::lookup node n: table.delimiter: "x.jsonl" is read as JSON lines (only a .csv or .tsv file has a delimiter)',
    );
  });

  describe('CSV', () => {
    it('reads quoted fields with commas, quotes and line breaks, CRLF records, and skips empty lines', () => {
      expect(parseCsv('a,b\r\n"x,1","say ""hi"""\r\n\r\n"two\nlines",\n', 'f.csv')).to.deep.equal([
        { a: 'x,1', b: 'say "hi"' },
        { a: 'two\nlines', b: '' },
      ]);
    });

    it("drops a UTF-8 byte-order mark before the first column's name, reads other delimiters, and keeps a line of one quoted empty field", () => {
      expect(parseCsv('\ufeffhost,team\nweb1,web\n', 'f.csv')).to.deep.equal([{ host: 'web1', team: 'web' }]);
      expect(parseCsv('host;team\nweb1;"a;b"\n', 'f.csv', ';')).to.deep.equal([{ host: 'web1', team: 'a;b' }]);
      expect(parseCsv('host\tteam\nweb1\ta,b\n', 'f.csv', '\t')).to.deep.equal([{ host: 'web1', team: 'a,b' }]);
      expect(parseCsv('a\n""\n\n', 'f.csv')).to.deep.equal([{ a: '' }]);
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
