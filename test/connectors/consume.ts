/** A consuming flow for onramp tests: onramp -> passthrough -> a test sink, its err port -> a list. */
import type { EddyEvent } from '../../src/core/event';
import { createLogger } from '../../src/core/logger';
import { Runtime } from '../../src/runtime/runtime';
import { passthrough } from './net-helpers';

/** What reached the sinks of a `consume` flow: the events on the onramp's out and err ports. */
export interface Consumed {
  runtime: Runtime;
  /** events the sink was handed (also those it failed or still holds) */
  out: EddyEvent[];
  err: EddyEvent[];
  /** the onramp instance's URL */
  onramp: string;
  stop(): Promise<void>;
}

/** What the sink does with an event: return (ack), throw or reject (fail), or a promise it settles later. */
export type SinkFn = (event: EddyEvent) => Promise<void> | void;

/**
 * A runtime running an onramp of `type` (artefact `src`) whose `out` goes
 * through a passthrough to a test sink (acking by default) and whose `err`
 * goes to a list.
 */
export async function consumeWith(
  type: string,
  config: Record<string, unknown>,
  sink: SinkFn = () => undefined,
  extra: Record<string, unknown> = {},
): Promise<Consumed> {
  const out: EddyEvent[] = [];
  const err: EddyEvent[] = [];
  const runtime = new Runtime({ logger: createLogger('silent') });
  runtime.registerOfframp({
    name: 'sink',
    defaultCodec: 'json',
    autoAck: true,
    configSchema: { type: 'object', additionalProperties: false, properties: { concurrency: { type: 'integer', description: 'in-flight limit' } } },
    create: () => ({
      send: (_payloads, event) => {
        out.push(event);
        return sink(event);
      },
    }),
  });
  runtime.registerOfframp({
    name: 'errors',
    defaultCodec: 'json',
    autoAck: true,
    configSchema: { type: 'object', additionalProperties: false, properties: {} },
    create: () => ({ send: (_payloads, event) => void err.push(event) }),
  });
  await runtime.start();
  runtime.publish('onramp', { id: 'src', type, config, ...extra });
  runtime.publish('pipeline', passthrough('p'));
  runtime.publish('offramp', { id: 'dst', type: 'sink', config: { concurrency: 1000 } });
  runtime.publish('offramp', { id: 'errs', type: 'errors', config: {} });
  runtime.publish('binding', {
    id: 'flow',
    links: {
      '/onramp/src/{instance}/out': ['/pipeline/p/{instance}/in'],
      '/pipeline/p/{instance}/out': ['/offramp/dst/{instance}/in'],
      '/onramp/src/{instance}/err': ['/pipeline/p/errs/in'],
      '/pipeline/p/errs/out': ['/offramp/errs/{instance}/in'],
    },
  });
  try {
    await runtime.activate('binding', 'flow', 'main');
  } catch (e) {
    await runtime.shutdown();
    throw e;
  }
  return { runtime, out, err, onramp: '/onramp/src/main', stop: () => runtime.shutdown() };
}

/** The data of events, as JSON text, sorted. */
export const bodies = (events: EddyEvent[]): string[] => events.map((e) => JSON.stringify(e.data)).sort();
