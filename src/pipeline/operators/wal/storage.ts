/**
 * Where qos::wal keeps its entries. The operator logic is written against
 * this interface so marble tests can run it on a synchronous in-memory store
 * in virtual time, while real pipelines persist with LevelDB.
 */
import { mkdirSync } from 'node:fs';
import type { Level } from 'level';
import { requirePackage } from '../../../core/packages';
import type { EddyEvent } from '../../../core/event';
import type { StateValue } from '../../../core/state';
import { compactJson } from '../../../codecs/json/compact';
import { parsePrecise } from '../../../codecs/json/precise-parse';

/** A value that is ready now (memory) or later (disk). */
export type Maybe<T> = T | Promise<T>;

export interface WalSnapshot {
  /** stored entries in ascending seq order: [seq, serialised event] */
  entries: [number, string][];
  /** the last seq ever assigned, so ids never repeat across restarts */
  lastSeq: number;
}

/** The last checkpoint of a WAL with `guarantee: exactly_once` (core/checkpoint.ts), as stored. */
export interface SavedCheckpoint {
  /** false when none was ever written: the flow starts from scratch */
  readonly exists: boolean;
  /** every event up to this seq was done when it was taken (and is gone from the log) */
  readonly seq: number;
  /** the length of each sink's output, by offramp instance URL */
  readonly sinks: ReadonlyMap<string, number>;
  /** the state of the nodes after the WAL: by `stateKey(pipeline, node)`, then partition, then entry */
  readonly state: ReadonlyMap<string, Map<string, Map<string, StateValue>>>;
  /** how many events of each replayable source (`EddyEvent.replay`) the log has stored, ever */
  readonly origins: ReadonlyMap<string, number>;
}

/** One checkpoint's write: all of it lands, or none of it. */
export interface CheckpointWrite {
  readonly seq: number;
  /** the log entries it covers, removed with it */
  readonly removed: number[];
  readonly sinks: ReadonlyMap<string, number>;
  /** [stateKey, partition, entry key, value (undefined: removed)] */
  readonly changes: readonly (readonly [string, string, string, StateValue])[];
}

/** The key of one node's state in a checkpoint. */
export const stateKey = (pipeline: string, node: string) => `${pipeline}/${node}`;

export interface WalStorage {
  load(): Maybe<WalSnapshot>;
  /** stores entries and the new last seq (and, for a checkpointing WAL, the replayable sources' counts) in one atomic write */
  append(entries: [number, string][], lastSeq: number, origins?: ReadonlyMap<string, number>): Maybe<void>;
  remove(seqs: number[]): Maybe<void>;
  close(): Maybe<void>;
}

/** The store of a checkpointing WAL (`guarantee: exactly_once`): the log, and its checkpoints beside it in one store. */
export interface CheckpointStorage extends WalStorage {
  /** the last checkpoint (opening the store if it is not open yet) */
  loadCheckpoint(): Maybe<SavedCheckpoint>;
  /** writes a checkpoint and removes the entries it covers, in one atomic write */
  checkpoint(write: CheckpointWrite): Maybe<void>;
}

/** Runs `f` on a value now if it is ready, else when it resolves; failures go to `onError`. */
export function whenReady<T>(value: Maybe<T>, f: (v: T) => void, onError: (err: unknown) => void): void {
  if (value instanceof Promise) value.then(f, onError);
  else f(value);
}

/** Keeps entries in a Map; used by tests. Shares its data across reopen like a disk would. */
export class MemoryWalStorage implements CheckpointStorage {
  readonly data = new Map<number, string>();
  lastSeq = 0;
  /** the checkpoint as it would be on disk: values kept as their JSON text, as LevelDB keeps them */
  private saved: { seq: number; sinks: Map<string, number>; state: Map<string, string>; origins: Map<string, number> } | undefined;
  load(): WalSnapshot {
    return { entries: [...this.data.entries()].sort((a, b) => a[0] - b[0]), lastSeq: this.lastSeq };
  }
  append(entries: [number, string][], lastSeq: number, origins?: ReadonlyMap<string, number>): void {
    for (const [seq, v] of entries) this.data.set(seq, v);
    this.lastSeq = lastSeq;
    if (origins) for (const [origin, n] of origins) (this.saved ??= emptySaved()).origins.set(origin, n);
  }
  loadCheckpoint(): SavedCheckpoint {
    const saved = this.saved;
    if (saved === undefined) return { exists: false, seq: 0, sinks: new Map(), state: new Map(), origins: new Map() };
    return { exists: saved.seq >= 0, seq: Math.max(0, saved.seq), sinks: new Map(saved.sinks), state: readState(saved.state), origins: new Map(saved.origins) };
  }
  checkpoint(write: CheckpointWrite): void {
    const saved = (this.saved ??= emptySaved());
    saved.seq = write.seq;
    for (const seq of write.removed) this.data.delete(seq);
    for (const [url, length] of write.sinks) saved.sinks.set(url, length);
    for (const [node, partition, key, value] of write.changes) {
      const name = stateEntryName(node, partition, key);
      if (value === undefined) saved.state.delete(name);
      else saved.state.set(name, compactJson(value));
    }
  }
  remove(seqs: number[]): void {
    for (const s of seqs) this.data.delete(s);
  }
  close(): void {
    // nothing to release in memory
  }
}

/** `seq: -1`: the counts of replayable sources are stored (append), no checkpoint yet */
const emptySaved = () => ({ seq: -1, sinks: new Map<string, number>(), state: new Map<string, string>(), origins: new Map<string, number>() });

/** The name of one state entry: node, partition and key, none of which can break it (JSON escapes them). */
const stateEntryName = (node: string, partition: string, key: string) => JSON.stringify([node, partition, key]);

/** State entries by name (JSON text values) -> by node, partition and key (values parsed exactly). */
function readState(entries: Iterable<[string, string]>): Map<string, Map<string, Map<string, StateValue>>> {
  const state = new Map<string, Map<string, Map<string, StateValue>>>();
  for (const [name, text] of entries) {
    const [node, partition, key] = JSON.parse(name) as [string, string, string];
    let partitions = state.get(node);
    if (!partitions) state.set(node, (partitions = new Map<string, Map<string, StateValue>>()));
    let values = partitions.get(partition);
    if (!values) partitions.set(partition, (values = new Map<string, StateValue>()));
    values.set(key, parsePrecise(text));
  }
  return state;
}

const entryKey = (seq: number) => `e!${seq.toString().padStart(16, '0')}`;
const LAST_KEY = 'm!last';
const CHECKPOINT_KEY = 'c!seq';
const SINK_PREFIX = 'c!sink!';
const ORIGIN_PREFIX = 'c!origin!';
const STATE_PREFIX = 's!';

/**
 * LevelDB (classic-level) on disk. LevelDB writes each batch to its log with
 * a write(2) before the callback, so an acknowledged write survives kill -9;
 * `sync` additionally fsyncs, which also survives a power loss.
 */
export class LevelWalStorage implements CheckpointStorage {
  private readonly db: Level; // string keys and values

  constructor(
    readonly dir: string,
    private readonly sync = false,
  ) {
    mkdirSync(dir, { recursive: true });
    const { Level: LevelDb } = requirePackage<typeof import('level')>('level', 'qos::wal');
    this.db = new LevelDb(dir, { valueEncoding: 'utf8' });
  }

  async load(): Promise<WalSnapshot> {
    await this.db.open();
    const entries: [number, string][] = [];
    for await (const [key, value] of this.db.iterator({ gte: 'e!', lt: 'e"' })) entries.push([Number(key.slice(2)), value]);
    const last = (await this.db.get(LAST_KEY)) as string | undefined; // level's types say string: a missing key gives undefined
    const lastSeq = Math.max(Number(last ?? 0), entries.length > 0 ? entries[entries.length - 1][0] : 0);
    return { entries, lastSeq };
  }

  async append(entries: [number, string][], lastSeq: number, origins?: ReadonlyMap<string, number>): Promise<void> {
    const ops = entries.map(([seq, value]) => ({ type: 'put' as const, key: entryKey(seq), value }));
    ops.push({ type: 'put', key: LAST_KEY, value: String(lastSeq) });
    if (origins) for (const [origin, n] of origins) ops.push({ type: 'put', key: ORIGIN_PREFIX + origin, value: String(n) });
    await this.db.batch(ops, { sync: this.sync });
  }

  async loadCheckpoint(): Promise<SavedCheckpoint> {
    await this.db.open();
    const seq = (await this.db.get(CHECKPOINT_KEY)) as string | undefined; // level's types say string: a missing key gives undefined
    const sinks = new Map<string, number>();
    for await (const [key, value] of this.db.iterator({ gte: SINK_PREFIX, lt: `${SINK_PREFIX}\uffff` }))
      sinks.set(key.slice(SINK_PREFIX.length), Number(value));
    const origins = new Map<string, number>();
    for await (const [key, value] of this.db.iterator({ gte: ORIGIN_PREFIX, lt: `${ORIGIN_PREFIX}\uffff` }))
      origins.set(key.slice(ORIGIN_PREFIX.length), Number(value));
    const entries: [string, string][] = [];
    for await (const [key, value] of this.db.iterator({ gte: STATE_PREFIX, lt: 's"' })) entries.push([key.slice(STATE_PREFIX.length), value]);
    return { exists: seq !== undefined, seq: Number(seq ?? 0), sinks, state: readState(entries), origins };
  }

  async checkpoint(write: CheckpointWrite): Promise<void> {
    type Op = { type: 'put'; key: string; value: string } | { type: 'del'; key: string };
    const ops: Op[] = write.removed.map((seq) => ({ type: 'del', key: entryKey(seq) }));
    for (const [url, length] of write.sinks) ops.push({ type: 'put', key: SINK_PREFIX + url, value: String(length) });
    for (const [node, partition, key, value] of write.changes) {
      const name = STATE_PREFIX + stateEntryName(node, partition, key);
      ops.push(value === undefined ? { type: 'del', key: name } : { type: 'put', key: name, value: compactJson(value) });
    }
    ops.push({ type: 'put', key: CHECKPOINT_KEY, value: String(write.seq) });
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
