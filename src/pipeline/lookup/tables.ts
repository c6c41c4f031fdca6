/**
 * The tables enrich::lookup joins events with: rows by key, loaded from a
 * file (CSV or JSON lines, file-table.ts) or a PostgreSQL query, and
 * reloaded (a changed file; the query on an interval). A reload builds a new
 * map and swaps it in one assignment, so an event sees the old table or the
 * new one, never half.
 */
import { jsonText } from '../../core/json-text';
import { performance } from 'node:perf_hooks';
import type * as Pg from 'pg';
import { requirePackage } from '../../core/packages';
import { s } from '../../schema/typed';
import type { Static } from '../../schema/typed';
import { connectHost, connectPort, userName } from '../../schema/fields';
import { duration } from '../../schema/duration';

export type Row = Readonly<Record<string, unknown>>;

/** What a refresh did: nothing (no change, or a version that already failed), a new table, or an error (the old rows stay). */
export type Refreshed =
  | { readonly kind: 'unchanged' }
  /** `first`: the table had no rows before; `routine`: a refresh on an interval, not worth a line at INFO */
  | { readonly kind: 'loaded'; readonly rows: number; readonly ms: number; readonly first: boolean; readonly routine: boolean }
  /** `again`: when it is tried again, for the log */
  | { readonly kind: 'failed'; readonly error: Error; readonly again: string };

/** A table as enrich::lookup uses it: its rows now, and a refresh the node runs every interval (never two at once). */
export interface LookupTable {
  readonly rows: ReadonlyMap<string, Row>;
  /** false until the first load (a database table): the node holds the sources back meanwhile */
  readonly loaded: boolean;
  /** a failure is a `failed` result; `signal` stops a load under way (the node stopped), which then changes nothing */
  refresh(signal?: AbortSignal): Promise<Refreshed>;
}

/** The key a value is looked up by: strings as they are, numbers and others in their JSON form (a CSV `42` matches an event's 42). */
export function keyOf(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'bigint') return value.toString();
  return jsonText(value) ?? 'null';
}

/** Adds `row` under the value of its `column`: a row without one is refused (naming `where()`), a repeated key keeps the last row. */
export function addRow(table: Map<string, Row>, row: Row, column: string, where: () => string): void {
  const value = Object.hasOwn(row, column) ? row[column] : undefined;
  if (value === null || value === undefined) throw new Error(`${where()}: no value in key column '${column}'`);
  table.set(keyOf(value), row);
}

/** Rows by the value of `column` (see `addRow`). */
export function indexRows(rows: readonly Row[], column: string, where: (i: number) => string): Map<string, Row> {
  const table = new Map<string, Row>();
  rows.forEach((row, i) => addRow(table, row, column, () => where(i)));
  return table;
}

/**
 * The `postgres` object of a lookup table. No defaults in the schema: it sits
 * in a `oneOf`, where ajv fills none, so the table falls back itself (port
 * 5432, no password).
 */
export const postgresTableSchema = s.object(
  {
    host: connectHost('database server host'),
    port: connectPort({ description: 'database server port (default 5432)' }),
    user: userName(),
    password: s.string({ writeOnly: true, description: 'password; empty for none' }),
    dbname: s.string({ minLength: 1, description: 'database' }),
    query: s.string({ minLength: 1, description: 'the query whose rows make the table' }),
    refresh: duration('the query runs again this often (default 30s)'),
  },
  { required: ['host', 'user', 'dbname', 'query'] },
);

export type PostgresTableConfig = Static<typeof postgresTableSchema>;

/** A table from a PostgreSQL query, run again on every refresh (a connection per run: a refresh every few seconds or more). */
export class PostgresTable implements LookupTable {
  rows = new Map<string, Row>();
  loaded = false;

  constructor(
    private readonly config: PostgresTableConfig,
    readonly column: string,
  ) {}

  /** Runs the query; a failure keeps the old rows. */
  async refresh(): Promise<Refreshed> {
    const started = performance.now();
    const { Client } = requirePackage<typeof Pg>('pg', 'a lookup table from postgres');
    const client = new Client({
      host: this.config.host,
      port: this.config.port ?? 5432,
      user: this.config.user,
      password: this.config.password ?? '',
      database: this.config.dbname,
      connectionTimeoutMillis: 5000,
      application_name: 'eddy enrich::lookup',
    });
    try {
      await client.connect();
      const result = await client.query(this.config.query);
      if (!result.fields.some((f) => f.name === this.column)) {
        throw new Error(`the query returns no column '${this.column}' (it returns ${result.fields.map((f) => f.name).join(', ') || 'none'})`);
      }
      this.rows = indexRows(result.rows as Row[], this.column, (i) => `query row ${i + 1}`);
      const first = !this.loaded;
      this.loaded = true;
      return { kind: 'loaded', rows: this.rows.size, ms: performance.now() - started, first, routine: !first };
    } catch (err) {
      return { kind: 'failed', error: err as Error, again: 'at the next refresh' };
    } finally {
      await client.end().catch(() => undefined);
    }
  }
}
