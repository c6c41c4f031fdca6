import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from 'pg';
import type { EddyEvent } from '../../../src/core/event';
import { eventually } from '../../helpers/runtime';
import { requireService, type ServiceAddress } from '../../helpers/services';
import { connection, directSink, event, field, poller, serverNow, sql, uniqueName, type DirectSink, type Poller } from './helpers';

/**
 * Every field type, written by the offramp, read back by the onramp; and the
 * records the onramp read, written again by the offramp, give the same row.
 * Each entry: column, its SQL type, the fieldType and value written, and the
 * fieldType and value read back.
 */
const COLUMNS: [string, string, string, unknown, string, unknown][] = [
  ['v_varchar', 'varchar(40)', 'VARCHAR', 'héllo wörld', 'VARCHAR', 'héllo wörld'],
  ['v_text', 'text', 'TEXT', 'two\nlines, "quotes", \\ and \'', 'TEXT', 'two\nlines, "quotes", \\ and \''],
  ['v_int2', 'int2', 'INT2', -32768, 'INT2', -32768],
  ['v_int4', 'int4', 'INT4', 2147483647, 'INT4', 2147483647],
  ['v_int8', 'int8', 'INT8', 9007199254740993n, 'INT8', 9007199254740993n],
  ['v_int8_small', 'int8', 'INT8', -42, 'INT8', -42],
  ['v_float4', 'float4', 'FLOAT4', 0.1, 'FLOAT4', 0.1],
  ['v_float8', 'float8', 'FLOAT8', Math.PI, 'FLOAT8', Math.PI],
  ['v_float8_inf', 'float8', 'double precision', -Infinity, 'FLOAT8', -Infinity],
  ['v_bool', 'bool', 'BOOL', true, 'BOOL', true],
  [
    'v_json',
    'json',
    'JSON',
    { a: [1, 'two', null, { b: false }], big: 123456789012345678901n },
    'JSON',
    { a: [1, 'two', null, { b: false }], big: 123456789012345678901n },
  ],
  ['v_json_string', 'json', 'JSON', 'just a string', 'JSON', 'just a string'],
  ['v_jsonb', 'jsonb', 'JSONB', { z: 1, a: { nested: [true] } }, 'JSONB', { z: 1, a: { nested: [true] } }],
  ['v_bytea', 'bytea', 'BYTEA', Buffer.from([0, 1, 2, 255]), 'BYTEA', Buffer.from([0, 1, 2, 255])],
  ['v_bytea_b64', 'bytea', 'BYTEA', 'AAEC/w==', 'BYTEA', Buffer.from([0, 1, 2, 255])],
  ['v_date', 'date', 'DATE', '2024-02-29', 'DATE', '2024-02-29'],
  ['v_timestamp', 'timestamp', 'TIMESTAMP', '2024-02-29T23:59:59.999999', 'TIMESTAMP', '2024-02-29T23:59:59.999999'],
  ['v_timestamptz', 'timestamptz', 'TIMESTAMPTZ', '2024-02-29T23:59:59.123456+02:00', 'TIMESTAMPTZ', '2024-02-29T21:59:59.123456Z'],
  ['v_timestamptz_ns', 'timestamptz', 'timestamp with time zone', 1700000000123456789n, 'TIMESTAMPTZ', '2023-11-14T22:13:20.123456Z'],
  ['v_uuid', 'uuid', 'UUID', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', 'UUID', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'],
  ['v_numeric', 'numeric', 'NUMERIC', '3.14159265358979323846264338327950288', 'NUMERIC', '3.14159265358979323846264338327950288'],
  ['v_int_array', 'int4[]', 'INT4[]', '{1,2,3}', 'INT4[]', '{1,2,3}'],
  ['v_enum', 'MOOD', 'MOOD', 'happy', 'MOOD', 'happy'],
];

describe('postgres field types: a round trip of every type through the offramp and the onramp (real server)', function () {
  this.timeout(40_000);
  let pg: ServiceAddress;
  let db: Client;
  let source: string;
  let copy: string;
  let mood: string;
  let dir: string;
  const sinks: DirectSink[] = [];
  let reader: Poller | undefined;

  before(async function () {
    pg = await requireService(this, 'postgres');
    db = await sql(pg);
  });
  after(async () => db?.end());

  beforeEach(async () => {
    source = uniqueName('eddy_types');
    copy = `${source}_copy`;
    mood = `${source}_mood`;
    dir = mkdtempSync(join(tmpdir(), 'eddy-pg-types-'));
    await db.query(`CREATE TYPE ${mood} AS ENUM ('sad', 'happy')`);
    const columns = COLUMNS.map(([name, type]) => `${name} ${type === 'MOOD' ? mood : type}`).join(', ');
    await db.query(`CREATE TABLE ${source} (id int4 NOT NULL, ts timestamptz NOT NULL DEFAULT clock_timestamp(), ${columns})`);
    await db.query(`CREATE TABLE ${copy} (LIKE ${source})`);
  });
  afterEach(async () => {
    await reader?.stop();
    reader = undefined;
    for (const s of sinks.splice(0)) await s.close();
    await db.query(`DROP TABLE IF EXISTS ${source}, ${copy}; DROP TYPE IF EXISTS ${mood}`);
    rmSync(dir, { recursive: true, force: true });
  });

  it('writes every type, reads back the same values with their fieldType, and the records read write the same row again', async () => {
    const writer = await directSink({ ...connection(pg), table: source });
    sinks.push(writer);
    // the poller starts where the cache says: before the rows below
    const cache = join(dir, 'types.cache');
    const before = await serverNow(db);
    writeFileSync(cache, JSON.stringify({ start: before, end: before }));

    const written = Object.fromEntries(COLUMNS.map(([name, , fieldType, value]) => [name, field(fieldType, name, value)]));
    await writer.send(event(1, { id: field('INT4', 'id', 1), ...written }));
    await writer.send(event(2, { id: field('INT4', 'id', 2) })); // every other column NULL

    reader = await poller({
      ...connection(pg),
      query: `SELECT * FROM ${source} WHERE ts >= $1 AND ts < $2 ORDER BY id`,
      interval_ms: 20,
      cache: { path: cache },
    });
    await eventually(() => reader!.events.length >= 2, 20_000, 'both rows');
    expect(reader.events).to.have.length(2);
    const [full, empty] = reader.events.map((e: EddyEvent) => e.data as Record<string, { fieldType: string; name: string; value: unknown }>);

    const expected = Object.fromEntries(
      COLUMNS.map(([name, , , , fieldType, value]) => [name, { fieldType: fieldType === 'MOOD' ? mood.toUpperCase() : fieldType, name, value }]),
    );
    const { id, ts, ...values } = full;
    expect(id).to.deep.equal({ fieldType: 'INT4', name: 'id', value: 1 });
    expect(ts.fieldType).to.equal('TIMESTAMPTZ');
    expect(ts.value).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z$/);
    for (const [name] of COLUMNS) expect(values[name], name).to.deep.equal(expected[name]);
    expect(Object.keys(values)).to.deep.equal(COLUMNS.map(([name]) => name));
    for (const [name] of COLUMNS) expect(empty[name], `${name} of the NULL row`).to.deep.equal({ ...expected[name], value: null });

    // what the onramp emits is what the offramp takes: the same rows again, byte for byte
    const copier = await directSink({ ...connection(pg), table: copy });
    sinks.push(copier);
    for (const [i, e] of reader.events.entries()) await copier.send(event(10 + i, e.data));
    const texts = async (table: string) =>
      (await db.query<{ row: string }>(`SELECT row_to_json(t)::text AS row FROM ${table} t ORDER BY id`)).rows.map((r) => r.row);
    expect(await texts(copy)).to.deep.equal(await texts(source));
  });
});
