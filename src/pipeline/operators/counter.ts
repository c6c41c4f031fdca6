import { Observable, type OperatorFunction } from '../../core/rx';
import type { EddyEvent } from '../../core/event';
import type { OperatorType } from '../operator';
import { s } from '../../schema/typed';

/**
 * Counts events per subscription, from 1, and wraps each value:
 * `{count: n, event: <original value>}`; meta is kept.
 */
export function countEvents(): OperatorFunction<EddyEvent, EddyEvent> {
  return (source) =>
    new Observable<EddyEvent>((subscriber) => {
      // state per subscription, so a resubscribed pipeline starts at 1 again
      let count = 0;
      return source.subscribe({
        next: (event) => subscriber.next({ ...event, data: { count: ++count, event: event.data } }),
        error: (err: unknown) => subscriber.error(err),
        complete: () => subscriber.complete(),
      });
    });
}

/** generic::counter */
export const counter: OperatorType<Record<string, never>> = {
  name: 'generic::counter',
  examples: [{}],
  outputPorts: () => [],
  configSchema: s.object({}, { description: "Replaces each event's value with `{count, event}`, counting from 1." }),
  create: () => countEvents(),
};
