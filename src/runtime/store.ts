/**
 * Where `eddy server run --data-dir DIR` keeps what it must come back with
 * after a restart: every published artefact (system ones excluded) and every
 * instance that was activated directly, in a LevelDB under DIR.
 *
 * The Runtime talks to a `RuntimeStore`: it calls the write methods after a
 * change succeeded, in the order of its serialised changes, and `restore` at
 * start. Nothing here ever resets or skips a record it cannot read: a store
 * that cannot be opened or holds a record this eddy does not understand
 * fails `open`/`restore` with a message naming the directory and the record.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Level } from 'level';
import { MissingPackageError, isInstalled, requirePackage } from '../core/packages';
import type { Artefact } from './artefacts';
import { KINDS, type Kind, instanceUrl, isKind } from './urls';

/** The version of the records written here; a record of any other version is refused, not guessed at. */
export const STORE_VERSION = 1;

/** An instance as activated directly (by the API, a config file mapping or an embedding call). */
export interface StoredInstance {
  kind: Kind;
  artefact: string;
  instance: string;
  /** binding parameters; `{}` for other kinds */
  params: Record<string, string>;
}

/** What the Runtime hands the store to put records back in place at start. */
export interface RestoreTarget {
  publish(kind: Kind, artefact: Artefact): void;
  activate(instance: StoredInstance): Promise<unknown>;
}

/** The small interface the Runtime calls; `LevelStore` is the one implementation. */
export interface RuntimeStore {
  /** the data dir: stateful operators keep their own stores under it (a checkpointing qos::wal) */
  readonly dir?: string;
  /** publishes the stored artefacts, then activates the stored instances in the order they were first activated */
  restore(target: RestoreTarget): Promise<void>;
  /** the parameters an instance was stored with, if it is stored */
  storedInstance(url: string): StoredInstance | undefined;
  putArtefact(kind: Kind, artefact: Artefact): Promise<void>;
  deleteArtefact(kind: Kind, id: string): Promise<void>;
  putInstance(instance: StoredInstance): Promise<void>;
  deleteInstance(url: string): Promise<void>;
  close(): Promise<void>;
}

/** A store that cannot be opened, read or written; its message names the directory and the record. */
export class StoreError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StoreError';
  }
}

const ARTEFACT_PREFIX = 'artefact!';
const INSTANCE_PREFIX = 'instance!';
const artefactKey = (kind: Kind, id: string) => `${ARTEFACT_PREFIX}${kind}!${id}`;
const instanceKey = (url: string) => `${INSTANCE_PREFIX}${url}`;

interface ArtefactRecord {
  version: number;
  kind: Kind;
  artefact: Artefact;
}

interface InstanceRecord extends StoredInstance {
  version: number;
  /** activation order: instances come back in it, so whatever one used is back before it */
  seq: number;
}

/** The store in `DIR/state`, a LevelDB. Writes are fsynced: they are rare, and a 201 should survive a power loss too. */
export class LevelStore implements RuntimeStore {
  private readonly instances = new Map<string, InstanceRecord>();
  private readonly artefacts: { key: string; record: ArtefactRecord }[] = [];
  private nextSeq = 1;

  private constructor(
    readonly dir: string,
    private readonly db: Level, // string keys and values
  ) {}

  /** Opens (creating if absent) the store under `dir` and reads every record, checking each. */
  static async open(dir: string): Promise<LevelStore> {
    const location = join(dir, 'state');
    try {
      await mkdir(location, { recursive: true });
    } catch (err) {
      throw new StoreError(`--data-dir ${dir}: cannot create ${location}: ${(err as Error).message}`);
    }
    // required here: a runtime without --data-dir never loads LevelDB (an optional package: docs/install.md)
    if (!isInstalled('level')) throw new StoreError(new MissingPackageError('level', `--data-dir ${dir}`).message);
    const { Level: LevelDb } = requirePackage<typeof import('level')>('level', '--data-dir');
    const db: Level = new LevelDb(location, { valueEncoding: 'utf8' });
    try {
      await db.open();
    } catch (err) {
      // LEVEL_DATABASE_NOT_OPEN says little; the cause (a lock held by another eddy, a corrupt file) says what to do
      const cause = (err as { cause?: Error }).cause ?? (err as Error);
      const hint = /lock/i.test(cause.message) ? ' (is another eddy running with this data dir?)' : '';
      throw new StoreError(`--data-dir ${dir}: cannot open the store in ${location}: ${cause.message}${hint}`);
    }
    const store = new LevelStore(dir, db);
    try {
      await store.readAll();
    } catch (err) {
      await db.close().catch(() => undefined);
      throw err;
    }
    return store;
  }

  async restore(target: RestoreTarget): Promise<void> {
    // kinds in the order a config file publishes them; a binding's validity does not depend on the others
    const byKind = [...this.artefacts].sort((a, b) => KINDS_ORDER.indexOf(a.record.kind) - KINDS_ORDER.indexOf(b.record.kind));
    for (const { key, record } of byKind) {
      try {
        target.publish(record.kind, record.artefact);
      } catch (err) {
        throw new StoreError(
          `--data-dir ${this.dir}: the stored ${record.kind} '${record.artefact.id}' (record ${key}) cannot be published again: ${(err as Error).message}`,
        );
      }
    }
    for (const record of [...this.instances.values()].sort((a, b) => a.seq - b.seq)) {
      const url = instanceUrl(record.kind, record.artefact, record.instance);
      try {
        await target.activate({ kind: record.kind, artefact: record.artefact, instance: record.instance, params: record.params });
      } catch (err) {
        throw new StoreError(`--data-dir ${this.dir}: the stored instance ${url} cannot be activated again: ${(err as Error).message}`);
      }
    }
  }

  storedInstance(url: string): StoredInstance | undefined {
    const r = this.instances.get(url);
    return r && { kind: r.kind, artefact: r.artefact, instance: r.instance, params: { ...r.params } };
  }

  async putArtefact(kind: Kind, artefact: Artefact): Promise<void> {
    const record: ArtefactRecord = { version: STORE_VERSION, kind, artefact };
    await this.write(() => this.db.put(artefactKey(kind, artefact.id), JSON.stringify(record), { sync: true }));
  }

  async deleteArtefact(kind: Kind, id: string): Promise<void> {
    await this.write(() => this.db.del(artefactKey(kind, id), { sync: true }));
  }

  async putInstance(instance: StoredInstance): Promise<void> {
    const url = instanceUrl(instance.kind, instance.artefact, instance.instance);
    const record: InstanceRecord = { version: STORE_VERSION, seq: this.nextSeq++, ...instance, params: { ...instance.params } };
    await this.write(() => this.db.put(instanceKey(url), JSON.stringify(record), { sync: true }));
    this.instances.set(url, record);
  }

  async deleteInstance(url: string): Promise<void> {
    await this.write(() => this.db.del(instanceKey(url), { sync: true }));
    this.instances.delete(url);
  }

  async close(): Promise<void> {
    await this.db.close();
  }

  private async write(op: () => Promise<void>): Promise<void> {
    try {
      await op();
    } catch (err) {
      const cause = (err as { cause?: Error }).cause ?? (err as Error);
      throw new StoreError(`--data-dir ${this.dir}: cannot write the store: ${cause.message}`);
    }
  }

  private async readAll(): Promise<void> {
    let maxSeq = 0;
    try {
      for await (const [key, value] of this.db.iterator()) {
        if (key.startsWith(ARTEFACT_PREFIX)) this.artefacts.push({ key, record: this.checkArtefact(key, value) });
        else if (key.startsWith(INSTANCE_PREFIX)) {
          const record = this.checkInstance(key, value);
          this.instances.set(key.slice(INSTANCE_PREFIX.length), record);
          maxSeq = Math.max(maxSeq, record.seq);
        } else throw this.corrupt(key, 'not a record eddy writes (records are artefact!<kind>!<id> and instance!<url>)');
      }
    } catch (err) {
      if (err instanceof StoreError) throw err;
      const cause = (err as { cause?: Error }).cause ?? (err as Error);
      throw new StoreError(`--data-dir ${this.dir}: cannot read the store: ${cause.message}`);
    }
    this.nextSeq = maxSeq + 1;
  }

  private parse(key: string, value: string): Record<string, unknown> {
    let parsed: unknown;
    try {
      parsed = JSON.parse(value);
    } catch (err) {
      throw this.corrupt(key, `not valid JSON (${(err as Error).message})`);
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw this.corrupt(key, 'not a JSON object');
    const record = parsed as Record<string, unknown>;
    if (record.version !== STORE_VERSION) {
      throw this.corrupt(key, `version ${JSON.stringify(record.version)}, but this eddy reads version ${STORE_VERSION} only (written by another eddy?)`);
    }
    return record;
  }

  private checkArtefact(key: string, value: string): ArtefactRecord {
    const record = this.parse(key, value);
    const { kind, artefact } = record;
    if (typeof kind !== 'string' || !isKind(kind)) throw this.corrupt(key, `kind ${JSON.stringify(kind)} is not one of ${KINDS.join(', ')}`);
    if (artefact === null || typeof artefact !== 'object' || Array.isArray(artefact)) throw this.corrupt(key, 'artefact is not an object');
    const id = (artefact as { id?: unknown }).id;
    if (key !== artefactKey(kind, String(id))) throw this.corrupt(key, `holds ${kind} ${JSON.stringify(id)}, which belongs under another key`);
    return { version: STORE_VERSION, kind, artefact: artefact as Artefact };
  }

  private checkInstance(key: string, value: string): InstanceRecord {
    const record = this.parse(key, value);
    const { kind, artefact, instance, params, seq } = record;
    if (typeof kind !== 'string' || !isKind(kind)) throw this.corrupt(key, `kind ${JSON.stringify(kind)} is not one of ${KINDS.join(', ')}`);
    if (typeof artefact !== 'string' || typeof instance !== 'string') throw this.corrupt(key, 'artefact and instance must be strings');
    if (key !== instanceKey(instanceUrl(kind, artefact, instance)))
      throw this.corrupt(key, `holds ${instanceUrl(kind, artefact, instance)}, which belongs under another key`);
    if (!Number.isSafeInteger(seq) || (seq as number) < 1) throw this.corrupt(key, 'seq must be a positive integer');
    if (params === null || typeof params !== 'object' || Array.isArray(params) || Object.values(params).some((v) => typeof v !== 'string')) {
      throw this.corrupt(key, 'params must be an object of strings');
    }
    return { version: STORE_VERSION, seq: seq as number, kind, artefact, instance, params: params as Record<string, string> };
  }

  private corrupt(key: string, why: string): StoreError {
    return new StoreError(
      `--data-dir ${this.dir}: the store is corrupt: record '${key}': ${why}; eddy changed nothing; move the directory away to start empty, or put back a backup`,
    );
  }
}

const KINDS_ORDER: readonly Kind[] = ['pipeline', 'offramp', 'onramp', 'binding'];
