import { mkdir, rm } from 'node:fs/promises';
import type * as LevelPackage from 'level';
import { requirePackage } from '../../core/packages';
import type { EddyEvent, Meta } from '../../core/event';
import type { OfframpContext, OfframpType } from '../connector';
import { s } from '../../schema/typed';
import type { Static } from '../../schema/typed';

const { Level } = requirePackage<typeof LevelPackage>('level', 'the kv offramp');

const configSchema = s.object(
  { dir: s.string({ path: 'tree', minLength: 1, description: 'directory holding the store; created if absent, and held (locked) by one instance at a time' }) },
  { description: 'A key-value store on local disk that a pipeline drives with command events (linked only).', required: ['dir'] },
);

type Op = 'get' | 'put' | 'delete' | 'scan' | 'cas';

/** A command checked and with its values already encoded: nothing left that can be the user's fault. */
type Command =
  | { op: 'get' | 'delete'; key: Buffer }
  | { op: 'put'; key: Buffer; value: Buffer }
  | { op: 'scan'; start?: Buffer; end?: Buffer }
  | { op: 'cas'; key: Buffer; old?: Buffer; new?: Buffer };

/** The fields each command takes; any other field is refused (a typo such as `stop` would otherwise pass silently). */
const FIELDS: Record<Op, readonly string[]> = {
  get: ['key'],
  put: ['key', 'value'],
  delete: ['key'],
  scan: ['start', 'end'],
  cas: ['key', 'old', 'new'],
};
const OPS = Object.keys(FIELDS) as Op[];

/** A command the user got wrong: answered on `err` with the reason. */
class InvalidCommand extends Error {}

/**
 * kv: a key-value store on disk (LevelDB through the `level` package), only
 * as a linked offramp. Every input event is a command and gets exactly one
 * reply: on `out` with meta `{kv: {op}}`, or on `err` when the command is
 * invalid or the store fails (and then the send fails too). Commands run one
 * at a time in arrival order, so a command sees every earlier one applied
 * and a cas is atomic. Values are stored encoded with the ramp's codec and
 * decoded with it on the way out.
 */
export const kv: OfframpType<Static<typeof configSchema>> = {
  name: 'kv',
  defaultCodec: 'json',
  autoAck: true,
  linkable: 'required',
  example: { dir: '/tmp/eddy-kv' },
  configSchema,
  async create(config, ctx) {
    // opened here so that a bad or locked directory fails the activation
    let db: LevelPackage.Level<Buffer, Buffer>;
    // the first directory this made (undefined when the directory existed): removed again if the activation fails
    let created: string | undefined;
    try {
      created = await mkdir(config.dir, { recursive: true });
      db = new Level<Buffer, Buffer>(config.dir, { keyEncoding: 'buffer', valueEncoding: 'buffer' });
      await db.open();
    } catch (err) {
      if (created !== undefined) await rm(created, { recursive: true, force: true });
      const cause = (err as Error & { cause?: Error }).cause;
      throw new Error(`kv: cannot open ${config.dir}: ${cause?.message ?? (err as Error).message}`);
    }
    const store = new Store(db, ctx);
    let committed = false;
    return {
      send: (_payloads, event) => store.enqueue(event),
      commit: () => void (committed = true),
      close: async () => {
        await store.close();
        // the activation failed: the store this made for it goes again
        if (!committed && created !== undefined) await rm(created, { recursive: true, force: true });
      },
    };
  },
};

class Store {
  /** the end of the command queue: each event's commands start when the previous event's are done */
  private tail: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly db: LevelPackage.Level<Buffer, Buffer>,
    private readonly ctx: OfframpContext,
  ) {}

  enqueue(event: EddyEvent): Promise<void> {
    const run = this.tail.then(() => this.runEvent(event));
    this.tail = run.catch(() => undefined);
    return run;
  }

  async close(): Promise<void> {
    await this.tail;
    await this.db.close();
  }

  /** One command per event, or one per batch member, each answered with its member's own `correlation`. */
  private async runEvent(event: EddyEvent): Promise<void> {
    const requests = event.isBatch ? members(event) : [event];
    const failures: string[] = [];
    for (const request of requests) {
      const failure = await this.runOne(request);
      if (failure !== undefined) failures.push(failure);
    }
    if (failures.length === 0) return;
    throw new Error(requests.length === 1 ? failures[0] : `${failures.length} of ${requests.length} batched commands failed; the first: ${failures[0]}`);
  }

  /** Runs one command and replies; returns the error when it failed. */
  private async runOne(request: EddyEvent): Promise<string | undefined> {
    let command: Command;
    try {
      command = parse(request.data, this.ctx);
    } catch (err) {
      const error = `Invalid KV command: ${(err as Error).message}`;
      this.ctx.reply('err', request, { key: null, error }, { kv: { op: null }, error });
      return error;
    }
    try {
      const data = await this.execute(command, request.ingestNs);
      this.ctx.reply('out', request, data, { kv: { op: command.op } });
      return undefined;
    } catch (err) {
      const error = `KV ${command.op} failed: ${(err as Error).message}`;
      this.ctx.reply('err', request, { key: null, error }, { kv: { op: command.op }, error });
      return error;
    }
  }

  private async execute(command: Command, ingestNs: bigint): Promise<unknown> {
    const { db } = this;
    // undefined when the key is not there (abstract-level 3); level's own d.ts still says Promise<V>
    const get = (key: Buffer): Promise<Buffer | undefined> => db.get(key);
    const decode = (stored: Buffer) => this.ctx.codec.decode(stored, ingestNs) ?? null;
    const found = (stored: Buffer | undefined) => (stored === undefined ? null : { ok: decode(stored) });
    switch (command.op) {
      case 'get':
        return found(await get(command.key));
      case 'put': {
        const old = await get(command.key);
        await db.put(command.key, command.value);
        return found(old);
      }
      case 'delete': {
        const old = await get(command.key);
        if (old !== undefined) await db.del(command.key);
        return found(old);
      }
      case 'scan': {
        const range: { gte?: Buffer; lt?: Buffer } = {};
        if (command.start !== undefined) range.gte = command.start;
        if (command.end !== undefined) range.lt = command.end;
        const entries = await db.iterator(range).all();
        return { ok: entries.map(([key, value]) => ({ key, value: decode(value) })) };
      }
      case 'cas': {
        // atomic because commands run one at a time: nothing can write between this read and the write
        const current = await get(command.key);
        const matches = command.old === undefined ? current === undefined : current?.equals(command.old);
        if (!matches) {
          return { error: { current: current === undefined ? null : decode(current), proposed: command.new === undefined ? null : decode(command.new) } };
        }
        if (command.new !== undefined) await db.put(command.key, command.new);
        else if (current !== undefined) await db.del(command.key);
        return { ok: null };
      }
    }
  }
}

/** The batch members as single requests, each with its own meta (and so its own `correlation`). */
function members(event: EddyEvent): EddyEvent[] {
  const entries: unknown[] = Array.isArray(event.data) ? event.data : [];
  return entries.map((entry) => {
    const inner = (entry as { data?: { value?: unknown; meta?: Meta | null } | null } | null)?.data;
    const holds = inner !== null && typeof inner === 'object' && 'value' in inner;
    return { ...event, isBatch: false, data: holds ? inner.value : entry, meta: (holds ? inner.meta : undefined) ?? {} };
  });
}

/** Checks a command and encodes its values; throws InvalidCommand with the reason. */
function parse(data: unknown, ctx: OfframpContext): Command {
  if (!isRecord(data)) throw new InvalidCommand(`a command is a map with one of ${OPS.join(', ')} as its only key, got ${describe(data)}`);
  const names = Object.keys(data);
  if (names.length !== 1)
    throw new InvalidCommand(`a command has exactly one key (one of ${OPS.join(', ')}), got ${names.length === 0 ? 'none' : names.join(', ')}`);
  const op = names[0] as Op;
  if (!OPS.includes(op)) throw new InvalidCommand(`unknown command '${op}' (commands: ${OPS.join(', ')})`);
  const body = data[op];
  if (!isRecord(body)) throw new InvalidCommand(`${op} takes a map of ${FIELDS[op].join(', ')}, got ${describe(body)}`);
  for (const field of Object.keys(body)) {
    if (!FIELDS[op].includes(field)) throw new InvalidCommand(`unknown field '${field}' in ${op} (fields: ${FIELDS[op].join(', ')})`);
  }
  const has = (field: string) => body[field] !== undefined;
  const encode = (field: string) => {
    try {
      return ctx.codec.encode(body[field]);
    } catch (err) {
      throw new InvalidCommand(`${op}.${field} cannot be encoded with the ${ctx.codec.name} codec: ${(err as Error).message}`);
    }
  };
  switch (op) {
    case 'get':
    case 'delete':
      return { op, key: key(body, 'key', op, true) };
    case 'put':
      if (!has('value')) throw new InvalidCommand('put needs a value');
      return { op, key: key(body, 'key', op, true), value: encode('value') };
    case 'scan':
      return { op, start: key(body, 'start', op, false), end: key(body, 'end', op, false) };
    case 'cas':
      return { op, key: key(body, 'key', op, true), old: has('old') ? encode('old') : undefined, new: has('new') ? encode('new') : undefined };
  }
}

/** A key field: a string (stored as its UTF-8 bytes) or binary. */
function key(body: Record<string, unknown>, field: string, op: Op, required: true): Buffer;
function key(body: Record<string, unknown>, field: string, op: Op, required: false): Buffer | undefined;
function key(body: Record<string, unknown>, field: string, op: Op, required: boolean): Buffer | undefined {
  const value = body[field];
  if (value === undefined) {
    if (required) throw new InvalidCommand(`${op} needs a ${field}`);
    return undefined;
  }
  if (typeof value === 'string') return Buffer.from(value, 'utf8');
  if (value instanceof Uint8Array) return Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  throw new InvalidCommand(`${op}.${field} must be a string or binary, got ${describe(value)}`);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value) && !(value instanceof Uint8Array);
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (value instanceof Uint8Array) return 'binary';
  return `a ${typeof value}`;
}
