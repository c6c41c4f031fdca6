/**
 * The tables enrich::lookup joins events with: rows by key, loaded from a
 * file (CSV or JSON lines) or a PostgreSQL query, and reloaded (a changed
 * file; the query on an interval). A reload builds a new map and swaps it in
 * one assignment, so an event sees the old table or the new one, never half.
 */
import { readFileSync, statSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { extname } from 'node:path';
import type * as Pg from 'pg';
import { requirePackage } from '../../core/packages';
import { parseCsv } from './csv';
import { s } from '../../schema/typed';
import type { Static } from '../../schema/typed';
import { connectHost, connectPort, userName } from '../../schema/fields';
import { durationSchema } from '../../schema/duration';

export type Row = Readonly<Record<string, unknown>>;

/** The key a value is looked up by: strings as they are, numbers and others in their JSON form (a CSV `42` matches an event's 42). */
export function keyOf(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'bigint') return value.toString();
  return JSON.stringify(value) ?? 'null';
}

/** Rows by the value of `column`; a row without it is refused (naming where), a repeated key keeps the last row. */
export function indexRows(rows: readonly Row[], column: string, where: (i: number) => string): Map<string, Row> {
  const table = new Map<string, Row>();
  rows.forEach((row, i) => {
    if (!Object.hasOwn(row, column) || row[column] === null || row[column] === undefined) throw new Error(`${where(i)}: no value in key column '${column}'`);
    table.set(keyOf(row[column]), row);
  });
  return table;
}

/** A file's rows: `.csv` (a header line naming the columns), else JSON lines (one object per line). */
export function parseTableFile(text: string, file: string): Row[] {
  if (extname(file).toLowerCase() === '.csv') return parseCsv(text, file);
  const rows: Row[] = [];
  text.split('\n').forEach((line, i) => {
    if (line.trim() === '') return;
    let row: unknown;
    try {
      row = JSON.parse(line);
    } catch (err) {
      throw new Error(`${file}: line ${i + 1}: ${(err as Error).message}`);
    }
    if (row === null || typeof row !== 'object' || Array.isArray(row)) throw new Error(`${file}: line ${i + 1}: a row must be a JSON object`);
    rows.push(row as Row);
  });
  return rows;
}

/** A table read from a file, reloaded when the file's size or modification time changes. */
export class FileTable {
  rows: Map<string, Row>;
  private version: string;

  /** Reads the file now: a missing or broken file fails the activation, with the file and line. */
  constructor(
    readonly file: string,
    readonly column: string,
  ) {
    this.version = versionOf(statSync(file));
    this.rows = this.parse(readFileSync(file, 'utf8'));
  }

  /**
   * Reloads if the file changed. Resolves to the error of a reload that
   * failed (the old rows stay), or undefined.
   */
  async refresh(): Promise<Error | undefined> {
    try {
      const version = await this.currentVersion();
      if (version === this.version) return undefined;
      const rows = this.parse(await readFile(this.file, 'utf8'));
      this.rows = rows;
      this.version = version;
      return undefined;
    } catch (err) {
      return err as Error;
    }
  }

  private parse(text: string): Map<string, Row> {
    const rows = parseTableFile(text, this.file);
    const csv = extname(this.file).toLowerCase() === '.csv';
    // line numbers for messages: a CSV row i is on line i + 2 (after the header), a JSON line's number is not kept, so say the row
    return indexRows(rows, this.column, (i) => (csv ? `${this.file}: line ${i + 2}` : `${this.file}: row ${i + 1}`));
  }

  private async currentVersion(): Promise<string> {
    return versionOf(await stat(this.file));
  }
}

/** What tells a changed file: a rename over it (a new inode), a write (size, modification time). */
function versionOf(s: { size: number; mtimeMs: number; ino: number }): string {
  return `${s.size}:${s.mtimeMs}:${s.ino}`;
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
    refresh: durationSchema('the query runs again this often (default 30s)'),
  },
  { required: ['host', 'user', 'dbname', 'query'] },
);

export type PostgresTableConfig = Static<typeof postgresTableSchema>;

/** A table from a PostgreSQL query, run again on every refresh (a connection per run: a refresh every few seconds or more). */
export class PostgresTable {
  rows = new Map<string, Row>();
  loaded = false;

  constructor(
    private readonly config: PostgresTableConfig,
    readonly column: string,
  ) {}

  /** Runs the query; resolves to its error (the old rows stay), or undefined. */
  async refresh(): Promise<Error | undefined> {
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
      this.loaded = true;
      return undefined;
    } catch (err) {
      return err as Error;
    } finally {
      await client.end().catch(() => undefined);
    }
  }
}
