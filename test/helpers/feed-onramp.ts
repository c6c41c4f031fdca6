import type { Subject } from 'rxjs';
import type { Frame, OnrampType } from '../../src/connectors/connector';
import type { EventId, Insight } from '../../src/core/event';

/** What a feed's test learns of its events: each ack and each fail, with the fail's insight. */
export interface FeedSettlement {
  ack(id: EventId): void;
  fail(id: EventId, insight: Insight): void;
}

/** A transactional onramp type named `feed`: its events are the frames the test pushes into `frames`, and their acks and fails go to `settled`. */
export function feedOnramp(frames: Subject<Frame>, settled: FeedSettlement): OnrampType {
  return {
    name: 'feed',
    defaultCodec: 'json',
    configSchema: { type: 'object', additionalProperties: false, properties: {} },
    create: () => ({
      frames,
      transactional: true,
      onAck: (id) => settled.ack(id),
      onFail: (id, insight) => settled.fail(id, insight),
    }),
  };
}
