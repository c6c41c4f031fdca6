import type { Observable } from '../../core/rx';
import { batchValues, type EddyEvent } from '../../core/event';
import { invalid, notFound } from '../../core/errors';
import type { TapHook } from '../../core/tap-hook';
import type { OfframpRuntime } from '../../ramps/offramp';
import { compileCel, LazyCelScope, type CelProgram } from '../../pipeline/cel/engine';
import type { PipelineRuntime } from '../../pipeline/pipeline';
import type { OnrampInstance } from '../instances';
import type { Repository } from '../repository';
import { instanceUrl } from '../urls';

/** The kinds of instance that have ports to tap. */
export const TAP_KINDS = ['onramp', 'pipeline', 'offramp'] as const;
export type TapKind = (typeof TAP_KINDS)[number];

export const TAP_QUEUE_DEFAULT = 1000;
export const TAP_QUEUE_MAX = 10_000;

/** What one tap client asked for (`?filter=CEL&sample=N&rate=R&max=M&queue=Q`). */
export interface TapOptions {
  /** only the events for which this CEL expression is true (on `event` and `meta`; a batch's `event` is its list of member values) */
  filter?: CelProgram;
  /** every Nth event passing the port (1: all) */
  sample: number;
  /** at most this many events a second to this client; the rest are counted as missed */
  rate?: number;
  /** the stream ends after this many events */
  max?: number;
  /** events held for the client while its socket cannot take them; beyond, they are counted as missed */
  queue: number;
}

/** Reads the tap's query parameters; a bad one is a 400 naming it and why. */
export function tapOptions(query: Record<string, unknown>): TapOptions {
  const known = ['filter', 'sample', 'rate', 'max', 'queue'];
  for (const name of Object.keys(query)) {
    if (!known.includes(name)) throw invalid(`query parameter '${name}' is unknown (known: ${known.join(', ')})`);
  }
  const number = (name: string, integer: boolean, max?: number): number | undefined => {
    const raw = query[name];
    if (raw === undefined) return undefined;
    if (typeof raw !== 'string') throw invalid(`query parameter '${name}' must be given once, as a number`);
    const value = Number(raw);
    if (raw.trim() === '' || !Number.isFinite(value) || value <= 0 || (integer && !Number.isInteger(value))) {
      throw invalid(`query parameter '${name}' must be a positive ${integer ? 'integer' : 'number'}, not '${raw}'`);
    }
    if (max !== undefined && value > max) throw invalid(`query parameter '${name}' must be at most ${max}, not ${raw}`);
    return value;
  };
  return {
    filter: celFilter(query.filter),
    sample: number('sample', true) ?? 1,
    rate: number('rate', false),
    max: number('max', true),
    queue: number('queue', true, TAP_QUEUE_MAX) ?? TAP_QUEUE_DEFAULT,
  };
}

/** The `filter` parameter compiled; a syntax error is a 400 naming it, with the position. */
function celFilter(raw: unknown): CelProgram | undefined {
  if (raw === undefined) return undefined;
  if (typeof raw !== 'string' || raw.trim() === '') throw invalid("query parameter 'filter' must be given once, as a CEL expression");
  try {
    return compileCel(raw);
  } catch (err) {
    throw invalid(`query parameter 'filter': ${(err as Error).message}`);
  }
}

/** Whether `event` passes the client's filter: true only when the expression gives true (an evaluation error does not pass). */
function passes(filter: CelProgram, event: EddyEvent): boolean {
  try {
    return filter.evaluateJson(new LazyCelScope(event.isBatch ? batchValues(event.data) : event.data, event.meta)) === true;
  } catch {
    return false;
  }
}

/** One message a client has still to get. */
type Pending = { kind: 'event'; text: string } | { kind: 'missed'; count: number; total: number };

/**
 * One tap client: what passes the port, sampled and rate-limited, as SSE
 * messages in a bounded queue. `offer` runs on the hot path of a tapped
 * port, synchronously: it never blocks and never throws; an event the
 * client has no room for is counted, and the count is reported to the
 * client in order, when it catches up. A client whose socket takes nothing
 * while its queue is full and another queue's worth of events is missed is
 * dropped (`stalled`): it stopped reading or vanished.
 */
export class TapClient {
  /** events that passed the port since the client started tapping */
  private seen = 0;
  /** of those, the events the filter let through (all of them without a filter): what `sample` counts */
  private matched = 0;
  private delivered = 0;
  private totalMissed = 0;
  /** events missed since the socket last drained */
  private missedWhileBlocked = 0;
  private queued = 0;
  private readonly pending: Pending[] = [];
  private tokens: number;
  private lastRefill: number;
  /** set once the stream is to end: why */
  ended: string | undefined;
  /** the client stopped reading: close its socket without a goodbye */
  stalled = false;
  /** the socket takes nothing now (the writer waits for `drain`) */
  blocked = false;

  constructor(
    readonly port: string,
    readonly options: TapOptions,
    /** told when there is something to write, or the stream ended */
    private readonly wake: () => void,
    private readonly clockMs: () => number = () => performance.now(),
  ) {
    this.tokens = options.rate ?? 0;
    this.lastRefill = clockMs();
  }

  offer(event: EddyEvent): void {
    if (this.ended !== undefined) return;
    const seq = ++this.seen;
    if (this.options.filter !== undefined && !passes(this.options.filter, event)) return;
    if (++this.matched % this.options.sample !== 0) return;
    if (this.options.rate !== undefined && !this.takeToken(this.options.rate)) return this.miss();
    if (this.queued >= this.options.queue) return this.miss();
    this.pending.push({ kind: 'event', text: eventMessage(event, this.port, seq) });
    this.queued++;
    if (this.options.max !== undefined && ++this.delivered >= this.options.max) this.ended = 'max reached';
    this.wake();
  }

  /** The stream ends after what is queued (the instance stopped). */
  end(reason: string): void {
    if (this.ended !== undefined) return;
    this.ended = reason;
    this.wake();
  }

  /** The socket took everything written so far. */
  drained(): void {
    this.blocked = false;
    this.missedWhileBlocked = 0;
  }

  /** The SSE text of everything pending, in order (missed notices where the misses happened); empties the queue. */
  take(): string {
    let text = '';
    for (const p of this.pending) {
      if (p.kind === 'event') text += p.text;
      else text += `event: missed\ndata: ${JSON.stringify({ missed: p.count, total_missed: p.total })}\n\n`;
    }
    this.pending.length = 0;
    this.queued = 0;
    return text;
  }

  /** Nothing is pending and the stream is over: the writer sends `end` and closes. */
  get finished(): boolean {
    return this.ended !== undefined && this.pending.length === 0;
  }

  private miss(): void {
    this.totalMissed++;
    const last = this.pending.at(-1);
    if (last?.kind === 'missed') {
      last.count++;
      last.total = this.totalMissed;
    } else this.pending.push({ kind: 'missed', count: 1, total: this.totalMissed });
    if (this.blocked && ++this.missedWhileBlocked > this.options.queue) {
      this.stalled = true;
      this.ended = 'client too slow: it read nothing while its queue was full';
      this.wake();
    }
  }

  /** A token bucket of `rate` events a second, holding at most one second's worth. */
  private takeToken(rate: number): boolean {
    const now = this.clockMs();
    this.tokens = Math.min(rate, this.tokens + ((now - this.lastRefill) / 1000) * rate);
    this.lastRefill = now;
    if (this.tokens < 1) return false;
    this.tokens--;
    return true;
  }
}

/**
 * The SSE message of one event: one JSON line, bigints as strings, binary
 * values (a kafka key, raw bytes) as base64 strings as the json codec writes
 * them, a batch as the array of its member values.
 */
export function eventMessage(event: EddyEvent, port: string, seq: number): string {
  const body = {
    data: event.isBatch ? batchValues(event.data) : event.data,
    meta: event.meta,
    ingest_ns: String(event.ingestNs),
    origin: event.originUri || null,
    port,
    seq,
    batch: event.isBatch,
    event_id: `${event.id.uid}:${event.id.seq}`,
  };
  let json: string;
  try {
    json = JSON.stringify(body, tapValue);
  } catch (err) {
    // a value JSON cannot hold (a cycle): the client still learns an event passed
    json = JSON.stringify({ ...body, data: null, meta: {}, error: `not serialisable: ${(err as Error).message}` });
  }
  return `event: event\ndata: ${json}\n\n`;
}

/**
 * JSON.stringify's replacer for the tap. A Buffer reaches a replacer already
 * turned into `{"type":"Buffer","data":[…]}` by its toJSON, so the value is
 * taken from its holder (`this`), where it is still the Buffer.
 */
function tapValue(this: Record<string, unknown>, key: string, value: unknown): unknown {
  if (typeof value === 'bigint') return String(value);
  const original = this[key];
  if (original instanceof Uint8Array) return Buffer.from(original.buffer, original.byteOffset, original.byteLength).toString('base64');
  return value;
}

/** How to listen to one port: starts listening, returns how to stop. */
type PortSource = (listener: (event: EddyEvent) => void) => () => void;

function hookSource(hook: TapHook): PortSource {
  return (listener) => {
    hook.listener = listener;
    return () => {
      if (hook.listener === listener) hook.listener = undefined;
    };
  };
}

function subjectSource(subject: Observable<EddyEvent>): PortSource {
  return (listener) => {
    // a tap must never end or fail a port's stream: only `next` is observed
    const sub = subject.subscribe({ next: listener, error: () => undefined });
    return () => sub.unsubscribe();
  };
}

interface TappedPort {
  readonly clients: Set<TapClient>;
  readonly stop: () => void;
}

/** Where the hub looks instances up (the Runtime is one): declared here so tap.ts and runtime.ts do not import each other. */
export interface TapTargets {
  readonly repository: Pick<Repository, 'get'>;
  onramp(url: string): OnrampInstance | undefined;
  offramp(url: string): OfframpRuntime | undefined;
  pipeline(url: string): PipelineRuntime | undefined;
}

/**
 * The runtime's live taps: which ports are tapped and by whom. A port is
 * listened to once, however many clients tap it, and only while one does;
 * an untapped port costs the flow nothing beyond its hook's undefined check.
 */
export class TapHub {
  private readonly ports = new Map<string, TappedPort>();

  constructor(private readonly runtime: TapTargets) {}

  /**
   * Starts tapping `/kind/artefact/instance` at `port`. Throws a 404 naming
   * what is missing: the artefact, the instance, or the port (with the
   * ports it has).
   */
  open(kind: TapKind, artefact: string, instance: string, port: string, client: TapClient): void {
    const url = instanceUrl(kind, artefact, instance);
    const source = this.portSource(kind, artefact, instance, port);
    const key = `${url}|${port}`;
    let tapped = this.ports.get(key);
    if (!tapped) {
      const clients = new Set<TapClient>();
      const stop = source((event) => {
        for (const c of clients) {
          try {
            c.offer(event);
          } catch (err) {
            // a fault of the tap must never reach the flow it watches
            c.end(`tap failed: ${(err as Error).message}`);
          }
        }
      });
      this.ports.set(key, (tapped = { clients, stop }));
    }
    tapped.clients.add(client);
  }

  /** Throws the 404 `open` would, without tapping anything. */
  check(kind: TapKind, artefact: string, instance: string, port: string): void {
    this.portSource(kind, artefact, instance, port);
  }

  /** The client went away (or its stream ended): the port is no longer listened to once no client is left. */
  close(kind: TapKind, artefact: string, instance: string, client: TapClient): void {
    const key = `${instanceUrl(kind, artefact, instance)}|${client.port}`;
    const tapped = this.ports.get(key);
    if (!tapped?.clients.delete(client) || tapped.clients.size > 0) return;
    tapped.stop();
    this.ports.delete(key);
  }

  /** The instance stopped: every stream tapping it ends. */
  instanceStopped(url: string, reason = 'instance stopped'): void {
    for (const [key, tapped] of this.ports) {
      if (!key.startsWith(`${url}|`)) continue;
      tapped.stop();
      this.ports.delete(key);
      for (const c of tapped.clients) c.end(reason);
    }
  }

  /** How many clients tap the port now. */
  clientCount(url: string, port: string): number {
    return this.ports.get(`${url}|${port}`)?.clients.size ?? 0;
  }

  private portSource(kind: TapKind, artefact: string, instance: string, port: string): PortSource {
    this.runtime.repository.get(kind, artefact); // 404: no such artefact
    const url = instanceUrl(kind, artefact, instance);
    const noPort = (ports: string) => notFound(`${kind} instance ${url} has no port '${port}' to tap (ports: ${ports})`);
    if (kind === 'onramp') {
      const onramp = this.runtime.onramp(url)?.runtime;
      if (!onramp) throw notFound(`instance ${url} not found`);
      if (port === 'out' || port === 'err') return hookSource(onramp.taps[port]);
      throw noPort('out, err');
    }
    if (kind === 'offramp') {
      const offramp = this.runtime.offramp(url);
      if (!offramp) throw notFound(`instance ${url} not found`);
      if (port === 'in') return hookSource(offramp.inTap);
      const output = offramp.outputs.get(port);
      if (output) return subjectSource(output);
      throw noPort(['in', ...offramp.outputs.keys()].join(', '));
    }
    const pipeline = this.runtime.pipeline(url);
    if (!pipeline) throw notFound(`instance ${url} not found`);
    // a name that is both an input and an output taps the input
    const subject = pipeline.inputs.get(port) ?? pipeline.outputs.get(port);
    if (subject) return subjectSource(subject);
    throw noPort(`inputs ${[...pipeline.inputs.keys()].join(', ')}; outputs ${[...pipeline.outputs.keys()].join(', ')}`);
  }
}
