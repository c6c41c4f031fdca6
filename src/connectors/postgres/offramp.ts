import { createHash } from 'node:crypto';
import type * as Pg from 'pg';
import type { QueryConfig } from 'pg';
import { requirePackage } from '../../core/packages';
import type { Subscription } from '../../core/rx';
import type { EddyEvent } from '../../core/event';
import type { OfframpContext, OfframpType, Sink } from '../connector';
import { Backoff } from '../_shared/backoff';
import { batchValues } from '../../core/event';
import { clientConfig, connectionProperties, describe, isConnectionError } from './connection';
import { canonicalType, toParam, type Param } from './types';
import { s } from '../../schema/typed';
import type { Static } from '../../schema/typed';

const { Pool } = requirePackage<typeof Pg>('pg', 'the postgres offramp');

const configSchema = s.object(
  {
    ...connectionProperties,
    table: s.string({
      minLength: 1,
      description: 'table to insert into: `name` or `schema.name` (the first dot separates the schema); each part is quoted as written, so case matters',
    }),
    prepare: s.boolean({
      default: true,
      description:
        'send the INSERTs as named prepared statements (parsed and planned once per connection); false behind a connection pooler that cannot keep them (PgBouncer in transaction mode before 1.21)',
    }),
    concurrency: s.integer({
      minimum: 1,
      maximum: 64,
      default: 4,
      description:
        'INSERTs running at most (connections in the pool); as many more wait ready behind them, and at twice this many sent the circuit breaker is triggered until half have finished',
    }),
  },
  { description: 'Inserts each event as a row of a PostgreSQL table.', required: ['host', 'user', 'dbname', 'table'] },
);

export type PostgresOfframpConfig = Static<typeof configSchema>;

/** PostgreSQL's limit of bound parameters in one statement (a 16-bit count in the protocol). */
const MAX_PARAMS = 65535;
/** named (prepared) statement texts per offramp at most; past them, statements go unnamed */
const MAX_NAMED = 256;

/**
 * postgres: each event is one INSERT of its field records
 * (`{column: {fieldType, name, value}}`) into `table`; a batch event is one
 * multi-row INSERT, so its rows are stored together or not at all. Values
 * are bound parameters, identifiers are quoted; the codec and postprocessors
 * are not used (the spec). Acked (auto-ack, the spec's "always") once the
 * INSERT committed; failed with the database's message otherwise. A lost
 * connection triggers the circuit breaker and is retried with a bounded
 * back-off until the server answers again, then the breaker is restored.
 */
export const postgresOfframp: OfframpType<PostgresOfframpConfig> = {
  name: 'postgres',
  defaultCodec: 'json',
  placement: 'every-worker', // inserts in parallel (docs/workers.md)
  autoAck: true,
  // batches ready behind the running INSERTs: a finishing connection takes the next one at once instead of
  // idling while the sources, restored at half, make it (at `concurrency` the pool sat at 2 to 4 busy of 4;
  // at 2x, restored with nothing waiting, eddy's process idled 22-30 % of the time: bench/README.md, Sinks)
  maxInFlight: (config) => 4 * config.concurrency,
  // rows are built from the values: the machinery encodes nothing; `bytes` counts the parameters sent
  ignoresPayloads: true,
  example: { host: '127.0.0.1', port: 5432, user: 'postgres', password: '', dbname: 'postgres', table: 'events' },
  configSchema,
  async create(config, ctx) {
    const sink = new PostgresSink(config, ctx);
    await sink.open();
    return sink;
  },
};

/** One row: its quoted column names and, in the same order, their parameters. */
export interface Row {
  columns: string[];
  params: Param[];
  /** the parameters' share of the `bytes` metric */
  bytes: number;
}

class PostgresSink implements Sink {
  private readonly pool: Pg.Pool;
  private readonly table: string;
  private readonly target: string;
  /** why the connection is down; undefined while it is up */
  private down: string | undefined;
  private probe: Subscription | undefined;
  private readonly backoff = new Backoff();
  private closed = false;
  /**
   * INSERTs running, at most `concurrency`; the others wait here in order.
   * The pool would queue them too, but its wait counts against the connect
   * timeout, so a slow statement would fail the events behind it.
   */
  private running = 0;
  private readonly waiting: (() => void)[] = [];
  private readonly statements: InsertStatements;
  private readonly rows = new RowBuilder();

  constructor(
    private readonly config: PostgresOfframpConfig,
    private readonly ctx: OfframpContext,
  ) {
    this.table = quoteTable(config.table);
    this.statements = new InsertStatements(this.table, config.prepare);
    this.target = describe(config);
    this.pool = new Pool({ ...clientConfig(config, ctx.url), max: config.concurrency, idleTimeoutMillis: 30_000 });
    // an idle pooled connection that dies is dropped by the pool; the next INSERT on a new one tells whether the server is gone
    this.pool.on('error', (err) => ctx.logger.debug(`postgres offramp ${ctx.url}: idle connection closed: ${err.message}`));
  }

  /** Connects once, so an unreachable server or a refused login fails the activation. */
  async open(): Promise<void> {
    try {
      await this.pool.query('SELECT 1');
    } catch (err) {
      await this.pool.end().catch(() => undefined);
      throw new Error(`cannot connect to postgres ${this.target}: ${(err as Error).message}`);
    }
  }

  send(_payloads: Buffer[], event: EddyEvent): Promise<void> | void {
    // down: fail back to the source at once instead of queueing behind a dead server
    if (this.down !== undefined) throw this.notConnected();
    const rows = (event.isBatch ? batchValues(event.data) : [event.data]).map((value, i) => this.rows.build(value, event.isBatch ? i : undefined));
    if (rows.length === 0) return; // an empty batch: nothing to store
    const statements = this.statements.insert(rows);
    let bytes = 0;
    for (const row of rows) bytes += row.bytes;
    this.ctx.countBytes(bytes);
    return this.run(statements);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.probe?.unsubscribe();
    this.probe = undefined;
    await this.pool.end();
  }

  private async run(statements: QueryConfig[]): Promise<void> {
    if (this.running < this.config.concurrency) this.running++;
    else await new Promise<void>((resolve) => this.waiting.push(resolve)); // the finishing INSERT hands its slot over
    try {
      if (this.down !== undefined) throw this.notConnected(); // lost while this one waited
      await this.insert(statements);
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    }
  }

  private async insert(statements: QueryConfig[]): Promise<void> {
    try {
      if (statements.length === 1) {
        await this.pool.query(statements[0]);
        return;
      }
      // a batch beyond the parameter limit: several statements in one transaction, still all or nothing
      const client = await this.pool.connect();
      let broken: Error | undefined;
      try {
        await client.query('BEGIN');
        for (const statement of statements) await client.query(statement);
        await client.query('COMMIT');
      } catch (err) {
        broken = err as Error;
        await client.query('ROLLBACK').catch(() => undefined);
        throw err;
      } finally {
        // a connection error destroys the client instead of returning it to the pool
        client.release(broken !== undefined && isConnectionError(broken) ? broken : undefined);
      }
    } catch (err) {
      if (isConnectionError(err)) this.lost(err as Error);
      throw new Error(`postgres offramp: INSERT into ${this.table} failed: ${(err as Error).message}`);
    }
  }

  private notConnected(): Error {
    return new Error(`postgres offramp: not connected to ${this.target} (${this.down})`);
  }

  /** The connection is gone: hold the sources and probe with a bounded back-off. */
  private lost(err: Error): void {
    if (this.closed || this.down !== undefined) return;
    this.down = err.message;
    this.ctx.logger.warn(`postgres offramp ${this.ctx.url}: connection to ${this.target} lost (${err.message}); reconnecting`);
    this.ctx.trigger();
    this.scheduleProbe();
  }

  private scheduleProbe(): void {
    const delay = this.backoff.next();
    this.probe = this.ctx.scheduler.schedule(() => {
      this.probe = undefined;
      void this.reconnect();
    }, delay);
  }

  private async reconnect(): Promise<void> {
    if (this.closed) return;
    try {
      await this.pool.query('SELECT 1');
    } catch (err) {
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- close() may have run during the await
      if (this.closed) return;
      this.down = (err as Error).message;
      this.ctx.logger.debug(`postgres offramp ${this.ctx.url}: ${this.target} still unreachable: ${this.down}`);
      this.scheduleProbe();
      return;
    }
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- close() may have run during the await
    if (this.closed) return;
    this.down = undefined;
    this.backoff.reset();
    this.ctx.logger.info(`postgres offramp ${this.ctx.url}: connected to ${this.target} again`);
    this.ctx.restore();
  }
}

/** A parameter's share of the `bytes` metric: its UTF-8 text, or its binary bytes (the statement text is not counted). */
function paramBytes(param: Param): number {
  if (typeof param === 'string') return Buffer.byteLength(param);
  return param === null ? 0 : param.length;
}

/** A double-quoted identifier: embedded quotes doubled, so any name is taken literally. */
export function quoteIdent(name: string): string {
  if (name.includes('\0')) throw new Error(`an identifier cannot contain a NUL character: ${JSON.stringify(name)}`);
  return `"${name.replace(/"/g, '""')}"`;
}

/** `name` or `schema.name`, quoted. */
function quoteTable(table: string): string {
  const dot = table.indexOf('.');
  return dot < 0 ? quoteIdent(table) : `${quoteIdent(table.slice(0, dot))}.${quoteIdent(table.slice(dot + 1))}`;
}

/**
 * Values met again and again in a stream, computed once: the quoted column
 * of a name and the canonical fieldType. Each holds at most 1,000 entries
 * (emptied when full), so a stream of ever new names cannot grow it.
 */
class Memo {
  private readonly map = new Map<string, string>();
  constructor(private readonly compute: (key: string) => string) {}
  get(key: string): string {
    let value = this.map.get(key);
    if (value === undefined) {
      if (this.map.size >= 1000) this.map.clear();
      value = this.compute(key); // throws before anything is stored for a name that cannot be quoted
      this.map.set(key, value);
    }
    return value;
  }
}

const quotedColumns = new Memo(quoteIdent);
const canonicalTypes = new Memo(canonicalType);

/**
 * The row of one event: its field records as quoted columns and parameters.
 * The column is the record's `name` (the spec's field name in the table), or
 * its key when it has none.
 */
export function toRow(data: unknown, member: number | undefined): Row {
  const where = member === undefined ? 'the event' : `batch member ${member}`;
  if (data === null || typeof data !== 'object' || Array.isArray(data) || Buffer.isBuffer(data)) {
    throw new Error(`postgres offramp: ${where} must be an object of field records {column: {fieldType, name, value}}`);
  }
  const columns: string[] = [];
  const params: Param[] = [];
  let bytes = 0;
  const fields = data as Record<string, unknown>;
  for (const key of Object.keys(fields)) {
    const record = fields[key];
    if (record === null || typeof record !== 'object' || Array.isArray(record) || !('value' in record)) {
      throw new Error(`postgres offramp: ${where}, field ${JSON.stringify(key)}: a field record {fieldType, name, value} is needed`);
    }
    const { fieldType, name, value } = record as { fieldType?: unknown; name?: unknown; value: unknown };
    if (fieldType !== undefined && typeof fieldType !== 'string')
      throw new Error(`postgres offramp: ${where}, field ${JSON.stringify(key)}: fieldType must be a string`);
    if (name !== undefined && (typeof name !== 'string' || name === ''))
      throw new Error(`postgres offramp: ${where}, field ${JSON.stringify(key)}: name must be a non-empty string`);
    const column = quotedColumns.get(name ?? key);
    // a handful of columns: a scan is cheaper than a set per row
    if (columns.includes(column)) throw new Error(`postgres offramp: ${where}: column ${column} is given twice`);
    try {
      const param = toParam(canonicalTypes.get(fieldType ?? ''), value);
      params.push(param);
      bytes += paramBytes(param);
    } catch (err) {
      throw new Error(`postgres offramp: ${where}, column ${column}: ${(err as Error).message}`);
    }
    columns.push(column);
  }
  if (columns.length === 0) throw new Error(`postgres offramp: ${where} has no field records: nothing to insert`);
  return { columns, params, bytes };
}

/**
 * Rows of events, with a fast path for the common stream whose events all
 * have the same field records in the same order (the same keys, names and
 * fieldTypes): the last valid row's shape is kept, and an event of that
 * shape is only compared with it (string comparisons) and its values
 * converted, without looking up columns and types or checking for
 * duplicates again (the shape was checked once). Anything else, errors
 * included, takes `toRow`, which then gives the shape for the next ones.
 * Measured: bench/sinks.ts postgres, bench/README.md.
 */
export class RowBuilder {
  private shape: RowShape | undefined;

  build(data: unknown, member: number | undefined): Row {
    if (this.shape !== undefined && data !== null && typeof data === 'object') {
      const row = this.shape.row(data as Record<string, unknown>);
      if (row !== undefined) return row;
    }
    const row = toRow(data, member);
    this.shape = new RowShape(data as Record<string, unknown>, row.columns);
    return row;
  }
}

/** The field records of a valid row as `toRow` found them: keys, names, fieldTypes, and what they became. */
class RowShape {
  private readonly keys: string[];
  private readonly names: unknown[];
  private readonly fieldTypes: unknown[];
  /** the canonical fieldType of each column, what toParam takes */
  private readonly types: string[];

  constructor(
    fields: Record<string, unknown>,
    private readonly columns: string[],
  ) {
    this.keys = Object.keys(fields);
    const records = this.keys.map((key) => fields[key] as { fieldType?: string; name?: string });
    this.names = records.map((r) => r.name);
    this.fieldTypes = records.map((r) => r.fieldType);
    this.types = records.map((r) => canonicalTypes.get(r.fieldType ?? ''));
  }

  /** The row of `fields` when it has exactly this shape and every value converts; else undefined (toRow says why). */
  row(fields: Record<string, unknown>): Row | undefined {
    if (Array.isArray(fields) || Buffer.isBuffer(fields)) return undefined;
    const keys = Object.keys(fields);
    const n = this.keys.length;
    if (keys.length !== n) return undefined;
    const params: Param[] = [];
    let bytes = 0;
    for (let i = 0; i < n; i++) {
      if (keys[i] !== this.keys[i]) return undefined;
      const record = fields[keys[i]] as { fieldType?: unknown; name?: unknown; value?: unknown } | null;
      if (record === null || typeof record !== 'object' || record.fieldType !== this.fieldTypes[i] || record.name !== this.names[i] || !('value' in record))
        return undefined;
      let param: Param;
      try {
        param = toParam(this.types[i], record.value);
      } catch {
        return undefined;
      }
      params.push(param);
      bytes += paramBytes(param);
    }
    return { columns: this.columns, params, bytes };
  }
}

/**
 * INSERT statements for rows: one multi-row INSERT (several only when the
 * rows need more than 65535 parameters). The columns are the union of the
 * rows' columns in the order first seen; a row without one of them gets the
 * column's DEFAULT, as a one-row INSERT that leaves it out would. A stream
 * of rows of the same columns makes the same text batch after batch: the
 * texts are kept (at most 64, emptied when full) and only the parameters
 * are built per batch.
 *
 * `prepare`: such a text is a named statement (its name a hash of the
 * text), which node-postgres parses once per connection and then only binds
 * and executes; the server skips parsing and planning a 700-parameter
 * INSERT each time (bench/README.md, Sinks: +45 % rows/s here). At most
 * MAX_NAMED texts get a name per offramp, so a stream of ever new column
 * sets cannot grow each connection's prepared statements without bound;
 * the others go unnamed, as rows of differing columns always do.
 */
export class InsertStatements {
  private readonly texts = new Map<string, { text: string; name: string | undefined }>();
  /** the names handed out so far */
  private readonly named = new Set<string>();

  constructor(
    private readonly table: string,
    private readonly prepare: boolean,
  ) {}

  insert(rows: Row[]): QueryConfig[] {
    const columns = sameColumns(rows) ?? unionOfColumns(rows);
    const perStatement = Math.max(1, Math.floor(MAX_PARAMS / columns.length));
    const statements: QueryConfig[] = [];
    for (let from = 0; from < rows.length; from += perStatement) {
      const part = rows.slice(from, from + perStatement);
      statements.push(part.every((row) => row.columns === columns) ? this.uniform(columns, part) : mixed(this.table, columns, part));
    }
    return statements;
  }

  /** Rows that all have exactly `columns`: the text depends on the columns and the row count only. */
  private uniform(columns: string[], rows: Row[]): QueryConfig {
    const key = `${rows.length}:${columns.join(',')}`;
    let statement = this.texts.get(key);
    if (statement === undefined) {
      if (this.texts.size >= 64) this.texts.clear();
      const text = insertText(
        this.table,
        columns,
        rows.map((row) => row.columns.map(() => true)),
      );
      statement = { text, name: this.nameOf(text) };
      this.texts.set(key, statement);
    }
    const values: Param[] = [];
    for (const row of rows) for (const param of row.params) values.push(param);
    return { name: statement.name, text: statement.text, values };
  }

  /** The statement name of `text` (the same text, the same name), or none past MAX_NAMED names or without `prepare`. */
  private nameOf(text: string): string | undefined {
    if (!this.prepare) return undefined;
    const name = `eddy_${createHash('sha1').update(text).digest('hex').slice(0, 24)}`;
    if (!this.named.has(name)) {
      if (this.named.size >= MAX_NAMED) return undefined;
      this.named.add(name);
    }
    return name;
  }
}

/** The columns of every row when they are all the same, in the same order; the first row's array then stands for all. */
function sameColumns(rows: Row[]): string[] | undefined {
  const first = rows[0].columns;
  for (let r = 1; r < rows.length; r++) {
    const columns = rows[r].columns;
    if (columns.length !== first.length) return undefined;
    for (let c = 0; c < first.length; c++) if (columns[c] !== first[c]) return undefined;
    rows[r].columns = first; // the same list: `uniform` then tells by identity
  }
  return first;
}

function unionOfColumns(rows: Row[]): string[] {
  const columns: string[] = [];
  const seen = new Set<string>();
  for (const row of rows) {
    for (const column of row.columns) {
      if (seen.has(column)) continue;
      seen.add(column);
      columns.push(column);
    }
  }
  return columns;
}

/** Rows of differing columns: each row's missing columns get DEFAULT. */
function mixed(table: string, columns: string[], rows: Row[]): QueryConfig {
  const values: Param[] = [];
  const present = rows.map((row) =>
    columns.map((column) => {
      const i = row.columns.indexOf(column);
      if (i < 0) return false;
      values.push(row.params[i]);
      return true;
    }),
  );
  return { text: insertText(table, columns, present), values };
}

/** `INSERT INTO table (columns) VALUES ($1, DEFAULT, …), …`: a parameter where `present[row][column]`, numbered in order. */
function insertText(table: string, columns: string[], present: boolean[][]): string {
  let n = 0;
  const tuples = present.map((row) => `(${row.map((has) => (has ? `$${++n}` : 'DEFAULT')).join(', ')})`);
  return `INSERT INTO ${table} (${columns.join(', ')}) VALUES ${tuples.join(', ')}`;
}
