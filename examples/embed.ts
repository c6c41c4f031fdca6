/**
 * Embedding eddy in a TypeScript application: register your own operator,
 * publish a pipeline that uses it by type name, activate an instance, and
 * feed and read its streams in-process as RxJS Subjects.
 *
 * Run it: `npm run build && node dist/examples/embed.js`
 */
import { firstValueFrom, take, toArray } from 'rxjs';
import { Runtime } from '../src';
import { createLogger } from '../src/core/logger';
import type { EddyEvent } from '../src/core/event';
import { uppercaseOperator } from './custom-operator';

export async function shout(messages: string[]): Promise<unknown[]> {
  const runtime = await new Runtime({ logger: createLogger('warn') }).registerOperator(uppercaseOperator).start();
  try {
    runtime.publish('pipeline', {
      id: 'loud',
      interface: { inputs: ['in'], outputs: ['out'] },
      nodes: [{ id: 'shout', type: 'example::uppercase', config: { field: 'message' } }],
      links: { in: ['shout'], shout: ['out'] },
    });
    await runtime.activate('pipeline', 'loud', 'app');
    const pipeline = runtime.pipeline('/pipeline/loud/app')!;
    const received = firstValueFrom(pipeline.output('out').pipe(take(messages.length), toArray()));
    messages.forEach((message, seq) => pipeline.input('in').next(appEvent(seq + 1, { message })));
    return (await received).map((event) => event.data);
  } finally {
    await runtime.shutdown();
  }
}

/** An event made by the application itself (uid 0 is never an onramp's). */
function appEvent(seq: number, data: unknown): EddyEvent {
  return {
    id: { uid: 0, seq },
    data,
    meta: {},
    ingestNs: BigInt(Date.now()) * 1_000_000n,
    originUri: 'app://embedded',
    isBatch: false,
    transactional: false,
  };
}

if (require.main === module) {
  shout(['hello', 'world']).then((out) => console.log(JSON.stringify(out)));
}
