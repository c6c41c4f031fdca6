import { Observable, type Subscriber } from 'rxjs';
import type { Frame, OnrampType } from '../../src/connectors/connector';

/**
 * An onramp type named `push` that a test feeds by hand: each running
 * instance's subscriber is kept in `feeds` under its URL (and removed when
 * the instance stops). It never pauses by itself, so what it delivers while
 * the gate is shut is held by the onramp machinery.
 */
export function pushOnramp(feeds: Map<string, Subscriber<Frame>>): OnrampType<Record<string, never>> {
  return {
    name: 'push',
    defaultCodec: 'json',
    configSchema: { type: 'object', additionalProperties: false, properties: {} },
    create: (_config, ctx) => ({
      frames: new Observable<Frame>((subscriber) => {
        feeds.set(ctx.url, subscriber);
        return () => feeds.delete(ctx.url);
      }),
    }),
  };
}
