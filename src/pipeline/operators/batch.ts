import { Observable, Subscription, type OperatorFunction, type SchedulerLike } from '../../core/rx';
import type { EddyEvent, EventId } from '../../core/event';
import type { OperatorType } from '../operator';
import { idMinter, memberContraflow } from './_shared/support';
import { batchMember } from '../../core/lazy-event';
import { s } from '../../schema/typed';
import { duration, durationMs } from '../../schema/duration';
import type { Input } from '../../schema/typed';

const configSchema = s.object(
  {
    count: s.integer({ minimum: 1, description: 'number of events per batch' }),
    timeout: duration('the time after the first member after which a partial batch is flushed; without it a batch waits until it is full'),
  },
  { description: 'Collects events into batches of `count` events, flushing a partial batch after `timeout`.', required: ['count'] },
);

export type BatchConfig = Input<typeof configSchema>;

/** One member of a batch event's data array (the original runtime's shape). */
export interface BatchEntry {
  data: { value: unknown; meta: Record<string, unknown>; ingest_ns: bigint };
}

/** Builds the batch event: fresh id, every member id tracked, first member's ingest time. */
export function batchEvent(members: readonly EddyEvent[], id: EventId): EddyEvent {
  const first = members[0];
  // a member whose data is unread stays unread (and its frame with it) until something reads its value
  const data: BatchEntry[] = members.map((m) => ({ data: batchMember(m) }));
  return {
    id,
    data,
    meta: {},
    ingestNs: first.ingestNs,
    originUri: first.originUri,
    isBatch: true,
    ...memberContraflow(members),
  };
}

/**
 * Collects events into batches of `count`. With `timeout`, a timer started by
 * the first member flushes a partial batch, also on an idle stream. What is
 * left when the source completes is flushed, so no event is lost.
 */
export function batchEvents(config: BatchConfig, uid: number, scheduler: SchedulerLike): OperatorFunction<EddyEvent, EddyEvent> {
  const timeoutMs = config.timeout === undefined ? undefined : durationMs(config.timeout, 'timeout');
  return (source) =>
    new Observable<EddyEvent>((subscriber) => {
      const mint = idMinter(uid);
      let members: EddyEvent[] = [];
      let timer: Subscription | undefined;
      const flush = () => {
        timer?.unsubscribe();
        timer = undefined;
        if (members.length === 0) return;
        const batch = batchEvent(members, mint());
        members = [];
        subscriber.next(batch);
      };
      const sub = source.subscribe({
        next: (event) => {
          members.push(event);
          if (members.length >= config.count) flush();
          else if (members.length === 1 && timeoutMs !== undefined) timer = scheduler.schedule(flush, timeoutMs);
        },
        error: (err: unknown) => subscriber.error(err),
        complete: () => {
          flush();
          subscriber.complete();
        },
      });
      return () => {
        timer?.unsubscribe();
        sub.unsubscribe();
      };
    });
}

/** generic::batch */
export const batch: OperatorType<BatchConfig> = {
  name: 'generic::batch',
  examples: [{ count: 10 }],
  outputPorts: () => [],
  configSchema,
  create: (config, ctx) => batchEvents(config, ctx.uid, ctx.scheduler),
};
