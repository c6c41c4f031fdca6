import { present } from './errors';
import type { EddyEvent, EventId, Meta } from './event';

/**
 * What a lazy event needs of its codec (codecs/codec.ts's `Codec` is one):
 * declared here so the core does not depend on the codecs above it.
 */
export interface FrameCodec {
  readonly name: string;
  decode(data: Buffer, ingestNs: bigint): unknown;
}

/**
 * An event whose data is decoded the first time something reads it.
 *
 * An onramp whose codec can validate a frame without decoding it
 * (`Codec.roundTrips`: the frame is valid and encoding its value would give
 * exactly these bytes) makes its events this way. An event nobody reads on
 * its way (an empty pipeline, fan-out to offramps with the same codec) is
 * never decoded at all: the offramp writes out the frame it came in as. The
 * first read or write of `data` decodes (or replaces) the value and forgets
 * the frame for good, since the value may be changed in place from then on.
 *
 * `data` is an accessor on the prototype, so spreading an unread event
 * (`{...event}`) would not copy it: the pipeline gives operators that may
 * read data an event whose `data` is its own property (`ownData`), and the
 * machinery never spreads one. `toJSON` writes `data` like any other field.
 */
export class LazyEvent implements EddyEvent {
  isBatch = false;
  declare tracked?: EventId[];
  declare opMeta?: Record<string, unknown>;
  declare partition?: string;
  declare replay?: string;
  // private fields (#): invisible to spread, Object.keys and JSON.stringify
  #frame: Buffer | undefined;
  #value: unknown = undefined;
  readonly #codec: FrameCodec;
  readonly #policy: LazyPolicy;

  constructor(
    public id: EventId,
    public meta: Meta,
    public ingestNs: bigint,
    public originUri: string,
    public transactional: boolean,
    /** undefined: the data is already read (a `withMeta` copy of a read event, `#value` set by it) */
    frame: Buffer | undefined,
    codec: FrameCodec,
    policy: LazyPolicy,
  ) {
    this.#frame = frame;
    this.#codec = codec;
    this.#policy = policy;
  }

  get data(): unknown {
    const frame = this.#frame;
    if (frame !== undefined) {
      this.#frame = undefined;
      this.#policy.missed();
      // roundTrips said this frame decodes: a throw here is a codec bug, and surfaces where data is read
      this.#value = this.#codec.decode(frame, this.ingestNs);
    }
    return this.#value;
  }

  set data(value: unknown) {
    this.#frame = undefined;
    this.#value = value;
  }

  /** Its data has not been read or set: it is still the frame it came in as. */
  get unread(): boolean {
    return this.#frame !== undefined;
  }

  /** The frame this event came in as, while its data is unread and `codec` is the one that validated it. */
  untouchedFrame(codec: FrameCodec): Buffer | undefined {
    return this.#frame !== undefined && codec.name === this.#codec.name ? this.#frame : undefined;
  }

  /**
   * The frame while the data is unread and the codec that validated it is
   * named `codecName`: for a reader that can take what it needs from the
   * frame itself (runtime::cel reading a few top-level fields of a json
   * frame) without decoding the event, so the frame still goes out as it came.
   */
  unreadFrame(codecName: string): Buffer | undefined {
    return this.#frame !== undefined && codecName === this.#codec.name ? this.#frame : undefined;
  }

  /**
   * A copy of this event with other metadata, its data still unread: the
   * frame and codec are shared (a frame is never changed), so the copy goes
   * out as the same frame unless something reads or sets its data. Every
   * own field but `data` is copied as spread would.
   */
  withMeta(meta: Meta): LazyEvent {
    const copy = new LazyEvent(this.id, meta, this.ingestNs, this.originUri, this.transactional, this.#frame, this.#codec, this.#policy);
    copy.#value = this.#value;
    for (const key of Object.keys(this)) {
      if (key !== 'data' && key !== 'meta') (copy as unknown as Record<string, unknown>)[key] = (this as unknown as Record<string, unknown>)[key];
    }
    return copy;
  }

  /** JSON.stringify(event) writes `data` as it does for any other event. */
  toJSON(): object {
    // the own fields as a plain object (JSON has no prototypes), as a spread would copy them
    return Object.assign({}, this, { data: this.data });
  }
}

/**
 * The `data` of one batch member (`{value, meta, ingest_ns}`, generic::batch)
 * made from a lazy event whose data is still unread: `value` is an own
 * enumerable accessor onto the event's data, so it is decoded only when
 * something reads it (a spread or JSON.stringify of the batch reads it too),
 * and until then an offramp can write the member out as the frame it came
 * in as (`unreadMemberFrame`). Setting `value` replaces the data, as setting
 * an event's data does.
 */
export class LazyMember {
  declare value: unknown;
  // declared, not initialised: assigned after `value`, so the keys keep a plain member's order
  declare meta: Meta;
  declare ingest_ns: bigint;
  readonly #event: LazyEvent;

  constructor(event: LazyEvent) {
    this.#event = event;
    Object.defineProperty(this, 'value', VALUE_ACCESSOR);
    this.meta = event.meta;
    this.ingest_ns = event.ingestNs;
  }

  /** The member's frame while its value is unread and it was validated by the codec named `codecName`. */
  unreadFrame(codecName: string): Buffer | undefined {
    return this.#event.unreadFrame(codecName);
  }

  /** `value`'s accessor (shared by every member, so none needs a closure of its own) */
  static read(member: LazyMember): unknown {
    return member.#event.data;
  }

  static write(member: LazyMember, value: unknown): void {
    member.#event.data = value;
  }
}

const VALUE_ACCESSOR: PropertyDescriptor = {
  get(this: LazyMember) {
    return LazyMember.read(this);
  },
  set(this: LazyMember, value: unknown) {
    LazyMember.write(this, value);
  },
  enumerable: true,
  configurable: true,
};

/** A batch member's `data` for `event`: lazy while the event's data is unread (see `LazyMember`), a plain record otherwise. */
export function batchMember(event: EddyEvent): { value: unknown; meta: Meta; ingest_ns: bigint } {
  if (event instanceof LazyEvent && event.unread) return new LazyMember(event);
  return { value: event.data, meta: event.meta, ingest_ns: event.ingestNs };
}

/** The frame of a batch entry (`{data: member}`) whose member is still unread and came through the codec named `codecName`. */
export function unreadMemberFrame(entry: unknown, codecName: string): Buffer | undefined {
  const member = (entry as { data?: unknown } | null | undefined)?.data;
  return member instanceof LazyMember ? member.unreadFrame(codecName) : undefined;
}

/** The prototype's `data` accessor, installed as an own enumerable property by `ownData` (one descriptor for all: ~50 ns less per event than a fresh one). */
const DATA_ACCESSOR = present(Object.getOwnPropertyDescriptor(LazyEvent.prototype, 'data'), "LazyEvent's data accessor");
const OWN_DATA: PropertyDescriptor = { ...DATA_ACCESSOR, enumerable: true, configurable: true };

/**
 * Makes `data` an own enumerable property of the event, so code that copies
 * events with spread or Object.assign keeps it. The pipeline does this at
 * the input of every operator that may read data. The property is the same
 * accessor, now own: nothing is decoded until something reads it (a spread
 * reads it, and so decodes), so an operator that reads only meta
 * (grouper::bucket) or only a few fields from the frame (runtime::cel, see
 * `unreadFrame`) leaves the frame to go out as it came.
 */
export function ownData(event: EddyEvent): EddyEvent {
  if (event instanceof LazyEvent && !Object.hasOwn(event, 'data')) {
    Object.defineProperty(event, 'data', OWN_DATA);
  }
  return event;
}

/** The event with other metadata, without reading its data: an unread lazy event stays unread. */
export function withMeta(event: EddyEvent, meta: Meta): EddyEvent {
  return event instanceof LazyEvent ? event.withMeta(meta) : { ...event, meta };
}

/** Frames validated per round of the policy. */
const ROUND = 256;
/** Frames decoded eagerly, without a check, after a round where laziness did not pay. */
const EAGER_SPAN = 8192;

/**
 * Whether an onramp should still make lazy events. Laziness costs a check
 * per frame and pays only when the data then goes unread: a frame the codec
 * refuses (not in its own form, pretty-printed JSON say) or an event whose
 * data is read costs the check on top of the decode. So each onramp counts
 * those misses over a round of 256 lazy attempts; after a round with more
 * than a quarter missed it decodes the next 8192 frames eagerly, then tries
 * again. Reads that happen later (a batch, a window) count in a later round.
 */
export class LazyPolicy {
  private attempts = 0;
  private misses = 0;
  private eagerLeft = 0;

  /** Whether to try the next frame lazily. */
  tryLazy(): boolean {
    if (this.eagerLeft === 0) return true;
    this.eagerLeft--;
    return false;
  }

  /** A lazy attempt was made; `accepted` says whether the codec took the frame. */
  attempted(accepted: boolean): void {
    if (!accepted) this.misses++;
    if (++this.attempts < ROUND) return;
    if (this.misses * 4 > ROUND) this.eagerLeft = EAGER_SPAN;
    this.attempts = this.misses = 0;
  }

  /** A lazy event's data was read after all. */
  missed(): void {
    this.misses++;
  }
}
