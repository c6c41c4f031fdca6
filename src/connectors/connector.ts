import type { Histogram } from 'hdr-histogram-js';
import type { Server as NetServer } from 'node:net';
import type { PartitionedState } from '../core/state';
import type { AnyConfig } from '../core/registry';
import type { CheckpointedSink } from '../core/checkpoint';
import type { Observable, SchedulerLike, Subscriber } from '../core/rx';
import type { Codec } from '../codecs/codec';
import type { EddyEvent, EventId, Insight, Meta } from '../core/event';
import type { Logger } from '../core/logger';
import type { Schema } from '../schema/typed';
import type { PullStep } from './_shared/pull-loop';

export type { PullStep };

/**
 * Where instances of a type run under `eddy server run --workers N`
 * (docs/workers.md): `every-worker` for a source that shards by nature (a
 * listening socket the workers share, a consumer group) or a sink that can
 * be written by several processes at once; `one-worker` (worker 0) for
 * everything else. A type that says nothing runs on one worker. A function
 * decides from the instance's config (a nats onramp shards only in a queue group).
 */
export type Placement = 'every-worker' | 'one-worker';

/**
 * One unit read by an onramp type: bytes of one stream (a file, a TCP
 * connection), or an already structured value that bypasses preprocessors
 * and codec (metronome ticks).
 */
export interface Frame {
  /** stream key: each stream gets its own preprocessor chain */
  stream: string | number;
  /** the source partition of a partitioned onramp (kafka: `topic/partition`): the events' `partition` (core/event.ts) */
  partition?: string;
  /** raw bytes, preprocessed and decoded by the shared machinery */
  data?: Buffer;
  /** a structured value; used instead of `data` */
  value?: unknown;
  /**
   * With `value`: the bytes of input it was made from, counted in
   * `ramp_bytes` as `data` is (a type that decodes its own protocol, the otel
   * onramp: the request's size, on the first of the values it made).
   */
  bytes?: number;
  /** the stream has ended: flush its preprocessors and forget its state */
  end?: boolean;
  originUri: string;
  meta?: Meta;
  /** read time; the machinery reads the clock when absent */
  ingestNs?: bigint;
  /** decode with this codec instead of the ramp's (a rest body, chosen by its Content-Type through `ctx.codecForMime`) */
  codec?: string;
  /**
   * The type could not make an event of this input (a request it decodes
   * itself was malformed, or was refused by its config): the machinery
   * counts the frame in `in` and as an error, and emits it on `err` with
   * this message and `data` (when set) as the raw bytes, as it does a
   * codec's decode error. No event is made; `value` is ignored.
   */
  error?: string;
  /**
   * Called once the machinery has preprocessed and decoded this frame, with
   * the ids of the events it made and the errors it met (a linked rest
   * onramp answers 400 when a body made no event). It runs before those
   * events are emitted, so a linked onramp waits for their replies before
   * a (synchronous) pipeline can send one.
   */
  done?(result: FrameResult): void;
}

/** What became of a frame (linked onramps use it to correlate replies): the ids of its events, or its decode errors. */
export interface FrameResult {
  readonly ids: EventId[];
  readonly errors: string[];
}

/** What every onramp and offramp is created with. */
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

/** A listening socket bound for an onramp's connections (`OnrampContext.listenForConnections`). */
export interface BoundListener {
  /** the port it listens on (the one picked for port 0) */
  readonly port: number;
  /** stops accepting connections; those open are the onramp's to end */
  close(): Promise<void>;
}

/**
 * Binds a listening server whose connections are long-lived streams (tcp)
 * and resolves once it accepts; a port in use rejects naming the address.
 */
export type ListenForConnections = (server: NetServer, host: string, port: number) => Promise<BoundListener>;

/**
 * Where the onramps of a runtime bind their connection listeners, when not
 * in this process: a worker of `eddy server run --workers N` has the
 * primary listen for it and hand it each connection (src/workers/listeners.ts).
 * `instance` is the onramp's instance url, the same in every worker.
 */
export interface SharedListeners {
  listen(instance: string, server: NetServer, host: string, port: number): Promise<BoundListener>;
}

/** A read-only view of an onramp's circuit breaker. */
export interface Gate {
  /** true while the onramp may read */
  readonly isOpen: boolean;
}

/** What an onramp type's `create` gets: the read-only circuit-breaker gate, a breaker-aware pull loop, linked-mode facts. */
export interface OnrampContext extends RampContext {
  /**
   * The circuit breaker, read-only: a pull step may check it between events.
   * Types never subscribe to it: the machinery pauses and resumes the source.
   */
  readonly gate: Gate;
  /**
   * A pull source the machinery drives: bounded steps, one per macrotask,
   * none while the gate is closed (see `pullLoop`).
   */
  pullLoop<T>(step: PullStep<T>, onDone?: (subscriber: Subscriber<T>) => void): Observable<T>;
  /** `linked: true` on the artefact: the onramp answers requests with the replies on its `in` port */
  readonly linked: boolean;
  /** the codec name for a Content-Type: the builtin mime map with the ramp's `codec_map` over it, else the ramp's codec */
  codecForMime(contentType: string | undefined): string;
  /** timers of time-dependent sources go through this (virtual time in marble tests) */
  readonly scheduler: SchedulerLike;
  /**
   * Binds the listening server of a source whose connections live long
   * (tcp): `server.listen` in one process; under `--workers N` the primary
   * listens and hands each connection to the worker with the fewest open
   * (docs/workers.md). The server then gets its connections as `connection`
   * events either way; `close` the listener, not the server.
   */
  readonly listenForConnections: ListenForConnections;
}

/** What a transactional source's events reach (`OnrampSource.attachDownstream`), found by the runtime at activation. */
export interface Downstream {
  /** every stateful node of the pipelines its events reach: its state is saved with the source's offsets */
  readonly stateful: readonly { readonly pipeline: string; readonly node: string; readonly state: PartitionedState }[];
  /** every offramp its events reach: each must take part in its transactions (`Sink.transactional`) */
  readonly sinks: readonly { readonly url: string; readonly type: string; readonly sink: Sink }[];
}

/** What a sink offers a transactional source (the kafka offramp): where it writes, and a way into the transaction. */
export interface TransactionalSink {
  /** the cluster it writes to (kafka: the cluster id): a source's transaction spans one cluster */
  cluster(): Promise<string>;
  /**
   * From now on, what it would send goes to `write` instead, for the source
   * to send in its next transaction; a send returns (acks) once written there.
   */
  join(write: (record: unknown) => void): void;
}

/** A reply that reached a linked onramp's `in` port. */
export interface OnrampReply {
  readonly event: EddyEvent;
  /** the ids of this onramp's own events the reply answers (a batch answers several) */
  readonly ids: EventId[];
  /** encodes the reply's data with a codec (default: the ramp's) and the ramp's postprocessors; one buffer per batch member */
  encode(codec?: string): Buffer[];
}

/**
 * What an onramp type builds for one instance. `frames` starts reading on
 * subscribe and stops reading on unsubscribe; `close` releases what `create`
 * opened (a listening socket).
 *
 * The circuit breaker is enforced by the machinery, not by the type: a push
 * source declares `pause`/`resume` (socket.pause, stop accepting) and the
 * machinery calls them; a pull source is built with `ctx.pullLoop`. Frames
 * that still arrive while the gate is closed are held by the machinery and
 * released in order when it opens: never dropped, never passed early.
 */
export interface OnrampSource {
  readonly frames: Observable<Frame>;
  /** stop reading: the circuit breaker was triggered */
  pause?(): void;
  /** read again: the circuit breaker was restored */
  resume?(): void;
  /** release every resource `create` opened; called once when the instance goes away */
  close?(): Promise<void> | void;
  /** the source wants acks and fails (events are marked transactional) */
  readonly transactional?: boolean;
  /**
   * Read again after a restart, the source gives the same events in the same
   * order (the file onramp): its events carry `replay`, so a checkpointing
   * qos::wal can drop what it stored before (core/checkpoint.ts).
   */
  readonly replayable?: boolean;
  /**
   * Source partitions (`Frame.partition`) this instance no longer reads,
   * another member of a consumer group does (kafka: a rebalance took them):
   * the stateful operators downstream drop their state of those partitions
   * without emitting it (core/state.ts), since the new owner reads their
   * uncommitted events again and counts them there.
   */
  readonly partitionsReleased?: Observable<string[]>;
  /**
   * `false` while the source reads nothing for reasons of its own (kafka
   * exactly-once: a restore, a commit), `true` when it reads again. The
   * runtime adds its breaker's holds (OnrampRuntime.reading$) and tells the
   * stateful nodes downstream (PartitionedState.sourceReading), which do
   * not count that time as silence of the source's partitions.
   */
  readonly readingChanges?: Observable<boolean>;
  /**
   * A source that commits, in one transaction, what its events became
   * downstream (kafka `guarantee: exactly_once`): called at activation,
   * before any event flows, with the stateful nodes and the sinks its
   * events reach; throws (refusing the activation) naming a part that
   * cannot take part and why.
   */
  attachDownstream?(downstream: Downstream): Promise<void>;
  onAck?(id: EventId, insight: Insight): void;
  onFail?(id: EventId, insight: Insight): void;
  /** called with the id of every event emitted on `out` (sources that track what they sent, such as cb) */
  onEvent?(id: EventId): void;
  /** a linked onramp receives the replies on its `in` port; throwing rejects the reply (counted as an error and logged) */
  reply?(reply: OnrampReply): void;
  /**
   * What the source reads from now, from the sockets' own state: lets a test
   * wait for a connection to be accepted and see that a paused source reads
   * none, instead of waiting some time for data that should not come.
   */
  inputs?(): SourceInputs;
  /**
   * Connections the source closed itself, counted by reason (the linked ws
   * onramp's `unread_replies`): cumulative, exported by GET /metrics and
   * GET /status. A source that closes none leaves it out.
   */
  closedConnections?(): Readonly<Record<string, number>>;
  /**
   * Input the kernel dropped before the source could read it (a datagram
   * socket's full receive buffer), cumulative since the socket was opened;
   * undefined when the system does not tell. Reported as a metric.
   */
  kernelDrops?(): number | undefined;
}

/** A source's inputs (connections, requests being read, its socket), as `OnrampSource.inputs` reports them. */
export interface SourceInputs {
  /** accepted and not yet closed */
  open: number;
  /** of those, how many deliver data now (not paused) */
  reading: number;
  /** frames read while paused and held by the source itself (a datagram socket, which cannot be paused) */
  held?: number;
  /** frames dropped while paused because the hold was full */
  dropped?: number;
}

/**
 * Why an instance can stop the whole process: the field that makes it so
 * (`type` when every instance does) and what it does, as a refusal says it.
 * The publish policy refuses such an artefact beyond loopback unless
 * `--allow-exit` is given (runtime/policy.ts, docs/security.md).
 */
export interface ProcessStop {
  readonly field: string;
  readonly what: string;
}

/**
 * A ramp type's `stopsProcess`: asked at publish with the config as written
 * (the policy asks before the schema has checked it or filled its defaults),
 * undefined when an instance with this config cannot stop the process.
 */
export type StopsProcess = (config: Readonly<Record<string, unknown>>) => ProcessStop | undefined;

/** An onramp type, registered by name (`type: tcp`); `create` opens the source of one instance. */
/** An onramp type of any config, as registries and catalogs hold them (core/registry.ts AnyConfig). */
export type AnyOnrampType = OnrampType<AnyConfig>;
/** An offramp type of any config (core/registry.ts AnyConfig). */
export type AnyOfframpType = OfframpType<AnyConfig>;

export interface OnrampType<C = Record<string, unknown>> {
  readonly name: string;
  readonly defaultCodec: string;
  /**
   * JSON schema of `config`: unknown keys rejected, defaults filled, a
   * description on every field. Built with schema/typed.ts, it is checked
   * against `C`: what passes it is what `create` takes.
   */
  readonly configSchema: Schema<C, unknown>;
  /** a config that works: the README's example and the compliance suite's */
  readonly example?: Record<string, unknown>;
  /** the type can be a linked transport (request/response) */
  readonly linkable?: boolean;
  /**
   * The preprocessor that cuts this type's byte stream into frames (the file
   * onramp: `lines`), put first unless the artefact's own list starts with a
   * preprocessor that splits (`lines`, `lines-null`, `length-prefixed`, …).
   */
  readonly framing?: string;
  /** where instances run with `--workers N` (see `Placement`); one worker when absent */
  readonly placement?: Placement | ((config: C) => Placement);
  /** checks what the schema cannot (a cron expression) at publish time; throws naming the field */
  validate?(config: C): void;
  /** an instance with this config can stop the process (see `StopsProcess`) */
  readonly stopsProcess?: StopsProcess;
  /**
   * Builds the source. Resources whose failure should fail the activation
   * (binding a port, opening a file) are opened here: a rejection answers
   * the activation with a 4xx naming the artefact and the cause.
   */
  create(config: C, ctx: OnrampContext): OnrampSource | Promise<OnrampSource>;
  /**
   * The config makes the source commit what its events became downstream in
   * one transaction (kafka `guarantee: exactly_once`): every offramp its
   * events reach must be of a type that `joinsTransactions`, checked before
   * anything opens (runtime/downstream.ts).
   */
  commitsDownstream?(config: C): boolean;
}

/** What an offramp type's `create` gets: the breaker (trigger/restore), insights, linked replies. */
export interface OfframpContext extends RampContext {
  /** the sink is overwhelmed or disconnected: stop the sources (a plain function, a property rather than a method: sinks hand it to their writers as a callback) */
  trigger: () => void;
  /** the sink is healthy again (as `trigger`, a plain function) */
  restore: () => void;
  /** for sinks that are not auto-acking: report delivery of an event */
  insight(kind: 'ack' | 'fail', event: EddyEvent, meta?: Meta): void;
  /** for sinks that raise circuit-breaker events for an event (cb offramp) */
  raise(kind: Insight['kind'], event: EddyEvent): void;
  /** a sink of a type with `ignoresPayloads` counts here the bytes it sends (the `bytes` metric) */
  countBytes: (bytes: number) => void;
  /** emit an event on an output port of a linked offramp (`out`, `err`) */
  emit(port: string, event: EddyEvent): void;
  /**
   * Emits a linked reply on `out` or `err` for `request`: a fresh event id,
   * the request's ingest time and origin, and `correlation` copied from the
   * request's meta (an array of the members' values for a batch).
   */
  reply(port: 'out' | 'err', request: EddyEvent, data: unknown, meta?: Meta): void;
  /** `linked: true` on the artefact */
  readonly linked: boolean;
  /** the codec name for a Content-Type: the builtin mime map with the ramp's `codec_map` over it, else the ramp's codec */
  codecForMime(contentType: string | undefined): string;
  /** decodes a linked response: the ramp's preprocessors, then the codec (default: the ramp's); throws on bad input */
  decode(payload: Buffer, codec?: string): unknown[];
  /** the ramp's codec alone (no pre- or postprocessors), for sinks that store values rather than send them (kv) */
  readonly codec: Codec;
  /** timers (reconnect back-off) go through this */
  readonly scheduler: SchedulerLike;
  /**
   * Where a measuring sink (blackhole) hands its finished measurement: the
   * runtime's `onMeasurement` (a worker under `--workers N` passes it to the
   * primary, which prints one combined report). Absent when nobody collects
   * measurements (one process).
   */
  readonly publishMeasurement?: (report: object, histogram: Histogram) => void;
}

/**
 * The sink of one offramp instance. The shared machinery encodes and
 * postprocesses each event (each batch member separately) and hands over the
 * payloads (none for a type with `ignoresPayloads`); the sink only sends
 * them and reports success (return or resolve) or failure (throw or reject). `event.data` may be decoded only when first
 * read (core/lazy-event.ts): read it, don't spread the event.
 */
export interface Sink {
  /**
   * An auto-acking sink may resolve with the ack's meta (kafka: `time`).
   * Sends gathered into one request may share one promise: the machinery
   * then waits on it once for all of them (src/ramps/offramp.ts).
   */
  // eslint-disable-next-line @typescript-eslint/no-invalid-void-type -- a return type: sinks that return nothing, or a Promise<void>, implement it as they are
  send(payloads: Buffer[], event: EddyEvent): Promise<Meta | void> | void;
  /** the codec to encode this event with, when not the ramp's (rest: by Content-Type) */
  codecFor?(event: EddyEvent): string | undefined;
  /**
   * The second phase of opening: called once every part of the activation
   * has been created, before any event arrives. What a failed activation
   * must not leave behind (the file offramp truncating its file) happens
   * here, not in `create`; a rejection still fails the activation.
   */
  commit?(): Promise<void> | void;
  /** the sink can write inside a transactional source's transactions (kafka `guarantee: exactly_once`) */
  readonly transactional?: TransactionalSink;
  /** the sink takes part in a `qos::wal` checkpoint (`guarantee: exactly_once` without Kafka; the file offramp) */
  readonly checkpointed?: CheckpointedSink;
  /**
   * Release every resource; pending writes are flushed first. Also called
   * without `commit` when the activation failed: then it undoes what
   * `create` did.
   */
  close?(): Promise<void> | void;
}

/** An offramp type, registered by name (`type: file`); `create` opens the sink of one instance. */
export interface OfframpType<C = Record<string, unknown>> {
  readonly name: string;
  readonly defaultCodec: string;
  /** as `OnrampType.configSchema` */
  readonly configSchema: Schema<C, unknown>;
  /** a config that works: the README's example and the compliance suite's */
  readonly example?: Record<string, unknown>;
  /**
   * Acks every event it sent without error (the spec's "always" row): when
   * `send` returns, or when its promise resolves. A sink whose data is only
   * where it promised later (a file: once written) returns a promise that
   * resolves then; docs/delivery.md lists what each type promises.
   */
  readonly autoAck: boolean;
  /** its sink can write inside a transactional source's transactions (`Sink.transactional`; kafka) */
  readonly joinsTransactions?: boolean;
  /** its sink takes part in a checkpointing `qos::wal`'s checkpoints (`Sink.checkpointed`; file) */
  readonly joinsCheckpoints?: boolean;
  /** the type can be a linked transport; `'required'` when it only works linked (kv) */
  readonly linkable?: boolean | 'required';
  /**
   * The spec says the type uses no postprocessors (elastic: its payloads are
   * the documents of a bulk body): the machinery runs none for it, whatever
   * the artefact lists, so they can neither waste work nor corrupt a payload.
   */
  readonly ignoresPostprocessors?: boolean;
  /**
   * The sink builds what it sends from the event's values, never from the
   * payloads (postgres: rows of bound parameters), so encoding them would be
   * wasted work: the machinery encodes nothing, runs no postprocessors and
   * hands the sink no payloads. The sink counts the `bytes` metric itself, as
   * what it sends (postgres: the bound parameters), through `ctx.countBytes`.
   */
  readonly ignoresPayloads?: boolean;
  /** where instances run with `--workers N` (see `Placement`); one worker when absent */
  readonly placement?: Placement | ((config: C) => Placement);
  /** checks what the schema cannot at publish time; throws naming the field */
  validate?(config: C): void;
  /** an instance with this config can stop the process (see `StopsProcess`) */
  readonly stopsProcess?: StopsProcess;
  /** sends in flight beyond which the machinery triggers the circuit breaker (default: config `concurrency`, else 256) */
  maxInFlight?(config: C): number;
  create(config: C, ctx: OfframpContext): Sink | Promise<Sink>;
}
