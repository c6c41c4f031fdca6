import { Observable, Subject, Subscription, share } from 'rxjs';
import type { EddyEvent, EventId, Insight } from '../../core/event';
import { trackedIds } from '../../core/event';
import { nowNs } from '../../core/clock';
import type { Codec } from '../../codecs/codec';
import { runProcessors, type FrameContext, type Preprocessor, type ProcessorError } from '../../processors/processor';
import type { Frame, OnrampContext, OnrampSource } from '../connector';
import { CircuitBreaker } from '../../contraflow/circuit-breaker';
import { RampCounters } from './ramp-metrics';
import { FastSubject } from './fast-subject';

export interface OnrampParts {
  readonly ctx: OnrampContext;
  readonly source: OnrampSource;
  readonly codec: Codec;
  /** builds a fresh preprocessor chain for a new stream */
  readonly preprocessors: () => Preprocessor[];
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
  private seq = 0;
  private readonly chains = new Map<string | number, Preprocessor[]>();
  /** the last stream's chain: most frames come from the stream before them, so no Map lookup */
  private lastStream: string | number | undefined;
  private lastChain: Preprocessor[] | undefined;
  private readonly transactional: boolean;
  private lastUnroutedLog = 0;
  private loggedErrors = 0;

  constructor(private readonly parts: OnrampParts) {
    this.breaker = parts.ctx.breaker;
    this.transactional = parts.source.transactional === true;
    this.out$ = new Observable<EddyEvent>((subscriber) => {
      const emit = (event: EddyEvent) => subscriber.next(event);
      const sub: Subscription = parts.source.frames.subscribe({
        next: (frame) => this.handleFrame(frame, emit),
        error: (err) => {
          parts.ctx.logger.error(`Onramp ${parts.ctx.url} failed: ${(err as Error).message}`);
          subscriber.error(err);
        },
        complete: () => subscriber.complete(),
      });
      return () => {
        sub.unsubscribe();
        this.forgetChains();
      };
    }).pipe(share({ connector: () => new FastSubject<EddyEvent>() }));
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
        const handler = insight.kind === 'ack' ? this.parts.source.onAck : this.parts.source.onFail;
        if (!handler || !insight.event) return;
        for (const id of ownIds(insight.event, this.uid)) handler.call(this.parts.source, id, insight);
      }
    }
  }

  reply(event: EddyEvent): void {
    this.parts.source.reply?.(event);
  }

  private handleFrame(frame: Frame, emit: (event: EddyEvent) => void): void {
    const ingestNs = frame.ingestNs ?? nowNs();
    if (frame.value !== undefined) {
      emit(this.makeEvent(frame.value, frame, ingestNs));
      return;
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
      for (let i = 0; i < payloads.length; i++) this.decode(payloads[i], frame, fctx.ingestNs, emit);
    }
    if (frame.end) {
      this.chains.delete(frame.stream);
      if (this.lastStream === frame.stream) this.lastChain = this.lastStream = undefined;
      let rest: Buffer[] = [];
      try {
        rest = runProcessors(chain, [], fctx, true);
      } catch (err) {
        this.error(err as Error, frame, fctx.ingestNs, undefined);
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
    let value: unknown;
    try {
      value = this.parts.codec.decode(payload, ingestNs);
    } catch (err) {
      this.error(err as Error, frame, ingestNs, payload);
      return;
    }
    if (value === undefined) return; // the codec found no value in this frame (e.g. a comment line)
    emit(this.makeEvent(value, frame, ingestNs));
  }

  private makeEvent(data: unknown, frame: Frame, ingestNs: bigint): EddyEvent {
    this.counters.out++;
    const id: EventId = { uid: this.uid, seq: ++this.seq };
    this.parts.source.onEvent?.(id);
    return {
      id,
      data,
      meta: frame.meta ? { ...frame.meta } : {},
      ingestNs,
      originUri: frame.originUri,
      isBatch: false,
      transactional: this.transactional,
    };
  }

  /** An undecodable or unprocessable frame: an event on `err`, never silently dropped. */
  private error(err: Error, frame: Frame, ingestNs: bigint, raw: Buffer | undefined): void {
    this.counters.error++;
    const id: EventId = { uid: this.uid, seq: ++this.seq };
    const message = err.message;
    if (!this.err$.observed) {
      // counted in the ramp's `error` metric; logged at most once a second so a bad stream cannot flood the log
      const now = Date.now();
      if (now - this.lastUnroutedLog >= 1000) {
        const more = this.counters.error - this.loggedErrors - 1;
        this.parts.ctx.logger.warn(
          `Onramp ${this.parts.ctx.url}: ${message} (err port not connected; counted${more > 0 ? `, ${more} more since the last report` : ''})`,
        );
        this.lastUnroutedLog = now;
        this.loggedErrors = this.counters.error;
      }
      return;
    }
    this.err$.next({
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
    });
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

