/**
 * The event model shared by onramps, pipelines and offramps.
 *
 * An event's `id` names the onramp instance that read it (`uid`) and its
 * sequence number there, so an ack or fail can find its way home. A batch
 * event gets an id of its own and lists the ids of its members in `tracked`.
 */
export interface EventId {
  /** uid of the onramp instance (or operator) that minted this id */
  readonly uid: number;
  /** sequence number within that uid, from 1 */
  readonly seq: number;
}

/** An event's metadata: what connectors set and read besides the data (headers, keys, offsets). */
export type Meta = Record<string, unknown>;

/**
 * One event on its way through onramps, pipelines and offramps. `T` is what
 * an application declares its data to be (`pipelineOperator<In, Out>`); eddy
 * itself never knows more than `unknown`.
 */
export interface EddyEvent<T = unknown> {
  id: EventId;
  data: T;
  meta: Meta;
  /** wall-clock nanoseconds since the epoch when the onramp read the event */
  ingestNs: bigint;
  /** where the event came from, e.g. `svc-file://host/path` */
  originUri: string;
  /** `data` is an array of batch entries `{data: {value, meta, ingest_ns}}` */
  isBatch: boolean;
  /** ids of the member events of a batch (absent for a plain event) */
  tracked?: EventId[];
  /** the source wants an ack or fail for this event */
  transactional: boolean;
  /**
   * The source partition the event belongs to (kafka: `topic/partition`),
   * set by a partitioned onramp and kept by operators on what they derive
   * from it: stateful operators keep their state per partition (core/state.ts).
   * Absent: the one partition of an unpartitioned source.
   */
  partition?: string;
  /**
   * Set by a source that gives the same events in the same order when it
   * is read again after a restart (the file onramp: its instance's URL): a
   * checkpointing qos::wal counts what it stored of each such source and
   * drops what it is sent again (core/checkpoint.ts).
   */
  replay?: string;
  /** per-operator bookkeeping, keyed by operator uid, echoed back in insights */
  opMeta?: Record<string, unknown>;
}

/** Every id an insight about this event must reach. */
export function trackedIds(event: EddyEvent): readonly EventId[] {
  return event.tracked ?? [event.id];
}

/** A port-tagged event, as emitted by a pipeline node. */
export interface PortEvent<T = unknown> {
  port: string;
  event: EddyEvent<T>;
}

/**
 * Contraflow: delivery and circuit-breaker insights travelling from offramps
 * and operators back towards the onramps that produced the events.
 * `trigger` is the spec's close, `restore` the spec's open.
 */
export type InsightKind = 'ack' | 'fail' | 'trigger' | 'restore';

/** One contraflow message (an ack, a fail, a breaker trigger or restore) on its way back to the sources. */
export interface Insight {
  kind: InsightKind;
  /** the event the insight is about (ack/fail); absent for trigger/restore from a sink */
  event?: EddyEvent;
  /**
   * Who raised it (an offramp or operator URL). A circuit breaker stays
   * triggered while any of the parts that triggered it has not restored.
   */
  from: string;
  /** extra facts such as `time` (ms) or `error` */
  meta?: Meta;
}

/** The member values of a batch event: `[{data: {value, ...}}, ...]`. */
export function batchValues(data: unknown): unknown[] {
  if (!Array.isArray(data)) return [data];
  return data.map(batchValue);
}

/** The entries of a batch's data, values not read (`batchValue` reads one): for a batch member kept unread (lazy-event.ts). */
export function batchEntries(data: unknown): unknown[] {
  return Array.isArray(data) ? data : [data];
}

/** The value of one entry of a batch's data: its `data.value`, else the entry itself. */
export function batchValue(entry: unknown): unknown {
  const inner = (entry as { data?: { value?: unknown } } | null)?.data;
  return inner && typeof inner === 'object' && 'value' in inner ? inner.value : entry;
}

/** Where the events an application makes itself come from, unless it says otherwise. */
export const APP_ORIGIN = 'app://eddy';
/** The id space of events an application makes itself: no onramp or operator ever gets uid 0. */
export const APP_UID = 0;
let appSeq = 0;

/** What `event()` lets an application set besides data and meta. */
export interface EventOptions {
  /** the event's id; the next of uid 0 (the application's own) when absent */
  id?: EventId;
  /** ingest time in ns since the epoch; now when absent */
  ingestNs?: bigint;
  /** where it came from; `app://eddy` when absent */
  originUri?: string;
  /** the sender wants an ack or fail for it */
  transactional?: boolean;
}

/**
 * An event made from a plain value, for feeding pipelines from an
 * application or a test: `event({msg: 'hi'}, {index: 'logs'})`.
 */
export function event(data: unknown, meta: Meta = {}, options: EventOptions = {}): EddyEvent {
  return {
    id: options.id ?? { uid: APP_UID, seq: ++appSeq },
    data,
    meta,
    ingestNs: options.ingestNs ?? BigInt(Date.now()) * 1_000_000n,
    originUri: options.originUri ?? APP_ORIGIN,
    isBatch: false,
    transactional: options.transactional ?? false,
  };
}

/** True when a value is an eddy event (as opposed to a plain value to wrap with `event()`). */
export function isEvent(value: unknown): value is EddyEvent {
  if (value === null || typeof value !== 'object') return false;
  // anything at all: each field may be missing or null
  const e = value as { [K in keyof EddyEvent]?: EddyEvent[K] | null };
  return (
    typeof e.id === 'object' &&
    e.id !== null &&
    typeof e.id.uid === 'number' &&
    typeof e.id.seq === 'number' &&
    typeof e.ingestNs === 'bigint' &&
    typeof e.isBatch === 'boolean' &&
    'data' in e &&
    typeof e.meta === 'object'
  );
}
