/**
 * Small helpers shared by the builtin operators: id minting, err-port events,
 * recognising one's own insights, and the node-URL used as insight `from`.
 */
import type { EddyEvent, EventId, Insight } from '../../../core/event';
import { trackedIds } from '../../../core/event';
import type { OperatorContext } from '../../operator';
import { withMeta } from '../../../core/lazy-event';

/**
 * What an event made of members (a batch, a reduced event) carries so that
 * its ack or fail reaches every member: every member id (nested batches
 * flattened), transactional if any member was, and the members' `opMeta`
 * merged with the first value per key winning, so an upstream operator
 * still recognises insights about it. `opMeta` is absent when empty.
 */
export function memberContraflow(members: readonly EddyEvent[]): Pick<EddyEvent, 'tracked' | 'transactional' | 'opMeta'> {
  const tracked: EventId[] = [];
  const opMeta: Record<string, unknown> = {};
  let transactional = false;
  for (const m of members) {
    tracked.push(...trackedIds(m));
    transactional ||= m.transactional;
    for (const [k, v] of Object.entries(m.opMeta ?? {})) if (!(k in opMeta)) opMeta[k] = v;
  }
  return { tracked, transactional, ...(Object.keys(opMeta).length > 0 ? { opMeta } : {}) };
}

/** Mints fresh ids under the operator's uid (batch, wal); seq starts at 1. */
export function idMinter(uid: number, start = 0): () => EventId {
  let seq = start;
  return () => ({ uid, seq: ++seq });
}

/** The event with meta `error` set, for the `err` port. Never mutates the input. */
export function withError(event: EddyEvent, error: string): EddyEvent {
  // withMeta: an event still undecoded stays so (a spread of it would lose its data, which is the frame's)
  return withMeta(event, { ...event.meta, error });
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
