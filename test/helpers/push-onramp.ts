import { Observable, type Subscriber } from 'rxjs';
import type { Frame, OnrampType } from '../../src/connectors/connector';
import type { Runtime } from '../../src/runtime/runtime';

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

/**
 * Publishes and activates `/binding/flow/main`: the `push` onramp → `relay`
 * (one passthrough node) → the offramp type `keeper`, which the caller
 * registered (each test keeps what it receives its own way).
 */
export async function activatePushFlow(runtime: Runtime): Promise<void> {
  runtime.publish('onramp', { id: 'push', type: 'push' });
  runtime.publish('offramp', { id: 'keeper', type: 'keeper' });
  runtime.publish('pipeline', {
    id: 'relay',
    interface: { inputs: ['in'], outputs: ['out'] },
    nodes: [{ id: 'pass', type: 'passthrough' }],
    links: { in: ['pass'], pass: ['out'] },
  });
  runtime.publish('binding', {
    id: 'flow',
    links: {
      '/onramp/push/{instance}/out': ['/pipeline/relay/{instance}/in'],
      '/pipeline/relay/{instance}/out': ['/offramp/keeper/{instance}/in'],
    },
  });
  await runtime.activate('binding', 'flow', 'main');
}
