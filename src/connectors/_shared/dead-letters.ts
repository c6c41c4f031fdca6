/**
 * Dead letters (docs/delivery.md "Dead letters"): an event an offramp could
 * not deliver leaves on its `err` port, when a binding links it, with the
 * reason in `meta.error = {type, message, status?, attempt}`, so a flow can
 * route failures to a file, a topic or a queue.
 *
 * What the source then gets is the artefact's `dead_letter.ack_source`:
 * - false (the default): it is failed at once, as without a dead-letter
 *   path (it redelivers, if it can); the dead letter is not transactional.
 * - true: the dead letter carries the event's tracked ids and is
 *   transactional; the source is acked once the dead-letter path delivered
 *   it (its ack comes back here), or failed when that failed too.
 *
 * A linked offramp (rest, ws, elastic, kv with `linked: true`) answers on
 * `err` by itself, so the machinery adds no dead letter there.
 */
import type { Subject } from '../../core/rx';
import { trackedIds, type EddyEvent, type EventId, type Insight } from '../../core/event';
import { ownData } from '../../core/lazy-event';
import type { ContraflowTarget } from '../../contraflow/contraflow';
import type { DeadLetterConfig } from '../../schema/artefacts';

export type { DeadLetterConfig };

/** Why a delivery failed: what `meta.error` of a dead letter holds. */
export interface DeliveryFailure {
  /** encode: the codec refused it; send: the sink failed it; closed: the offramp was closing */
  type: 'encode' | 'send' | 'closed';
  message: string;
  /** the HTTP status of the answer that failed it, where there was one */
  status?: number;
  /** sends made, the first one included */
  attempt: number;
}

export class DeadLetters {
  /** dead letters whose ack or fail settles their source, by the seq of their id */
  private readonly waiting = new Map<number, { event: EddyEvent; from: ContraflowTarget }>();

  constructor(
    private readonly url: string,
    private readonly uid: number,
    private readonly nextSeq: () => number,
    private readonly config: DeadLetterConfig,
  ) {}

  /**
   * Puts a failed event on `err` if something takes it; returns true when
   * the dead-letter path settles its source from now on (ack_source), false
   * when the caller fails the source as before.
   */
  offer(port: Subject<EddyEvent> | undefined, event: EddyEvent, from: ContraflowTarget, failure: DeliveryFailure): boolean {
    if (!port?.observed) return false;
    const settles = this.config.ack_source === true && event.transactional;
    const id: EventId = { uid: this.uid, seq: this.nextSeq() };
    const error = failure.status === undefined ? { type: failure.type, message: failure.message, attempt: failure.attempt } : failure;
    // a lazy event's data is a getter: made an own property so the copy keeps it
    const letter: EddyEvent = { ...ownData(event), id, meta: { ...event.meta, error }, tracked: [id, ...trackedIds(event)], transactional: settles };
    if (settles) this.waiting.set(id.seq, { event, from });
    port.next(letter);
    return settles;
  }

  /** Contraflow from the dead-letter path: a dead letter's ack or fail settles its source. */
  settle(insight: Insight): void {
    if ((insight.kind !== 'ack' && insight.kind !== 'fail') || insight.event === undefined) return;
    for (const id of trackedIds(insight.event)) {
      if (id.uid !== this.uid) continue;
      const entry = this.waiting.get(id.seq);
      if (!entry) continue;
      this.waiting.delete(id.seq);
      const error: unknown = insight.meta?.error ?? 'failed';
      const meta = insight.kind === 'fail' ? { error: `the dead-letter path failed it too: ${String(error)}` } : undefined;
      entry.from.contraflow({ kind: insight.kind, event: entry.event, from: this.url, meta });
    }
  }

  /** Dead letters still waiting for their path's answer (tests, diagnostics). */
  get pending(): number {
    return this.waiting.size;
  }
}
