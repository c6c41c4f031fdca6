/**
 * An application's own offramp type: `example::collect` hands every encoded
 * event to a function of the application (to keep, forward or assert on).
 * The runtime's offramp machinery does the rest: encoding with the artefact's
 * codec and postprocessors, counting, acks (a return is an ack, a throw a
 * fail, as `autoAck` says) and the in-flight limit behind the circuit breaker.
 *
 * ```ts
 * const received: string[] = [];
 * runtime.registerOfframp(collector((payload) => received.push(payload.toString())));
 * ```
 */
import type { EddyEvent, OfframpType } from 'eddy';

/** What the application does with each payload; throwing fails the event back to its source. */
export type Collect = (payload: Buffer, event: EddyEvent) => void;

export function collector(collect: Collect, name = 'example::collect'): OfframpType<Record<string, never>> {
  return {
    name,
    defaultCodec: 'json',
    autoAck: true,
    configSchema: { type: 'object', additionalProperties: false, properties: {} },
    create: () => ({
      // one payload per event, one per member of a batch
      send(payloads, event) {
        for (const payload of payloads) collect(payload, event);
      },
    }),
  };
}
