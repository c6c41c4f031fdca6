/**
 * Embedding eddy in a TypeScript application: the application's own onramp,
 * operator and offramp types registered with a Runtime, a flow published from
 * a config object and activated, and its output collected in-process.
 *
 * Run it: `npm run build && node dist/examples/embed.js`
 */
import { Runtime, createLogger } from 'eddy';
import { range } from './custom-onramp';
import { uppercaseOperator } from './custom-operator';
import { collector } from './custom-offramp';

/** Reads `count` numbers through a pipeline that labels them, and returns what the offramp received. */
export async function labelNumbers(count: number): Promise<unknown[]> {
  const received: unknown[] = [];
  let done: () => void;
  const allReceived = new Promise<void>((resolve) => (done = resolve));
  const runtime = await new Runtime({ logger: createLogger('warn') })
    .registerOnramp(range)
    .registerOperator(uppercaseOperator)
    .registerOfframp(
      collector((payload) => {
        received.push(JSON.parse(payload.toString()));
        if (received.length === count) done();
      }),
    )
    .start();
  try {
    runtime.publish('onramp', { id: 'numbers', type: 'example::range', config: { from: 1, to: count + 1 } });
    runtime.publish('pipeline', {
      id: 'label',
      interface: { inputs: ['in'], outputs: ['out'] },
      nodes: [
        { id: 'name', type: 'runtime::cel', config: { set: { label: "event.n % 2 == 0 ? 'even' : 'odd'" } } },
        { id: 'shout', type: 'example::uppercase', config: { field: 'label' } },
      ],
      links: { in: ['name'], name: ['shout'], shout: ['out'] },
    });
    runtime.publish('offramp', { id: 'app', type: 'example::collect' });
    runtime.publish('binding', {
      id: 'flow',
      links: {
        '/onramp/numbers/{instance}/out': ['/pipeline/label/{instance}/in'],
        '/pipeline/label/{instance}/out': ['/offramp/app/{instance}/in'],
      },
    });
    await runtime.activate('binding', 'flow', 'main', { instance: 'main' });
    await allReceived;
    return received;
  } finally {
    await runtime.shutdown();
  }
}

if (require.main === module) {
  // a failure is left unhandled: node prints it and exits 1
  void labelNumbers(4).then((out) => console.log(JSON.stringify(out)));
}
