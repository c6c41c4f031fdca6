import { mkdir, open, readFile, rename, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import type * as Pg from 'pg';
import type { FieldDef } from 'pg';
import { requirePackage } from '../../core/packages';
import { Observable, type Subscriber, type Subscription } from '../../core/rx';
import { nowNs } from '../../core/clock';
import type { Frame, OnrampContext, OnrampType, SourceInputs } from '../connector';
import { Backoff } from '../_shared/backoff';
import { clientConfig, connectionProperties, describe, isConnectionError } from './connection';
import { BUILTIN_OIDS, fromText, type FieldRecord } from './types';
import { s } from '../../schema/typed';
import { duration, durationMs } from '../../schema/duration';
import type { Static } from '../../schema/typed';

const { Client } = requirePackage<typeof Pg>('pg', 'the postgres onramp');

const configSchema = s.object(
  {
    ...connectionProperties,
    query: s.string({
      minLength: 1,
      description: 'the query to poll; $1 is the start, $2 the end of the interval (timestamps, ISO 8601 UTC text): rows with start <= ts < end',
    }),
    interval_ms: duration('the time between the end of one poll and the start of the next'),
    cache: s.object(
      {
        path: s.string({ path: 'tree', minLength: 1, description: 'file holding the last interval (JSON); written atomically after each poll' }),
        size: s.integer({
          minimum: 128,
          default: 4096,
          description: 'largest cache file accepted in bytes; a larger file is refused at activation as not a cache eddy wrote',
        }),
      },
      {
        required: ['path'],
        description: 'where the end of the last polled interval is kept, so a restart resumes there; without it, polling starts at activation',
      },
    ),
  },
  { description: 'Polls a PostgreSQL query over consecutive time intervals, one event per row.', required: ['host', 'user', 'dbname', 'query', 'interval_ms'] },
);

export type PostgresOnrampConfig = Static<typeof configSchema>;

/** Rows handed over per macrotask, so a large interval never blocks the event loop and a pause takes effect between chunks. */
const ROWS_PER_STEP = 256;

/** Every column in its text form: the conversion is ours (types.ts), never pg's global parsers. */
const TEXT_ONLY = { getTypeParser: () => (text: string) => text };

/**
 * postgres (query poller): every `interval_ms` it runs `query` with `$1` =
 * the start and `$2` = the end of the next interval, as ISO 8601 UTC
 * timestamps with microseconds: the start is where the last successful poll
 * ended, the end is the database server's clock at this poll, so the
 * intervals [start, end) follow each other without gap or overlap (write
 * the query half-open: `ts >= $1 AND ts < $2`). Each row becomes one event:
 * `{column: {fieldType, name, value}}`.
 *
 * With `cache`, the end of the last interval whose rows were all handed on
 * is kept in a file, so a restart resumes there: rows written while eddy was
 * down are read once, none twice. A query that fails is logged and the same
 * interval is tried again at the next poll, so nothing is skipped.
 */
export const postgresOnramp: OnrampType<PostgresOnrampConfig> = {
  name: 'postgres',
  defaultCodec: 'json',
  example: {
    host: '127.0.0.1',
    port: 5432,
    user: 'postgres',
    password: '',
    dbname: 'postgres',
    query: 'SELECT * FROM events WHERE created >= $1 AND created < $2 ORDER BY created',
    interval_ms: 1000,
    cache: { path: 'postgres-events.cache', size: 4096 },
  },
  configSchema,
  async create(config, ctx) {
    const poller = new Poller(config, ctx);
    await poller.open();
    return {
      frames: new Observable<Frame>((subscriber) => poller.run(subscriber)),
      pause: () => poller.pause(),
      resume: () => poller.resume(),
      inputs: () => poller.inputs(),
      close: () => poller.close(),
    };
  },
};

/** The last interval polled, as stored in the cache file. */
interface Interval {
  start: string;
  end: string;
}

class Poller {
  /** the connected client; undefined while disconnected */
  private client: Pg.Client | undefined;
  /** the start of the next interval: the end of the last one whose rows were all handed on */
  private start = '';
  private readonly originUri: string;
  private readonly target: string;
  private readonly fieldTypes = new Map<number, string>(Object.entries(BUILTIN_OIDS).map(([oid, name]) => [Number(oid), name]));
  private readonly backoff: Backoff;
  /** the subscriber of the running loop; undefined while nobody reads */
  private subscriber: Subscriber<Frame> | undefined;
  private timer: Subscription | undefined;
  private immediate: NodeJS.Immediate | undefined;
  /** paused by the circuit breaker; `wake` continues where it stopped (a poll or the rest of a result) */
  private paused = false;
  private wake: (() => void) | undefined;
  /** the last failure warned about ('lost' for an outage, else the query's error), so it is not repeated every interval */
  private lastFailure: string | undefined;
  private closed = false;
  /** the cache write under way (close waits for it); settled when none is */
  private caching: Promise<void> = Promise.resolve();
  /** interval_ms, read */
  private readonly intervalMs: number;

  constructor(
    private readonly config: PostgresOnrampConfig,
    private readonly ctx: OnrampContext,
  ) {
    this.target = describe(config);
    this.originUri = `svc-postgres://${config.host}:${config.port}/${config.dbname}`;
    // reconnects no faster than the poll interval, and back off to 5 s at most
    this.intervalMs = durationMs(config.interval_ms, 'interval_ms');
    this.backoff = new Backoff(Math.max(this.intervalMs, 100), Math.max(this.intervalMs, 5000));
  }

  /** Connects, and reads or starts the cache: any failure here fails the activation. */
  async open(): Promise<void> {
    try {
      this.client = await this.connect();
    } catch (err) {
      throw new Error(`cannot connect to postgres ${this.target}: ${(err as Error).message}`);
    }
    try {
      const cached = this.config.cache ? await readCache(this.config.cache.path, this.config.cache.size) : undefined;
      this.start = cached?.end ?? (await serverNow(this.client));
      // written now: a restart before the first poll resumes from here, and an unwritable path fails the activation
      if (this.config.cache && !cached) await writeCache(this.config.cache.path, { start: this.start, end: this.start });
    } catch (err) {
      await this.client.end().catch(() => undefined);
      this.client = undefined;
      throw err;
    }
  }

  run(subscriber: Subscriber<Frame>): () => void {
    this.subscriber = subscriber;
    this.schedule(0);
    return () => {
      this.subscriber = undefined;
      this.stopTimers();
    };
  }

  pause(): void {
    this.paused = true;
  }

  resume(): void {
    this.paused = false;
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }

  /** reading: polling or handing rows over; not once parked, waiting for the breaker (no poll runs until the resume) */
  inputs(): SourceInputs {
    return { open: 1, reading: this.wake === undefined ? 1 : 0 };
  }

  async close(): Promise<void> {
    this.closed = true;
    this.subscriber = undefined;
    this.stopTimers();
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
    // a cache write under way ends before close does: nothing of a closed onramp touches its directory afterwards
    await this.caching.catch(() => undefined);
  }

  private stopTimers(): void {
    this.timer?.unsubscribe();
    this.timer = undefined;
    if (this.immediate !== undefined) clearImmediate(this.immediate);
    this.immediate = undefined;
    this.wake = undefined;
  }

  private schedule(ms: number): void {
    this.timer = this.ctx.scheduler.schedule(() => {
      this.timer = undefined;
      this.whenOpen(() => void this.poll());
    }, ms);
  }

  /** Runs `next` now, or on resume while the circuit breaker holds this onramp. */
  private whenOpen(next: () => void): void {
    if (this.subscriber === undefined) return;
    if (this.paused) this.wake = next;
    else next();
  }

  private async poll(): Promise<void> {
    const subscriber = this.subscriber;
    if (subscriber === undefined) return;
    let interval: Interval;
    let rows: unknown[][];
    let fields: FieldDef[];
    try {
      let client = this.client;
      if (client === undefined) {
        client = await this.connect();
        if (this.closed) {
          // closed while connecting: this connection is nobody's to end but ours
          await client.end().catch(() => undefined);
          return;
        }
        this.client = client;
      }
      interval = { start: this.start, end: await serverNow(client) };
      const result = await client.query<unknown[]>({ text: this.config.query, values: [interval.start, interval.end], rowMode: 'array', types: TEXT_ONLY });
      rows = result.rows;
      fields = result.fields;
      await this.resolveTypes(client, fields);
    } catch (err) {
      if (this.subscriber === subscriber) this.failed(err as Error);
      return;
    }
    if (this.subscriber !== subscriber) return; // stopped while the query ran: the interval is polled again next time
    this.recovered();
    this.whenOpen(() => this.emit(subscriber, interval, rows, fields, 0));
  }

  /** Hands `rows` on in bounded steps (one per macrotask), waiting while paused; then the interval is done. */
  private emit(subscriber: Subscriber<Frame>, interval: Interval, rows: unknown[][], fields: FieldDef[], from: number): void {
    if (this.subscriber !== subscriber) return;
    const to = Math.min(rows.length, from + ROWS_PER_STEP);
    for (let i = from; i < to; i++) {
      const ingestNs = nowNs();
      subscriber.next({ stream: 0, value: this.toEvent(rows[i], fields), originUri: this.originUri, ingestNs });
    }
    if (to < rows.length) {
      this.immediate = setImmediate(() => {
        this.immediate = undefined;
        this.whenOpen(() => this.emit(subscriber, interval, rows, fields, to));
      });
      return;
    }
    void this.done(subscriber, interval);
  }

  /** Every row of the interval was handed on: it becomes the start of the next, on disk first. */
  private async done(subscriber: Subscriber<Frame>, interval: Interval): Promise<void> {
    this.start = interval.end;
    if (this.config.cache) {
      try {
        this.caching = writeCache(this.config.cache.path, interval);
        await this.caching;
      } catch (err) {
        // the rows are already on their way: not polling them again now; a restart would repeat this interval
        this.ctx.logger.error(`postgres onramp ${this.ctx.url}: cannot write the cache ${this.config.cache.path}: ${(err as Error).message}`);
      }
    }
    if (this.subscriber === subscriber) this.schedule(this.intervalMs);
  }

  private toEvent(row: unknown[], fields: FieldDef[]): Record<string, FieldRecord> {
    const event: Record<string, FieldRecord> = {};
    for (let c = 0; c < fields.length; c++) {
      const { name, dataTypeID } = fields[c];
      const fieldType = this.fieldTypes.get(dataTypeID) ?? `OID ${dataTypeID}`;
      const text = row[c];
      event[name] = { fieldType, name, value: text === null ? null : fromText(fieldType, text as string) };
    }
    return event;
  }

  /** Names the types of columns that are not builtin (enums, domains, arrays) from pg_type, once per type. */
  private async resolveTypes(client: Pg.Client, fields: FieldDef[]): Promise<void> {
    const unknown = [...new Set(fields.map((f) => f.dataTypeID).filter((oid) => !this.fieldTypes.has(oid)))];
    if (unknown.length === 0) return;
    // OIDs are unsigned 32-bit: as text, never through a signed int
    const { rows } = await client.query<{ oid: string; name: string }>(
      `SELECT t.oid::text AS oid, upper(CASE WHEN t.typcategory = 'A' THEN e.typname || '[]' ELSE t.typname END) AS name
         FROM pg_type t LEFT JOIN pg_type e ON e.oid = t.typelem WHERE t.oid = ANY($1::oid[])`,
      [unknown.map(String)],
    );
    for (const { oid, name } of rows) this.fieldTypes.set(Number(oid), name);
  }

  private async connect(): Promise<Pg.Client> {
    const client = new Client(clientConfig(this.config, this.ctx.url));
    // a connection that dies between polls: dropped here, reconnected at the next poll
    client.on('error', (err) => {
      this.ctx.logger.debug(`postgres onramp ${this.ctx.url}: connection closed: ${err.message}`);
      if (this.client === client) this.client = undefined;
    });
    try {
      await client.connect();
    } catch (err) {
      await client.end().catch(() => undefined);
      throw err;
    }
    return client;
  }

  /** A poll failed: the interval stays where it was, so the next poll covers these rows too. */
  private failed(err: Error): void {
    const lost = isConnectionError(err) || this.client === undefined;
    if (lost) {
      const client = this.client;
      this.client = undefined;
      void client?.end().catch(() => undefined);
    }
    const what = lost ? `connection to ${this.target} lost` : 'query failed';
    const message = `postgres onramp ${this.ctx.url}: ${what}: ${err.message}; the interval from ${this.start} is polled again`;
    // a warning once per outage or per distinct query error: a long outage or a broken query must not flood the log
    const failure = lost ? 'lost' : err.message;
    if (failure !== this.lastFailure) this.ctx.logger.warn(message);
    else this.ctx.logger.debug(message);
    this.lastFailure = failure;
    this.schedule(lost ? this.backoff.next() : this.intervalMs);
  }

  private recovered(): void {
    if (this.lastFailure !== undefined) this.ctx.logger.info(`postgres onramp ${this.ctx.url}: polling again`);
    this.lastFailure = undefined;
    this.backoff.reset();
  }
}

/** The database server's clock, as the ISO 8601 text the intervals use. */
async function serverNow(client: Pg.Client): Promise<string> {
  const { rows } = await client.query<unknown[]>({ text: 'SELECT clock_timestamp()', rowMode: 'array', types: TEXT_ONLY });
  return fromText('TIMESTAMPTZ', rows[0][0] as string) as string;
}

async function readCache(path: string, size: number): Promise<Interval | undefined> {
  let text: string;
  try {
    const { size: bytes } = await stat(path);
    if (bytes > size) throw new Error(`${bytes} bytes, more than cache.size (${size}): not a cache eddy wrote`);
    text = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new Error(`cannot read the cache ${path}: ${(err as Error).message}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new Error(`the cache ${path} is not JSON (${(err as Error).message}); remove it to start polling from now`);
  }
  const { start, end } = (parsed ?? {}) as Partial<Interval>;
  if (typeof start !== 'string' || typeof end !== 'string') {
    throw new Error(`the cache ${path} has no interval {"start", "end"}; remove it to start polling from now`);
  }
  return { start, end };
}

/** Replaces the cache file atomically (write, fsync, rename): a crash leaves the old interval or the new one, never half of one. */
async function writeCache(path: string, interval: Interval): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const temp = `${path}.tmp`;
  const handle = await open(temp, 'w');
  try {
    await handle.writeFile(`${JSON.stringify(interval)}\n`);
    await handle.sync();
  } finally {
    await handle.close();
  }
  await rename(temp, path);
}
