import { finalize, type Observable, type Subscriber } from '../../core/rx';
import type { EventId } from '../../core/event';
import type { Frame, OnrampContext, OnrampSource, OnrampType } from '../connector';
import { readPayloadLines } from '../_shared/read-source';
import { s } from '../../schema/typed';
import { duration, durationMs } from '../../schema/duration';
import type { Static } from '../../schema/typed';

const configSchema = s.object(
  {
    source: s.string({ path: 'read', minLength: 1, description: 'file with one event payload per line (xz compressed when the name ends in .xz)' }),
    timeout: duration(
      'how long to wait for the missing acks and fails after everything was sent (or while paused by a circuit breaker) before exiting with status 1',
      {
        default: 10000,
        zero: 'does not wait',
      },
    ),
  },
  { description: 'For tests: sends the lines of a file as events and expects one ack or fail for each.', required: ['source'] },
);

type CbOnrampConfig = Static<typeof configSchema>;

/** Lines sent per macrotask at most; the breaker is checked before every line. */
const CHUNK = 256;

/**
 * cb (tests circuit-breaker and delivery behaviour): sends one event per
 * non-empty line of `source` (xz when named `.xz`), transactional, and
 * expects exactly one ack or fail back for each. It then ends the process:
 *
 * - as soon as every event sent got its ack or fail after the whole file was
 *   sent, it prints `All required CB events received.` to stderr and asks
 *   for exit status 0 (the original always waited out the full timeout);
 * - `timeout` ms after the whole file was sent, if some event still has no
 *   reply, it prints `Expected CB events up to id N.` and the missing ids and
 *   asks for exit status 1;
 * - while a circuit breaker keeps it paused before the end of the file, it
 *   sends nothing more, and `timeout` ms into the pause (a restore cancels
 *   it) it reports the same way, with the number of lines never sent, and
 *   asks for status 1. It exits while paused, unlike the original, which was
 *   never polled again once paused and so never exited.
 *
 * The check is before every line, so a `close` stops it at once (the
 * original read ahead, so lines after a close were often still sent). The
 * source is read when the instance is created, so a missing file fails the
 * activation.
 */
export const cbOnramp: OnrampType<Static<typeof configSchema>> = {
  name: 'cb',
  defaultCodec: 'json',
  example: { source: 'cb-events.json', timeout: 4000 },
  configSchema,
  stopsProcess: () => ({ field: 'type', what: 'the cb onramp stops the process when its run is over' }),
  async create(config, ctx) {
    // read now: a missing or unreadable source fails the activation (a 400 naming the onramp), not a later run
    const payloads = await readPayloadLines(config.source).catch((err: unknown) => {
      throw new Error(`cb onramp: cannot read ${config.source}: ${err instanceof Error ? err.message : String(err)}`);
    });
    return new CbSource(config, ctx, payloads);
  },
};

/**
 * The source of one cb onramp: the file's lines pulled out while the gate
 * is open, the ids sent and not yet answered, and the deadline that decides
 * the exit status (`arm`, `finish`).
 */
class CbSource implements OnrampSource {
  readonly frames: Observable<Frame>;
  readonly transactional = true;
  private readonly originUri: string;
  /** ids of the events emitted on out, ascending */
  private readonly sent: number[] = [];
  /** sent, no ack or fail yet */
  private readonly awaiting = new Set<number>();
  /** payload lines handed to the machinery */
  private lines = 0;
  private eof = false;
  /** the exit was asked for, or the stream unsubscribed: nothing more is decided */
  private finished = false;
  private deadline: NodeJS.Timeout | undefined;

  constructor(
    private readonly config: CbOnrampConfig,
    private readonly ctx: OnrampContext,
    private readonly payloads: Buffer[],
  ) {
    this.originUri = `svc-cb://${ctx.hostname}`;
    this.frames = ctx
      .pullLoop<Frame>(
        (subscriber) => this.step(subscriber),
        (subscriber) => this.ended(subscriber),
      )
      .pipe(
        // unsubscribed (shutdown, deactivation): decide nothing any more
        finalize(() => {
          this.finished = true;
          clearTimeout(this.deadline);
        }),
      );
  }

  // paused before the end: the timeout runs while the pause lasts
  pause(): void {
    if (!this.eof && !this.finished) this.arm();
  }

  resume(): void {
    if (!this.eof && !this.finished) clearTimeout(this.deadline);
  }

  onEvent(id: EventId): void {
    this.sent.push(id.seq);
    this.awaiting.add(id.seq);
  }

  onAck(id: EventId): void {
    this.answered(id);
  }

  onFail(id: EventId): void {
    this.answered(id);
  }

  private step(subscriber: Subscriber<Frame>): 'more' | 'done' {
    const total = this.payloads.length;
    for (let n = 0; n < CHUNK && this.lines < total && this.ctx.gate.isOpen; n++) {
      subscriber.next({ stream: 0, data: this.payloads[this.lines++], originUri: this.originUri });
    }
    // 'done' as soon as the last line is out, even if that very line closed the breaker
    return this.lines >= total ? 'done' : 'more';
  }

  /** The whole file is out: end the stream, and wait for the replies still missing. */
  private ended(subscriber: Subscriber<Frame>): void {
    subscriber.next({ stream: 0, end: true, originUri: this.originUri });
    this.eof = true;
    if (this.complete()) this.finish();
    else if (!this.finished) this.arm();
    // not completed: the stream stays open until the instance goes away
  }

  /** An ack or fail came back for one of its events. */
  private answered(id: EventId): void {
    this.awaiting.delete(id.seq);
    if (!this.finished && this.complete()) this.finish();
  }

  private complete(): boolean {
    return this.eof && this.awaiting.size === 0;
  }

  private arm(): void {
    clearTimeout(this.deadline);
    this.deadline = setTimeout(() => this.finish(), durationMs(this.config.timeout, 'timeout', { zero: 'does not wait' })); // not unref'd: it keeps the process alive until it decides
  }

  private finish(): void {
    if (this.finished) return;
    if (this.complete()) return this.report(0, 'All required CB events received.\n');
    const { sent, awaiting } = this;
    const total = this.payloads.length;
    const missing = sent.filter((seq) => awaiting.has(seq));
    let text = `Expected CB events up to id ${sent.length > 0 ? sent[sent.length - 1] : 0}.\n`;
    text += `Missing CB events for ids: [${missing.join(', ')}]\n`;
    text += `Received CB events for ids: [${sent.filter((seq) => !awaiting.has(seq)).join(', ')}]\n`;
    if (!this.eof) text += `Paused by a circuit breaker with ${total - this.lines} of ${total} payloads not sent.\n`;
    this.report(1, text);
  }

  private report(code: 0 | 1, text: string): void {
    this.finished = true;
    clearTimeout(this.deadline);
    process.stderr.write(text);
    this.ctx.requestExit(code, `cb onramp ${this.ctx.url}: ${code === 0 ? 'all CB events received' : 'CB events missing'}`);
  }
}
