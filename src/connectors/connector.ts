import type { Observable } from 'rxjs';
import type { EddyEvent, EventId, Insight, Meta } from '../core/event';
import type { Logger } from '../core/logger';
import type { CircuitBreaker } from '../contraflow/circuit-breaker';
import type { JsonSchema } from '../schema/json-schema';

/**
 * One unit read by an onramp type: bytes of one stream (a file, a TCP
 * connection), or an already structured value that bypasses preprocessors
 * and codec (metronome ticks).
 */
export interface Frame {
  /** stream key: each stream gets its own preprocessor chain */
  stream: string | number;
  /** raw bytes, preprocessed and decoded by the shared machinery */
  data?: Buffer;
  /** a structured value; used instead of `data` */
  value?: unknown;
  /** the stream has ended: flush its preprocessors and forget its state */
  end?: boolean;
  originUri: string;
  meta?: Meta;
  /** read time; the machinery reads the clock when absent */
  ingestNs?: bigint;
}

export interface RampContext {
  /** instance URL, e.g. `/onramp/in/main` */
  readonly url: string;
  /** the runtime-unique uid of this instance; event ids carry it */
  readonly uid: number;
  /** host name used in origin URIs */
  readonly hostname: string;
  readonly logger: Logger;
  /** ask the runtime to shut down and exit with this status (file close_on_done, exit offramp, blackhole) */
  requestExit(code: number, reason: string): void;
}

export interface OnrampContext extends RampContext {
  /** gate reads on this: while it is not open, read nothing new */
  readonly breaker: CircuitBreaker;
}

/**
 * What an onramp type builds for one instance. `frames` starts reading on
 * subscribe and stops, releasing every resource, on unsubscribe.
 */
export interface OnrampSource {
  readonly frames: Observable<Frame>;
  /** the source wants acks and fails (events are marked transactional) */
  readonly transactional?: boolean;
  onAck?(id: EventId, insight: Insight): void;
  onFail?(id: EventId, insight: Insight): void;
  /** called with the id of every event emitted on `out` (sources that track what they sent, such as cb) */
  onEvent?(id: EventId): void;
  /** a linked onramp receives replies on its `in` port */
  reply?(event: EddyEvent): void;
}

export interface OnrampType<C = Record<string, unknown>> {
  readonly name: string;
  readonly defaultCodec: string;
  /** JSON schema of `config`: unknown keys rejected, defaults filled */
  readonly configSchema: JsonSchema;
  create(config: C, ctx: OnrampContext): OnrampSource;
}

export interface OfframpContext extends RampContext {
  /** the sink is overwhelmed or disconnected: stop the sources */
  trigger(): void;
  /** the sink is healthy again */
  restore(): void;
  /** for sinks that are not auto-acking: report delivery of an event */
  insight(kind: 'ack' | 'fail', event: EddyEvent, meta?: Meta): void;
  /** for sinks that raise circuit-breaker events for an event (cb offramp) */
  raise(kind: Insight['kind'], event: EddyEvent): void;
  /** emit an event on an output port of a linked offramp (`out`, `err`) */
  emit(port: string, event: EddyEvent): void;
}

/**
 * The sink of one offramp instance. The shared machinery encodes and
 * postprocesses each event (each batch member separately) and hands over the
 * payloads; the sink only sends them and reports success (return or resolve)
 * or failure (throw or reject).
 */
export interface Sink {
  send(payloads: Buffer[], event: EddyEvent): Promise<void> | void;
  /** release every resource; pending writes are flushed first */
  close?(): Promise<void> | void;
}

export interface OfframpType<C = Record<string, unknown>> {
  readonly name: string;
  readonly defaultCodec: string;
  readonly configSchema: JsonSchema;
  /** acks every event it sent without error (the spec's "always" row) */
  readonly autoAck: boolean;
  create(config: C, ctx: OfframpContext): Sink | Promise<Sink>;
}
