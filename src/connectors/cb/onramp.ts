import { finalize } from '../../core/rx';
import type { EventId } from '../../core/event';
import type { Frame, OnrampType } from '../connector';
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
    const originUri = `svc-cb://${ctx.hostname}`;
    // read now: a missing or unreadable source fails the activation (a 400 naming the onramp), not a later run
    const payloads = await readPayloadLines(config.source).catch((err: Error) => {
      throw new Error(`cb onramp: cannot read ${config.source}: ${err.message}`);
    });
    const total = payloads.length; // payload lines in the file
    const sent: number[] = []; // ids of the events emitted on out, ascending
    const awaiting = new Set<number>(); // sent, no ack or fail yet
    let lines = 0; // payload lines handed to the machinery
    let eof = false;
    let finished = false;
    let deadline: NodeJS.Timeout | undefined;

    const report = (code: 0 | 1, text: string) => {
      finished = true;
      clearTimeout(deadline);
      process.stderr.write(text);
      ctx.requestExit(code, `cb onramp ${ctx.url}: ${code === 0 ? 'all CB events received' : 'CB events missing'}`);
    };
    const complete = () => eof && awaiting.size === 0;
    const finish = () => {
      if (finished) return;
      if (complete()) return report(0, 'All required CB events received.\n');
      const missing = sent.filter((seq) => awaiting.has(seq));
      let text = `Expected CB events up to id ${sent.length > 0 ? sent[sent.length - 1] : 0}.\n`;
      text += `Missing CB events for ids: [${missing.join(', ')}]\n`;
      text += `Received CB events for ids: [${sent.filter((seq) => !awaiting.has(seq)).join(', ')}]\n`;
      if (!eof) text += `Paused by a circuit breaker with ${total - lines} of ${total} payloads not sent.\n`;
      report(1, text);
    };
    const arm = () => {
      clearTimeout(deadline);
      deadline = setTimeout(finish, durationMs(config.timeout, 'timeout', { zero: 'does not wait' })); // not unref'd: it keeps the process alive until it decides
    };
    const reply = (id: EventId) => {
      awaiting.delete(id.seq);
      if (!finished && complete()) finish();
    };

    const frames = ctx
      .pullLoop<Frame>(
        (subscriber) => {
          for (let n = 0; n < CHUNK && lines < total && ctx.gate.isOpen; n++) {
            subscriber.next({ stream: 0, data: payloads[lines++], originUri });
          }
          // 'done' as soon as the last line is out, even if that very line closed the breaker
          return lines >= total ? 'done' : 'more';
        },
        (subscriber) => {
          subscriber.next({ stream: 0, end: true, originUri });
          eof = true;
          if (complete()) finish();
          else if (!finished) arm();
          // not completed: the stream stays open until the instance goes away
        },
      )
      .pipe(
        // unsubscribed (shutdown, deactivation): decide nothing any more
        finalize(() => {
          finished = true;
          clearTimeout(deadline);
        }),
      );

    return {
      frames,
      // paused before the end: the timeout runs while the pause lasts
      pause: () => {
        if (!eof && !finished) arm();
      },
      resume: () => {
        if (!eof && !finished) clearTimeout(deadline);
      },
      transactional: true,
      onEvent: (id) => {
        sent.push(id.seq);
        awaiting.add(id.seq);
      },
      onAck: reply,
      onFail: reply,
    };
  },
};
