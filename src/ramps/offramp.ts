import { Observer, Subject, asyncScheduler, type SchedulerLike } from '../core/rx';
import type { EddyEvent, EventId, Insight, Meta } from '../core/event';
import { maskUrlCredentials } from '../core/redact';
import { nowNs } from '../core/clock';
import { batchEntries, batchValue, trackedIds } from '../core/event';
import { codecPicker } from '../connectors/_shared/codecs';
import type { Codec } from '../codecs/codec';
import { runProcessors, type FrameContext, type Postprocessor, type Preprocessor } from '../processors/processor';
import type { ContraflowTarget } from '../contraflow/contraflow';
import type { OfframpContext, RampContext, Sink } from '../connectors/connector';
import { RampCounters } from '../connectors/_shared/ramp-metrics';
import { TapHook } from '../core/tap-hook';
import { LazyEvent, unreadMemberFrame } from '../core/lazy-event';
import { RetryPolicy } from '../connectors/_shared/retry';
import { DeadLetters, type DeadLetterConfig, type DeliveryFailure } from '../connectors/_shared/dead-letters';

export interface OfframpParts {
  readonly ctx: RampContext;
  readonly codec: Codec;
  readonly postprocessors: Postprocessor[];
  readonly autoAck: boolean;
  /** in-flight sends beyond which the circuit breaker is triggered */
  readonly maxInFlight: number;
  readonly createSink: (ctx: OfframpContext) => Sink | Promise<Sink>;
  /** where a measuring sink hands its finished measurement (OfframpContext.publishMeasurement) */
  readonly publishMeasurement?: OfframpContext['publishMeasurement'];
  /** `linked: true`: responses are decoded with `preprocessors` and emitted on `out`/`err` */
  readonly linked?: boolean;
  /** the ramp's preprocessors (linked only), a fresh chain per response */
  readonly preprocessors?: () => Preprocessor[];
  /** a codec by name, for sinks that pick one per event or response (rest by Content-Type) */
  readonly codecs?: (name: string) => Codec;
  readonly codecForMime?: (contentType: string | undefined) => string;
  readonly scheduler?: SchedulerLike;
  /** the artefact's `retry`: failed sends tried again (retry.ts) */
  readonly retry?: RetryPolicy;
  /** the artefact's `dead_letter` (dead-letters.ts); dead letters go out on `err` whenever it is linked */
  readonly deadLetter?: DeadLetterConfig;
  /** the type's `ignoresPayloads`: with the json codec, events are measured for `bytes`, not encoded */
  readonly ignoresPayloads?: boolean;
}

/** What a sink that ignores payloads is handed. */
const NO_PAYLOADS: Buffer[] = [];

/** A send handed to the sink whose promise has not settled yet: what a retry or a fail needs. */
interface InFlightSend {
  readonly event: EddyEvent;
  readonly from: ContraflowTarget;
  readonly payloads: Buffer[];
  readonly attempt: number;
}

/**
 * The shared offramp machinery: a subscriber to pipeline ports. It encodes
 * each event (each batch member separately), runs the postprocessors, hands
 * the payloads to the sink, and sends acks and fails back to the pipeline
 * that delivered the event (per the spec's delivery table: auto-acking sinks
 * ack every transactional event they sent). In-flight sends above the limit
 * trigger the circuit breaker of every source feeding this offramp; falling
 * back below half the limit restores it. A failed send is tried again per
 * the `retry` policy, the breaker held meanwhile (the sources pause rather
 * than pile up events behind it); a failed event leaves on `err` as a dead
 * letter when that port is linked.
 */
export class OfframpRuntime {
  readonly counters = new RampCounters();
  readonly outputs = new Map<string, Subject<EddyEvent>>();
  /** the live tap's hook on `in`: every event handed to this offramp */
  readonly inTap = new TapHook();
  /** how often it told its sources to pause (`trigger`) and to read again (`restore`) */
  readonly breakerCounts = { trigger: 0, restore: 0 };
  private readonly inputs = new Set<ContraflowTarget>();
  private sink!: Sink;

  /** The type's sink, once opened (a transactional source joins it to its transactions: runtime/downstream.ts). */
  sinkOf(): Sink {
    return this.sink;
  }
  private inFlight = 0;
  /** one per distinct sink promise in flight (sends sharing one are a group) */
  private readonly pending = new Set<Promise<void>>();
  /** the last sink promise and the sends waiting on it: a send returning the same promise joins them */
  private last: { result: Promise<unknown>; group: InFlightSend[] } | undefined;
  private sinkTriggered = false;
  private loadTriggered = false;
  /** sends waiting for their next attempt */
  private readonly retrying = new Set<{ cancel(): void }>();
  /** what the sources were last told: held (trigger) or not (restore) */
  private breakerHeld = false;
  private readonly deadLetters: DeadLetters;
  /** which pipeline delivered an event, for sinks that ack later by themselves */
  private readonly deliveredBy = new WeakMap<EddyEvent, ContraflowTarget>();
  private closed = false;
  private committed = false;
  private seq = 0;

  private readonly codec: (name?: string) => Codec;

  constructor(private readonly parts: OfframpParts) {
    this.codec = codecPicker(parts.codec, parts.codecs, parts.ctx.url);
    this.deadLetters = new DeadLetters(parts.ctx.url, parts.ctx.uid, () => ++this.seq, parts.deadLetter ?? {});
    if (parts.retry) this.counters.retries = 0;
  }

  get url(): string {
    return this.parts.ctx.url;
  }

  /** the sink said it is down (disconnected, its stream full) and has not restored yet */
  get down(): boolean {
    return this.sinkTriggered;
  }

  /** its circuit breaker holds its sources back: the sink is down, too many sends are in flight, or a send waits to be retried */
  get triggered(): boolean {
    return this.breakerHeld;
  }

  /** sends handed to the sink that have not settled yet */
  get inFlightSends(): number {
    return this.inFlight;
  }

  async start(): Promise<void> {
    this.sink = await this.parts.createSink(this.offrampContext());
  }

  /** The activation opened every part: the sink's second phase (see `Sink.commit`). Once; later calls do nothing. */
  async commit(): Promise<void> {
    if (this.committed) return;
    this.committed = true;
    await this.sink.commit?.();
  }

  /** A pipeline port connects to this offramp's `in`: returns the observer to subscribe. */
  connect(from: ContraflowTarget): Observer<EddyEvent> {
    this.inputs.add(from);
    if (this.breakerHeld) from.contraflow({ kind: 'trigger', from: this.url });
    return {
      next: (event) => this.handle(event, from),
      error: () => undefined,
      complete: () => undefined,
    };
  }

  disconnect(from: ContraflowTarget): void {
    if (this.inputs.delete(from) && this.breakerHeld) {
      from.contraflow({ kind: 'restore', from: this.url });
    }
  }

  output(port: string): Subject<EddyEvent> {
    let subject = this.outputs.get(port);
    if (!subject) this.outputs.set(port, (subject = new Subject<EddyEvent>()));
    return subject;
  }

  handle(event: EddyEvent, from: ContraflowTarget): void {
    if (this.closed) return this.fail(event, from, { type: 'closed', message: 'offramp is closed', attempt: 0 });
    if (this.inTap.listener !== undefined) this.inTap.listener(event);
    this.counters.in++;
    let payloads: Buffer[];
    try {
      payloads = this.encode(event);
      for (const payload of payloads) this.counters.bytes += payload.length;
    } catch (err) {
      this.counters.error++;
      this.parts.ctx.logger.warn(`Offramp ${this.url}: cannot encode event: ${(err as Error).message}`);
      return this.fail(event, from, { type: 'encode', message: (err as Error).message, attempt: 0 });
    }
    if (!this.parts.autoAck) this.deliveredBy.set(event, from);
    this.send(event, from, payloads, 1);
  }

  /** Attempt `attempt` at sending an event's payloads. */
  private send(event: EddyEvent, from: ContraflowTarget, payloads: Buffer[], attempt: number): void {
    let result: ReturnType<Sink['send']>;
    try {
      result = this.sink.send(payloads, event);
    } catch (err) {
      return this.sendFailed(event, from, payloads, attempt, err as Error);
    }
    if (result === undefined) return this.succeeded(event, from);
    this.inFlight++;
    if (this.inFlight >= this.parts.maxInFlight && !this.loadTriggered) {
      this.loadTriggered = true;
      this.syncBreaker();
    }
    const send: InFlightSend = { event, from, payloads, attempt };
    // a sink gathering sends into one request returns one promise for all of them: waited on once, not once per event
    if (result === this.last?.result) return void this.last.group.push(send);
    const group = [send];
    this.last = { result, group };
    const tracked: Promise<void> = result.then(
      (meta) => {
        this.endGroup(tracked, group);
        for (const s of group) this.succeeded(s.event, s.from, meta ?? undefined);
        this.settled(group.length);
      },
      (err: unknown) => {
        this.endGroup(tracked, group);
        this.settled(group.length);
        for (const s of group) this.sendFailed(s.event, s.from, s.payloads, s.attempt, err as Error);
      },
    );
    this.pending.add(tracked);
  }

  /** A sink promise settled: later sends returning it (an already settled promise, reused) start a group of their own. */
  private endGroup(tracked: Promise<void>, group: InFlightSend[]): void {
    this.pending.delete(tracked);
    if (this.last?.group === group) this.last = undefined;
  }

  /** A send failed: tried again after the policy's delay (the breaker held meanwhile), or the event fails. */
  private sendFailed(event: EddyEvent, from: ContraflowTarget, payloads: Buffer[], attempt: number, err: Error): void {
    const retry = this.parts.retry;
    if (retry === undefined || this.closed || !retry.retries(err, attempt)) return this.failed(event, from, err, attempt);
    const delay = retry.delayMs(err, attempt);
    this.counters.retries = (this.counters.retries ?? 0) + 1;
    this.parts.ctx.logger.warn(`Offramp ${this.url}: send failed (attempt ${attempt} of ${retry.attempts}), retrying in ${delay} ms: ${err.message}`);
    const scheduler = this.parts.scheduler ?? asyncScheduler;
    const wait = {
      timer: scheduler.schedule(() => {
        // sent before the hold is let go: a send that fails again holds the breaker on, without a restore between
        this.send(event, from, payloads, attempt + 1);
        this.retrying.delete(wait);
        this.syncBreaker();
      }, delay),
      cancel: () => {
        wait.timer.unsubscribe();
        this.retrying.delete(wait);
        this.failed(event, from, new Error(`offramp closed while the send waited for attempt ${attempt + 1}: ${err.message}`), attempt);
      },
    };
    this.retrying.add(wait);
    this.syncBreaker();
  }

  /** `count` async sends finished: below half the limit again, the sources may read again. */
  private settled(count: number): void {
    this.inFlight -= count;
    if (this.loadTriggered && this.inFlight <= this.parts.maxInFlight / 2) {
      this.loadTriggered = false;
      this.syncBreaker();
    }
  }

  /** Waits for in-flight sends, then closes the sink; sends waiting to be retried fail (their sources redeliver, if they can). */
  async close(drainTimeoutMs = 5000): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const wait of [...this.retrying]) wait.cancel();
    this.syncBreaker();
    await this.sendsSettled(drainTimeoutMs);
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- undefined when the activation failed before the sink was created (start() rejected)
    await this.sink?.close?.();
    for (const subject of this.outputs.values()) subject.complete();
  }

  /**
   * Resolves once the sends in flight now have settled (their acks and
   * fails sent back), or after `timeoutMs`; the offramp stays open. Sends
   * waiting to be retried are not waited for.
   */
  async sendsSettled(timeoutMs = 5000): Promise<void> {
    await Promise.race([Promise.allSettled([...this.pending]), new Promise((r) => setTimeout(r, timeoutMs).unref())]);
  }

  /** Contraflow from a pipeline this offramp's ports feed: the answers of the dead-letter path (dead-letters.ts). */
  contraflow(insight: Insight): void {
    this.deadLetters.settle(insight);
  }

  private encode(event: EddyEvent): Buffer[] {
    const { postprocessors } = this.parts;
    const codec = this.codec(this.sink.codecFor?.(event));
    // the sink never reads payloads: nothing to encode; it counts `bytes` itself (ctx.countBytes)
    if (this.parts.ignoresPayloads) return NO_PAYLOADS;
    if (!event.isBatch) {
      // an event whose data nobody read leaves as the frame it came in as (lazy-event.ts)
      const payload = (event instanceof LazyEvent ? event.untouchedFrame(codec) : undefined) ?? codec.encode(event.data);
      // the common case, no postprocessors: one payload and no context
      return postprocessors.length === 0 ? [payload] : runProcessors(postprocessors, [payload], { ingestNs: event.ingestNs });
    }
    const ctx: FrameContext = { ingestNs: event.ingestNs };
    const out: Buffer[] = [];
    for (const entry of batchEntries(event.data)) {
      // a member whose value nobody read leaves as its frame too (generic::batch keeps it)
      const payload = unreadMemberFrame(entry, codec.name) ?? codec.encode(batchValue(entry));
      if (postprocessors.length === 0) out.push(payload);
      else for (const frame of runProcessors(postprocessors, [payload], ctx)) out.push(frame);
    }
    return out;
  }

  /** A linked response: the ramp's preprocessors, then the codec. */
  private decode(payload: Buffer, codecName?: string): unknown[] {
    const codec = this.codec(codecName);
    const ingestNs = nowNs();
    const frames = this.parts.preprocessors ? runProcessors(this.parts.preprocessors(), [payload], { ingestNs }, true) : [payload];
    return frames.map((frame) => codec.decode(frame, ingestNs)).filter((value) => value !== undefined);
  }

  /**
   * A reply event for a linked request, carrying the request's `correlation`
   * and tracking the request's ids besides its own, so that a linked onramp
   * the request came from (a rest onramp relaying to a rest offramp) finds
   * the request the reply answers. Replies are not transactional, so no ack
   * or fail follows the tracked ids.
   */
  private replyEvent(request: EddyEvent, data: unknown, meta: Meta = {}): EddyEvent {
    const correlation = request.isBatch
      ? (Array.isArray(request.data) ? request.data : []).map((m) => (m as { data?: { meta?: Meta } } | null | undefined)?.data?.meta?.correlation ?? null)
      : request.meta.correlation;
    const id: EventId = { uid: this.parts.ctx.uid, seq: ++this.seq };
    return {
      id,
      data,
      meta: correlation === undefined ? { ...meta } : { ...meta, correlation },
      ingestNs: request.ingestNs,
      originUri: request.originUri,
      isBatch: false,
      tracked: [id, ...trackedIds(request)],
      transactional: false,
    };
  }

  private succeeded(event: EddyEvent, from: ContraflowTarget, meta?: Meta): void {
    this.counters.out++;
    if (this.parts.autoAck && event.transactional)
      from.contraflow(meta === undefined ? { kind: 'ack', event, from: this.url } : { kind: 'ack', event, from: this.url, meta });
  }

  private failed(event: EddyEvent, from: ContraflowTarget, err: Error, attempt: number): void {
    this.counters.error++;
    // a client's message may carry its URL, credentials and all: masked before it reaches a log, a dead letter or a source (core/redact.ts)
    const message = maskUrlCredentials(err.message);
    this.parts.ctx.logger.warn(`Offramp ${this.url}: send failed: ${message}`);
    const status = (err as { status?: unknown }).status;
    this.fail(event, from, { type: 'send', message, attempt, ...(typeof status === 'number' ? { status } : {}) });
  }

  /** The event was not delivered: a dead letter on `err` if linked, and the source failed unless the dead letter settles it. */
  private fail(event: EddyEvent, from: ContraflowTarget, failure: DeliveryFailure): void {
    if (!this.parts.linked && this.deadLetters.offer(this.outputs.get('err'), event, from, failure)) return;
    if (event.transactional) from.contraflow({ kind: 'fail', event, from: this.url, meta: { error: failure.message } });
  }

  /** Tells the sources when the breaker's state changes: held while the sink is down, too many sends are in flight, or a send waits for a retry. */
  private syncBreaker(): void {
    const held = this.sinkTriggered || this.loadTriggered || this.retrying.size > 0;
    if (held === this.breakerHeld) return;
    this.breakerHeld = held;
    this.broadcast(held ? 'trigger' : 'restore');
  }

  private broadcast(kind: 'trigger' | 'restore'): void {
    this.breakerCounts[kind]++;
    for (const input of this.inputs) input.contraflow({ kind, from: this.url });
  }

  private offrampContext(): OfframpContext {
    const base = this.parts.ctx;
    return {
      ...base,
      trigger: () => {
        this.sinkTriggered = true;
        this.syncBreaker();
      },
      restore: () => {
        this.sinkTriggered = false;
        this.syncBreaker();
      },
      insight: (kind: 'ack' | 'fail', event: EddyEvent, meta?: Meta) => {
        const from = this.deliveredBy.get(event);
        if (!from) return;
        // a failure the sink reports by itself (a rejected row, a refused produce) is a dead letter like any other
        if (kind === 'fail' && !this.parts.linked) {
          const message = typeof meta?.error === 'string' ? meta.error : 'the sink failed it';
          const failure: DeliveryFailure = { type: 'send', message, attempt: 1, ...(typeof meta?.status === 'number' ? { status: meta.status } : {}) };
          if (this.deadLetters.offer(this.outputs.get('err'), event, from, failure)) return;
        }
        // as the sink said it (a cb offramp's fail of a non-transactional event included)
        from.contraflow({ kind, event, from: this.url, meta });
      },
      raise: (kind: Insight['kind'], event: EddyEvent) => {
        const from = this.deliveredBy.get(event);
        from?.contraflow({ kind, event, from: this.url });
      },
      countBytes: (bytes: number) => {
        this.counters.bytes += bytes;
      },
      emit: (port: string, event: EddyEvent) => this.output(port).next(event),
      reply: (port, request, data, meta) => this.output(port).next(this.replyEvent(request, data, meta)),
      linked: this.parts.linked ?? false,
      codecForMime: this.parts.codecForMime ?? (() => this.parts.codec.name),
      decode: (payload, codec) => this.decode(payload, codec),
      codec: this.parts.codec,
      scheduler: this.parts.scheduler ?? asyncScheduler,
      publishMeasurement: this.parts.publishMeasurement,
    };
  }
}
