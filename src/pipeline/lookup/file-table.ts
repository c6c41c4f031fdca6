/**
 * A lookup table read from a file: CSV (`.csv`, or `.tsv` with tabs) or JSON
 * lines (any other extension).
 *
 * A reload reads the file in pieces (`chunkBytes`, 64 KiB) and parses each
 * piece as it comes, on the main thread, into a new map: the event loop runs
 * between pieces (each read is an await), the old table serves events until
 * the new one is complete and replaces it in one assignment, and the file's
 * text is never held whole, so a reload holds two tables, not the text, a
 * list of rows and a table besides the old one. The figures behind this
 * choice (rather than a worker thread) are in docs/stream-processing.md and
 * come from bench/lookup-reload.ts.
 *
 * A version of the file (size, modification time, inode) that failed to
 * load is remembered: it is not read again until the file changes, so a
 * broken file costs one read and one warning, not one every check.
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { open, stat, type FileHandle } from 'node:fs/promises';
import { extname } from 'node:path';
import { performance } from 'node:perf_hooks';
import { StringDecoder } from 'node:string_decoder';
import { CsvRowReader } from './csv';
import { addRow, type LookupTable, type Refreshed, type Row } from './tables';

/** How a table file is read. */
export interface FileTableOptions {
  /** the CSV delimiter (default `,`; a `.tsv` file's is a tab) */
  readonly delimiter?: string;
  /** bytes read and parsed at a time (default 64 KiB) */
  readonly chunkBytes?: number;
  /** told what a load does, for tests */
  readonly observer?: LoadObserver;
}

/** What a load tells as it goes (tests count reads and watch the event loop between pieces). */
export interface LoadObserver {
  /** a load of the file begins */
  read?(file: string): void;
  /** a piece was parsed; `rows` is the size of the new table so far */
  piece?(rows: number): void;
}

const DEFAULT_CHUNK = 64 * 1024;

/** Whether the file is CSV, and with which delimiter; else JSON lines. */
export function csvDelimiter(file: string, delimiter: string | undefined): string | undefined {
  const ext = extname(file).toLowerCase();
  if (ext === '.csv') return delimiter ?? ',';
  if (ext === '.tsv') return delimiter ?? '\t';
  return undefined;
}

/**
 * Turns the text of a table file, piece by piece, into rows by key: a row
 * without a value in the key column is refused (naming its line), a
 * repeated key keeps the last row.
 */
export class TableBuilder {
  readonly rows = new Map<string, Row>();
  private readonly parser: { push(text: string): void; end(): void };

  constructor(
    private readonly file: string,
    private readonly column: string,
    delimiter: string | undefined,
  ) {
    const add = (row: Row, line: number) => this.add(row, line);
    this.parser = delimiter === undefined ? new JsonLinesReader(file, add) : new CsvRowReader(file, delimiter, add);
  }

  push(text: string): void {
    this.parser.push(text);
  }

  end(): void {
    this.parser.end();
  }

  private add(row: Row, line: number): void {
    addRow(this.rows, row, this.column, () => `${this.file}: line ${line}`);
  }
}

/** JSON lines, given in pieces: one object per line, empty lines skipped. */
class JsonLinesReader {
  private rest = '';
  private line = 1;

  constructor(
    private readonly file: string,
    private readonly onRow: (row: Row, line: number) => void,
  ) {}

  push(text: string): void {
    let from = 0;
    let nl = text.indexOf('\n');
    if (nl === -1) {
      this.rest += text;
      return;
    }
    this.take(this.rest + text.slice(0, nl));
    this.rest = '';
    from = nl + 1;
    while ((nl = text.indexOf('\n', from)) !== -1) {
      this.take(text.slice(from, nl));
      from = nl + 1;
    }
    this.rest = text.slice(from);
  }

  end(): void {
    this.take(this.rest);
    this.rest = '';
  }

  private take(text: string): void {
    const line = this.line++;
    if (text.trim() === '') return;
    let row: unknown;
    try {
      row = JSON.parse(text);
    } catch (err) {
      throw new Error(`${this.file}: line ${line}: ${(err as Error).message}`);
    }
    if (row === null || typeof row !== 'object' || Array.isArray(row)) throw new Error(`${this.file}: line ${line}: a row must be a JSON object`);
    this.onRow(row as Row, line);
  }
}

/** What tells a changed file: a rename over it (a new inode), a write (size, modification time). */
function versionOf(s: { size: number; mtimeMs: number; ino: number }): string {
  return `${s.size}:${s.mtimeMs}:${s.ino}`;
}

/** The version of a file that cannot be looked at (missing, no permission): one per reason, so it is reported once. */
function errorVersion(err: unknown): string {
  return `error:${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`;
}

/** A load that found the file changing under it: not a failure of a version, tried again at the next check. */
class ChangedWhileRead extends Error {}

/** A table read from a file, reloaded when the file's size, modification time or inode changes. */
export class FileTable implements LookupTable {
  rows: Map<string, Row>;
  readonly loaded = true;
  /** the version the rows come from */
  private version: string;
  /** the last version that failed to load: not tried again */
  private failed: string | undefined;
  private readonly delimiter: string | undefined;
  private readonly chunkBytes: number;

  /**
   * Reads the file now, at once: a missing or broken file fails the
   * activation, with the file and line.
   */
  constructor(
    readonly file: string,
    readonly column: string,
    private readonly options: FileTableOptions = {},
  ) {
    this.delimiter = csvDelimiter(file, options.delimiter);
    this.chunkBytes = options.chunkBytes ?? DEFAULT_CHUNK;
    const { rows, version } = this.loadNow();
    this.rows = rows;
    this.version = version;
  }

  /**
   * Reloads if the file changed since the rows were read and since the last
   * version that failed. Never rejects.
   */
  async refresh(signal?: AbortSignal): Promise<Refreshed> {
    let version: string;
    try {
      version = versionOf(await stat(this.file));
    } catch (err) {
      return this.failure(errorVersion(err), err as Error);
    }
    if (version === this.version || version === this.failed) return { kind: 'unchanged' };
    const started = performance.now();
    let handle: FileHandle;
    try {
      handle = await open(this.file, 'r');
    } catch (err) {
      return this.failure(errorVersion(err), err as Error);
    }
    // the version of what is read is the open file's: the path may have been replaced since the stat
    let readVersion = version;
    try {
      readVersion = versionOf(await handle.stat());
      const rows = await this.loadFrom(handle, readVersion, signal);
      if (rows === undefined) return { kind: 'unchanged' };
      this.rows = rows;
      this.version = readVersion;
      this.failed = undefined;
      return { kind: 'loaded', rows: rows.size, ms: performance.now() - started, first: false, routine: false };
    } catch (err) {
      if (err instanceof ChangedWhileRead) return { kind: 'unchanged' };
      return this.failure(readVersion, err as Error);
    } finally {
      await handle.close().catch(() => undefined);
    }
  }

  private failure(version: string, error: Error): Refreshed {
    if (version === this.failed) return { kind: 'unchanged' };
    this.failed = version;
    return { kind: 'failed', error, again: 'when the file changes' };
  }

  /** The new rows; undefined when `signal` stopped the load. */
  private async loadFrom(handle: FileHandle, version: string, signal: AbortSignal | undefined): Promise<Map<string, Row> | undefined> {
    this.options.observer?.read?.(this.file);
    const builder = new TableBuilder(this.file, this.column, this.delimiter);
    const decoder = new StringDecoder('utf8');
    const buffer = Buffer.allocUnsafe(this.chunkBytes);
    let failure: Error | undefined;
    for (;;) {
      // each read is an await: timers, I/O and events run between two pieces
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, null);
      if (signal?.aborted) return undefined;
      if (bytesRead === 0) break;
      try {
        builder.push(decoder.write(buffer.subarray(0, bytesRead)));
      } catch (err) {
        failure = err as Error;
        break;
      }
      this.options.observer?.piece?.(builder.rows.size);
    }
    // a file written in place while it was read: what was read is no version of it, and it may be why it failed
    if (versionOf(await handle.stat()) !== version) throw new ChangedWhileRead();
    if (failure !== undefined) throw failure;
    builder.push(decoder.end());
    builder.end();
    return builder.rows;
  }

  /** The load at activation, at once (it must be able to fail the activation), in the same pieces. */
  private loadNow(): { rows: Map<string, Row>; version: string } {
    const fd = openSync(this.file, 'r');
    try {
      const version = versionOf(fstatSync(fd));
      this.options.observer?.read?.(this.file);
      const builder = new TableBuilder(this.file, this.column, this.delimiter);
      const decoder = new StringDecoder('utf8');
      const buffer = Buffer.allocUnsafe(this.chunkBytes);
      let bytesRead: number;
      while ((bytesRead = readSync(fd, buffer, 0, buffer.length, null)) > 0) builder.push(decoder.write(buffer.subarray(0, bytesRead)));
      builder.push(decoder.end());
      builder.end();
      return { rows: builder.rows, version };
    } finally {
      closeSync(fd);
    }
  }
}
