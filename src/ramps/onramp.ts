import { EMPTY, Observable, Subject, Subscription, asyncScheduler, distinctUntilChanged, share, type SchedulerLike } from '../core/rx';
import type { EddyEvent, EventId, Insight } from '../core/event';
import { trackedIds } from '../core/event';
import { nowNs } from '../core/clock';
import type { Codec } from '../codecs/codec';
import { runProcessors, type FrameContext, type Postprocessor, type Preprocessor, type ProcessorError } from '../processors/processor';
import type { Frame, ListenForConnections, OnrampContext, OnrampSource, RampContext, SourceInputs } from '../connectors/connector';
import { listenHere } from '../connectors/_shared/net';
import { CircuitBreaker } from '../contraflow/circuit-breaker';
import { RampCounters } from '../connectors/_shared/ramp-metrics';
import { FastSubject } from '../core/fast-subject';
import { pullLoop } from '../connectors/_shared/pull-loop';
import { batchValues } from '../core/event';
import { codecPicker } from '../connectors/_shared/codecs';
import { TapHook } from '../core/tap-hook';
import { LazyEvent, LazyPolicy } from '../core/lazy-event';

export interface OnrampParts {
  readonly ctx: RampContext;
  /** the breaker the context's gate and pull loops read */
  readonly breaker: CircuitBreaker;
  readonly source: OnrampSource;
  readonly codec: Codec;
  /** builds a fresh preprocessor chain for a new stream */
  readonly preprocessors: () => Preprocessor[];
  /** the ramp's postprocessors, applied to the replies of a linked onramp */
  readonly postprocessors?: Postprocessor[];
  /** a codec by name, for frames and replies that name their own (rest by Content-Type); default: only the ramp's */
  readonly codecs?: (name: string) => Codec;
}

/** Frames held while the gate is closed beyond which a source is reported as one that does not pause. */
const HELD_WARNING = 10_000;

export interface OnrampContextOptions {
  linked?: boolean;
  /** where connection listeners bind (a worker's primary); absent: in this process */
  listenForConnections?: ListenForConnections;
  codecForMime?: (contentType: string | undefined) => string;
  scheduler?: SchedulerLike;
}

/**
 * The context an onramp type is created with: the gate is a read-only view
 * of `breaker`, and its pull loops are driven by that breaker.
 */
export function onrampContext(base: RampContext, breaker: CircuitBreaker, options: OnrampContextOptions = {}): OnrampContext {
  const scheduler = options.scheduler;
  return {
    ...base,
    gate: breaker,
    pullLoop: (step, onDone) => pullLoop(breaker, step, onDone, scheduler),
    linked: options.linked ?? false,
    codecForMime: options.codecForMime ?? (() => 'json'),
    scheduler: scheduler ?? asyncScheduler,
    listenForConnections: options.listenForConnections ?? listenHere,
  };
}

/**
 * The shared onramp machinery around an onramp type's frames: per-stream
 * preprocessors, the codec, event ids, the `err` port and the circuit
 * breaker. `out$` is the instance's event stream: subscribing starts the
 * source, and the last unsubscribe stops it. Decode and preprocess errors go
 * to `err$` and are counted; with nothing connected to `err` they are logged.
 */
export class OnrampRuntime {
  readonly breaker: CircuitBreaker;
  readonly counters = new RampCounters();
  readonly out$: Observable<EddyEvent>;
  readonly err$ = new Subject<EddyEvent>();
  /** the live tap's hooks on `out` (events as emitted) and `err` (decode errors) */
  readonly taps = { out: new TapHook(), err: new TapHook() };
  private seq = 0;
  private readonly lazyPolicy = new LazyPolicy();
  private readonly chains = new Map<string | number, Preprocessor[]>();
  /** the last stream's chain: most frames come from the stream before them, so no Map lookup */
  private lastStream: string | number | undefined;
  private lastChain: Preprocessor[] | undefined;
  private readonly transactional: boolean;
  /** `EddyEvent.replay` of every event, for a source that reads the same events again after a restart */
  private readonly replay: string | undefined;
  private lastUnroutedLog = 0;
  private loggedErrors = 0;
  /** what the frame being handled made, for its `done` callback */
  private result: { ids: EventId[]; errors: string[] } | undefined;
  /** the events of the frame being handled, held until its `done` has seen their ids */
  private made: EddyEvent[] = [];
  /** collects into `made`: one function for every frame rather than a closure per frame */
  private readonly collect = (event: EddyEvent): void => void this.made.push(event);
  private closed = false;
  private readonly codec: (name?: string) => Codec;
  /** why the source failed, if it did: it reads nothing more */
  failure: string | undefined;
  /** frames that arrived while the gate was closed and wait for it to open (see `held`) */
  private heldNow: () => number = () => 0;

  /** the type's source (the runtime hands a transactional one what its events reach: runtime/downstream.ts) */
  get source(): OnrampSource {
    return this.parts.source;
  }

  /** the source's released partitions (OnrampSource.partitionsReleased): the pipelines it feeds drop their state */
  get partitionsReleased$(): Observable<string[]> {
    return this.parts.source.partitionsReleased ?? EMPTY;
  }

  /**
   * Whether the source reads: `false` while the breaker holds it or the
   * source says it reads nothing (OnrampSource.readingChanges), only changes.
   * The stateful nodes it feeds stop their idle clocks meanwhile.
   */
  get reading$(): Observable<boolean> {
    const own = this.parts.source.readingChanges;
    return new Observable<boolean>((subscriber) => {
      let open = true;
      let reading = true;
      // the breaker's changes begin with its state now
      const sub = this.breaker.changes.subscribe((o) => {
        open = o;
        subscriber.next(open && reading);
      });
      if (own) {
        sub.add(
          own.subscribe((r) => {
            reading = r;
            subscriber.next(open && reading);
          }),
        );
      }
      return sub;
    }).pipe(distinctUntilChanged());
  }

  constructor(private readonly parts: OnrampParts) {
    this.breaker = parts.breaker;
    this.codec = codecPicker(parts.codec, parts.codecs, parts.ctx.url);
    this.transactional = parts.source.transactional === true;
    this.replay = parts.source.replayable ? parts.ctx.url : undefined;
    const { source } = parts;
    const kernelDrops = source.kernelDrops?.bind(source);
    if (kernelDrops) this.counters.kernelDrops = kernelDrops;
    this.out$ = new Observable<EddyEvent>((subscriber) => {
      const outTap = this.taps.out;
      const emit = (event: EddyEvent) => {
        if (outTap.listener !== undefined) outTap.listener(event);
        subscriber.next(event);
      };
      const { source } = parts;
      // frames that arrive while the gate is closed: held in order, released when it opens
      const held: Frame[] = [];
      let heldFrom = 0;
      let warned = false;
      let paused = false;
      // the source ended: the stream ends once the frames still held are released
      let ended = false;
      this.heldNow = () => held.length - heldFrom;
      // Checks the breaker before every frame: a frame released here can make a sink
      // trigger it again (synchronously), and then the rest stay held until it restores.
      const release = () => {
        while (heldFrom < held.length && this.breaker.isOpen) {
          const frame = held[heldFrom];
          held[heldFrom++] = undefined as unknown as Frame;
          this.handleFrame(frame, emit);
        }
        if (heldFrom !== held.length) return;
        held.length = heldFrom = 0;
        if (ended) subscriber.complete();
      };
      const sub: Subscription = source.frames.subscribe({
        next: (frame) => {
          if (this.breaker.isOpen && heldFrom === held.length) return this.handleFrame(frame, emit);
          held.push(frame);
          if (!warned && held.length - heldFrom > HELD_WARNING) {
            warned = true;
            parts.ctx.logger.warn(`Onramp ${parts.ctx.url}: more than ${HELD_WARNING} frames arrived while paused; its type does not pause its source`);
          }
        },
        error: (err) => {
          this.failure = (err as Error).message;
          parts.ctx.logger.error(`Onramp ${parts.ctx.url} failed: ${this.failure}`);
          subscriber.error(err);
        },
        complete: () => {
          ended = true;
          release();
        },
      });
      // the one place the gate is enforced: the type only says how to pause
      const gate = this.breaker.changes.subscribe((open) => {
        if (!open) {
          if (!paused) source.pause?.();
          paused = true;
          return;
        }
        release();
        if (paused && this.breaker.isOpen) {
          paused = false;
          source.resume?.();
        }
      });
      return () => {
        gate.unsubscribe();
        sub.unsubscribe();
        this.forgetChains();
      };
    }).pipe(share({ connector: () => new FastSubject<EddyEvent>() }));
  }

  /** Releases what the type opened (a listening socket). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.parts.source.close?.();
  }

  /** how many frames the type delivered while the gate was closed, held here until it opens */
  get held(): number {
    return this.heldNow();
  }

  /** the type's own report of what it reads from (see `OnrampSource.inputs`), if it makes one */
  inputs(): SourceInputs | undefined {
    return this.parts.source.inputs?.();
  }

  /** connections the type closed itself, by reason (see `OnrampSource.closedConnections`), if it closes any */
  closedConnections(): Readonly<Record<string, number>> | undefined {
    return this.parts.source.closedConnections?.();
  }

  get uid(): number {
    return this.parts.ctx.uid;
  }

  get url(): string {
    return this.parts.ctx.url;
  }

  /** contraflow reaching this onramp: acks and fails for its own events, and its gate */
  contraflow(insight: Insight): void {
    switch (insight.kind) {
      case 'trigger':
        this.breaker.trigger(insight.from);
        return;
      case 'restore':
        this.breaker.restore(insight.from);
        return;
      case 'ack':
      case 'fail': {
        const { source } = this.parts;
        const ack = insight.kind === 'ack';
        if ((ack ? !source.onAck : !source.onFail) || !insight.event) return;
        for (const id of ownIds(insight.event, this.uid)) {
          if (ack) source.onAck?.(id, insight);
          else source.onFail?.(id, insight);
        }
      }
    }
  }

  /** A reply on a linked onramp's `in` port: handed to the type with a way to encode it. */
  reply(event: EddyEvent): void {
    const { source } = this.parts;
    if (!source.reply) {
      this.parts.ctx.logger.warn(`Onramp ${this.url}: a reply arrived, but this onramp is not a linked transport; dropped`);
      return;
    }
    try {
      source.reply({ event, ids: ownIds(event, this.uid), encode: (codec) => this.encodeReply(event, codec) });
    } catch (err) {
      // a reply the type rejects (a batch, an unencodable value) is an error of this ramp, not of the pipeline that sent it
      this.counters.error++;
      this.parts.ctx.logger.warn(`Onramp ${this.url}: reply rejected: ${(err as Error).message}`);
    }
  }

  private encodeReply(event: EddyEvent, codecName: string | undefined): Buffer[] {
    const codec = this.codec(codecName);
    const post = this.parts.postprocessors ?? [];
    const ctx: FrameContext = { ingestNs: event.ingestNs };
    const values = event.isBatch ? batchValues(event.data) : [event.data];
    return values.flatMap((value) => runProcessors(post, [codec.encode(value)], ctx));
  }

  private handleFrame(frame: Frame, emit: (event: EddyEvent) => void): void {
    if (frame.done === undefined) return this.process(frame, emit);
    // The events go downstream only after `done` has seen their ids: pipelines
    // run synchronously, so a linked onramp must be waiting for a reply before
    // the pipeline can produce one.
    const outer = this.made;
    const made: EddyEvent[] = (this.made = []);
    const result = (this.result = { ids: [] as EventId[], errors: [] as string[] });
    try {
      this.process(frame, this.collect);
    } finally {
      this.made = outer;
      this.result = undefined;
      frame.done(result);
    }
    for (const event of made) emit(event);
  }

  private process(frame: Frame, emit: (event: EddyEvent) => void): void {
    const ingestNs = frame.ingestNs ?? nowNs();
    if (frame.error !== undefined) {
      // bad input the type found itself (it decodes its own protocol): an error like a decode error
      this.counters.in++;
      this.error(new Error(frame.error), frame, ingestNs, frame.data);
      return;
    }
    if (frame.value !== undefined) {
      this.counters.in++;
      this.counters.bytes += frame.bytes ?? 0;
      emit(this.makeEvent(frame.value, frame, ingestNs));
      return;
    }
    if (frame.data !== undefined) {
      this.counters.in++;
      this.counters.bytes += frame.data.length;
    }
    const chain = this.chainFor(frame.stream);
    if (chain.length === 0 && !frame.end) {
      // the common case: no preprocessors, one payload, nothing to allocate
      if (frame.data !== undefined) this.decode(frame.data, frame, ingestNs, emit);
      return;
    }
    const fctx: FrameContext = { ingestNs };
    if (frame.data !== undefined) {
      let payloads: Buffer[];
      try {
        payloads = runProcessors(chain, [frame.data], fctx);
      } catch (err) {
        this.error(err as Error, frame, fctx.ingestNs, frame.data);
        payloads = (err as ProcessorError).frames ?? [];
      }
      for (const payload of payloads) this.decode(payload, frame, fctx.ingestNs, emit);
    }
    if (frame.end) {
      this.chains.delete(frame.stream);
      if (this.lastStream === frame.stream) this.lastChain = this.lastStream = undefined;
      let rest: Buffer[] = [];
      try {
        rest = runProcessors(chain, [], fctx, true);
      } catch (err) {
        this.error(err as Error, frame, fctx.ingestNs, undefined);
        rest = (err as ProcessorError).frames ?? [];
      }
      for (const payload of rest) this.decode(payload, frame, fctx.ingestNs, emit);
    }
  }

  private chainFor(stream: string | number): Preprocessor[] {
    if (this.lastChain !== undefined && stream === this.lastStream) return this.lastChain;
    let chain = this.chains.get(stream);
    if (!chain) this.chains.set(stream, (chain = this.parts.preprocessors()));
    this.lastStream = stream;
    this.lastChain = chain;
    return chain;
  }

  private forgetChains(): void {
    this.chains.clear();
    this.lastChain = this.lastStream = undefined;
  }

  private decode(payload: Buffer, frame: Frame, ingestNs: bigint, emit: (event: EddyEvent) => void): void {
    const codec = this.codec(frame.codec);
    // a frame the codec vouches for is not decoded until something reads its data (see lazy-event.ts)
    if (codec.roundTrips !== undefined && this.lazyPolicy.tryLazy()) {
      const valid = codec.roundTrips(payload);
      this.lazyPolicy.attempted(valid);
      if (valid) {
        const lazy = new LazyEvent(this.nextId(), metaOf(frame), ingestNs, frame.originUri, this.transactional, payload, codec, this.lazyPolicy);
        if (frame.partition !== undefined) lazy.partition = frame.partition;
        if (this.replay !== undefined) lazy.replay = this.replay;
        return emit(lazy);
      }
    }
    let value: unknown;
    try {
      value = codec.decode(payload, ingestNs);
    } catch (err) {
      this.error(err as Error, frame, ingestNs, payload);
      return;
    }
    if (value === undefined) return; // the codec found no value in this frame (e.g. a comment line)
    emit(this.makeEvent(value, frame, ingestNs));
  }

  /** The id of the next event out: counted, announced to the source, kept for a linked reply. */
  private nextId(): EventId {
    this.counters.out++;
    const id: EventId = { uid: this.uid, seq: ++this.seq };
    this.parts.source.onEvent?.(id);
    this.result?.ids.push(id);
    return id;
  }

  private makeEvent(data: unknown, frame: Frame, ingestNs: bigint): EddyEvent {
    const event: EddyEvent = {
      id: this.nextId(),
      data,
      meta: metaOf(frame),
      ingestNs,
      originUri: frame.originUri,
      isBatch: false,
      transactional: this.transactional,
    };
    if (frame.partition !== undefined) event.partition = frame.partition;
    if (this.replay !== undefined) event.replay = this.replay;
    return event;
  }

  /** An undecodable or unprocessable frame: an event on `err`, never silently dropped. */
  private error(err: Error, frame: Frame, ingestNs: bigint, raw: Buffer | undefined): void {
    this.counters.error++;
    const id: EventId = { uid: this.uid, seq: ++this.seq };
    const message = err.message;
    this.result?.errors.push(message);
    const errTap = this.taps.err.listener;
    if (!this.err$.observed && errTap === undefined) return this.logUnrouted(message);
    const event: EddyEvent = {
      id,
      data: {
        error: message,
        event_id: `${id.uid}:${id.seq}`,
        source_id: this.parts.ctx.url,
        raw: raw === undefined ? null : rawText(raw),
      },
      meta: { error: message },
      ingestNs,
      originUri: frame.originUri,
      isBatch: false,
      transactional: false,
    };
    if (errTap !== undefined) errTap(event);
    if (this.err$.observed) this.err$.next(event);
    else this.logUnrouted(message);
  }

  /** An error with nothing connected to `err`: counted in the ramp's `error` metric; logged at most once a second so a bad stream cannot flood the log. */
  private logUnrouted(message: string): void {
    const now = Date.now();
    if (now - this.lastUnroutedLog < 1000) return;
    const more = this.counters.error - this.loggedErrors - 1;
    this.parts.ctx.logger.warn(
      `Onramp ${this.parts.ctx.url}: ${message} (err port not connected; counted${more > 0 ? `, ${more} more since the last report` : ''})`,
    );
    this.lastUnroutedLog = now;
    this.loggedErrors = this.counters.error;
  }
}

export function ownIds(event: EddyEvent, uid: number): EventId[] {
  return trackedIds(event).filter((id) => id.uid === uid);
}

/** The raw bytes for the err port: text when it is valid UTF-8, else base64, cut at 1 KiB. */
function rawText(raw: Buffer): string {
  const cut = raw.subarray(0, 1024);
  const text = cut.toString('utf8');
  return Buffer.from(text, 'utf8').equals(cut) ? text : `base64:${cut.toString('base64')}`;
}

/** An event's own meta: a copy of what the type set on its frame, so one event's changes never reach another's. */
function metaOf(frame: Frame): Record<string, unknown> {
  return frame.meta ? { ...frame.meta } : {};
}
