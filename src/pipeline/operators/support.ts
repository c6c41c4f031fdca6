/**
 * Small helpers shared by the builtin operators: id minting, err-port events,
 * recognising one's own insights, and the node-URL used as insight `from`.
 */
import type { EddyEvent, EventId, Insight } from '../../core/event';
import { trackedIds } from '../../core/event';
import type { OperatorContext } from '../operator';

/** Mints fresh ids under the operator's uid (batch, wal); seq starts at 1. */
export function idMinter(uid: number, start = 0): () => EventId {
  let seq = start;
  return () => ({ uid, seq: ++seq });
}

/** The event with meta `error` set, for the `err` port. Never mutates the input. */
export function withError(event: EddyEvent, error: string): EddyEvent {
  return { ...event, meta: { ...event.meta, error } };
}

/** The event marked as handled by this operator (and transactional when asked). */
export function markOwn(event: EddyEvent, uid: number, value: unknown, transactional = event.transactional): EddyEvent {
  return { ...event, transactional, opMeta: { ...event.opMeta, [uid]: value } };
}

/** The value this operator put into the event an insight is about, if any. */
export function ownMeta(insight: Insight, uid: number): unknown {
  return insight.event?.opMeta?.[uid];
}

/** Sequence numbers of the ids minted by `uid` that an insight's event tracks. */
export function ownSeqs(insight: Insight, uid: number): number[] {
  if (insight.event === undefined) return [];
  return trackedIds(insight.event)
    .filter((id) => id.uid === uid)
    .map((id) => id.seq);
}

/** The name an operator signs its own insights with: `<pipeline url>/<node id>`. */
export function nodeUrl(ctx: OperatorContext): string {
  return `${ctx.pipelineUrl}/${ctx.nodeId}`;
}

/** Formats an event id the way history and logs show it: `uid:seq`. */
export function showId(id: EventId): string {
  return `${id.uid}:${id.seq}`;
}
