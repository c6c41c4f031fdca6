import type { EddyEvent, Meta } from '../../core/event';
import type { OfframpType } from '../connector';
import { s } from '../../schema/typed';

/** What one event asks the cb offramp to emit: at most one delivery and at most one breaker insight. */
export interface CbActions {
  delivery?: 'ack' | 'fail';
  /** `trigger` is the spec's close, `restore` its open */
  breaker?: 'trigger' | 'restore';
  /** strings that are none of the six names (ignored, reported once per event) */
  unknown: string[];
}

const BREAKER: Record<string, 'trigger' | 'restore'> = { trigger: 'trigger', close: 'trigger', open: 'restore', restore: 'restore' };

/** The `cb` payload of one value: metadata `cb` first, then data field `cb`. */
function cbPayload(value: unknown, meta: Meta | undefined): unknown {
  if (meta?.cb !== undefined && meta.cb !== null) return meta.cb;
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) return (value as Record<string, unknown>).cb;
  return undefined;
}

/** The (value, meta) pairs to look at: each member of a batch, else the event itself. */
function members(event: EddyEvent): [unknown, Meta | undefined][] {
  if (!event.isBatch || !Array.isArray(event.data)) return [[event.data, event.meta]];
  return event.data.map((entry) => {
    const inner = (entry as { data?: { value?: unknown; meta?: Meta } } | null)?.data;
    return inner && typeof inner === 'object' ? [inner.value, inner.meta] : [entry, undefined];
  });
}

/**
 * Which insights an event asks for. Every string of every member counts:
 * ack wins over fail, close/trigger wins over open/restore. A batch is one
 * delivered event, so its members' strings are pooled and it gets at most
 * one of each kind too.
 */
export function cbActions(event: EddyEvent): CbActions {
  let ack = false;
  let fail = false;
  let close = false;
  let open = false;
  const unknown: string[] = [];
  for (const [value, meta] of members(event)) {
    const payload = cbPayload(value, meta);
    const names = typeof payload === 'string' ? [payload] : Array.isArray(payload) ? payload : [];
    for (const name of names) {
      if (name === 'ack') ack = true;
      else if (name === 'fail') fail = true;
      else if (typeof name === 'string' && BREAKER[name] === 'trigger') close = true;
      else if (typeof name === 'string' && BREAKER[name] === 'restore') open = true;
      else unknown.push(typeof name === 'string' ? name : JSON.stringify(name));
    }
    if (payload !== undefined && typeof payload !== 'string' && !Array.isArray(payload)) unknown.push(JSON.stringify(payload));
  }
  const actions: CbActions = { unknown };
  if (ack || fail) actions.delivery = ack ? 'ack' : 'fail';
  if (close || open) actions.breaker = close ? 'trigger' : 'restore';
  return actions;
}

/**
 * cb: raises the circuit-breaker and delivery insights an event asks for
 * (metadata `cb`, else data field `cb`: one of, or a list of, ack, fail,
 * trigger, close, open, restore), back to the pipeline that delivered the
 * event, also for events that are not transactional. It is not auto-acking:
 * an event without `cb` gets no ack. The delivery insight goes first, then
 * the breaker one, so `["fail","close"]` fails the event, then pauses its sources.
 */
export const cbOfframp: OfframpType<Record<string, never>> = {
  name: 'cb',
  defaultCodec: 'json',
  autoAck: false,
  example: {},
  configSchema: s.object({}, { description: 'For tests: answers each event with the acks, fails and circuit-breaker changes it asks for.' }),
  create(_config, ctx) {
    return {
      send(_payloads, event) {
        const { delivery, breaker, unknown } = cbActions(event);
        if (unknown.length > 0) {
          ctx.logger.warn(`Offramp ${ctx.url}: ignoring cb values ${unknown.join(', ')} (known: ack, fail, trigger, close, open, restore)`);
        }
        if (delivery) ctx.insight(delivery, event);
        if (breaker) ctx.raise(breaker, event);
      },
    };
  },
};
