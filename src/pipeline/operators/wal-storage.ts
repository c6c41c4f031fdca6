/**
 * Where qos::wal keeps its entries. The operator logic is written against
 * this interface so marble tests can run it on a synchronous in-memory store
 * in virtual time, while real pipelines persist with LevelDB.
 */
import { mkdirSync } from 'node:fs';
import type { Level } from 'level';
import { requirePackage } from '../../core/packages';
import type { EddyEvent } from '../../core/event';

/** A value that is ready now (memory) or later (disk). */
export type Maybe<T> = T | Promise<T>;

export interface WalSnapshot {
  /** stored entries in ascending seq order: [seq, serialised event] */
  entries: Array<[number, string]>;
  /** the last seq ever assigned, so ids never repeat across restarts */
  lastSeq: number;
}

export interface WalStorage {
  load(): Maybe<WalSnapshot>;
  /** stores entries and the new last seq in one atomic write */
  append(entries: Array<[number, string]>, lastSeq: number): Maybe<void>;
  remove(seqs: number[]): Maybe<void>;
  close(): Maybe<void>;
}

/** Runs `f` on a value now if it is ready, else when it resolves; failures go to `onError`. */
export function whenReady<T>(value: Maybe<T>, f: (v: T) => void, onError: (err: unknown) => void): void {
  if (value instanceof Promise) value.then(f, onError);
  else f(value);
}

/** Keeps entries in a Map; used by tests. Shares its data across reopen like a disk would. */
export class MemoryWalStorage implements WalStorage {
  readonly data = new Map<number, string>();
  lastSeq = 0;
  load(): WalSnapshot {
    return { entries: [...this.data.entries()].sort((a, b) => a[0] - b[0]), lastSeq: this.lastSeq };
  }
  append(entries: Array<[number, string]>, lastSeq: number): void {
    for (const [seq, v] of entries) this.data.set(seq, v);
    this.lastSeq = lastSeq;
  }
  remove(seqs: number[]): void {
    for (const s of seqs) this.data.delete(s);
  }
  close(): void {}
}

const entryKey = (seq: number) => `e!${seq.toString().padStart(16, '0')}`;
const LAST_KEY = 'm!last';

/**
 * LevelDB (classic-level) on disk. LevelDB writes each batch to its log with
 * a write(2) before the callback, so an acknowledged write survives kill -9;
 * `sync` additionally fsyncs, which also survives a power loss.
 */
export class LevelWalStorage implements WalStorage {
  private readonly db: Level<string, string>;

  constructor(
    readonly dir: string,
    private readonly sync = false,
  ) {
    mkdirSync(dir, { recursive: true });
    const { Level: LevelDb } = requirePackage<typeof import('level')>('level', 'qos::wal');
    this.db = new LevelDb<string, string>(dir, { valueEncoding: 'utf8' });
  }

  async load(): Promise<WalSnapshot> {
    await this.db.open();
    const entries: Array<[number, string]> = [];
    for await (const [key, value] of this.db.iterator({ gte: 'e!', lt: 'e"' })) entries.push([Number(key.slice(2)), value]);
    const last = await this.db.get(LAST_KEY);
    const lastSeq = Math.max(Number(last ?? 0), entries.length > 0 ? entries[entries.length - 1][0] : 0);
    return { entries, lastSeq };
  }

  async append(entries: Array<[number, string]>, lastSeq: number): Promise<void> {
    const ops = entries.map(([seq, value]) => ({ type: 'put' as const, key: entryKey(seq), value }));
    ops.push({ type: 'put', key: LAST_KEY, value: String(lastSeq) });
    await this.db.batch(ops, { sync: this.sync });
  }

  async remove(seqs: number[]): Promise<void> {
    await this.db.batch(seqs.map((seq) => ({ type: 'del' as const, key: entryKey(seq) })));
  }

  async close(): Promise<void> {
    await this.db.close();
  }
}

/**
 * Events as JSON. `ingestNs` (and any other bigint) is written as
 * `{"$bigint": "<digits>"}` and byte arrays as `{"$bytes": "<base64>"}`,
 * since JSON has neither.
 */
export function serialiseEvent(event: EddyEvent): string {
  return JSON.stringify(event, function (this: unknown, key: string, value: unknown) {
    const raw = (this as Record<string, unknown>)[key]; // before toJSON, so Buffers are seen as bytes
    if (typeof raw === 'bigint') return { $bigint: raw.toString() };
    if (raw instanceof Uint8Array) return { $bytes: Buffer.from(raw).toString('base64') };
    return value;
  });
}

export function deserialiseEvent(text: string): EddyEvent {
  return JSON.parse(text, (_key, value: unknown) => {
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
      const keys = Object.keys(value);
      if (keys.length === 1 && keys[0] === '$bigint') return BigInt((value as { $bigint: string }).$bigint);
      if (keys.length === 1 && keys[0] === '$bytes') return new Uint8Array(Buffer.from((value as { $bytes: string }).$bytes, 'base64'));
    }
    return value;
  }) as EddyEvent;
}
