/**
 * A pipeline without `links` chains its nodes in the order written, every
 * node's `err` to the pipeline's `err`; without `interface` it is [in] ->
 * [out, err]. What is stored (and shown) is the chain, spelled out.
 */
import { expect } from 'chai';
import { Subject } from 'rxjs';
import type { EddyEvent } from '../../src/core/event';
import type { Frame, OnrampType } from '../../src/connectors/connector';
import { createLogger } from '../../src/core/logger';
import { Runtime } from '../../src/runtime/runtime';
import { eventually } from '../helpers/runtime';
import { registriesWith, testOfframp } from '../integration/delivery/helpers';

describe('a pipeline without links', () => {
  let runtime: Runtime | undefined;
  afterEach(async () => {
    await runtime?.shutdown();
    runtime = undefined;
  });

  const chain = {
    id: 'chain',
    nodes: [
      { id: 'double', type: 'runtime::cel', config: { set: { n2: 'event.n * 2' } } },
      { id: 'label', type: 'runtime::cel', config: { set: { label: '"n=" + string(event.n2)' } } },
      { id: 'pass', type: 'passthrough' },
    ],
  };

  it('is stored as the chain of its nodes in order, each node with an err port linked to the pipeline err', () => {
    runtime = new Runtime({ logger: createLogger('silent') });
    const stored = runtime.publish('pipeline', structuredClone(chain)) as { interface: unknown; links: unknown };
    expect(stored.interface).to.deep.equal({ inputs: ['in'], outputs: ['out', 'err'] });
    expect(stored.links).to.deep.equal({
      in: ['double'],
      'double/err': ['err'],
      double: ['label'],
      'label/err': ['err'],
      label: ['pass'],
      pass: ['out'],
    });
  });

  it('runs in order, and an error in any node reaches the pipeline err output', async () => {
    const frames = new Subject<Frame>();
    const onramp: OnrampType<Record<string, never>> = {
      name: 'push',
      defaultCodec: 'json',
      configSchema: { type: 'object', additionalProperties: false, properties: {} },
      create: () => ({ frames }),
    };
    const out: EddyEvent[] = [];
    const errs: EddyEvent[] = [];
    const registries = registriesWith([onramp], [testOfframp('keep', (e) => void out.push(e)), testOfframp('errs', (e) => void errs.push(e))]);
    runtime = new Runtime({ registries, logger: createLogger('silent') });
    await runtime.start();
    runtime.publish('onramp', { id: 'src', type: 'push', config: {} });
    runtime.publish('pipeline', structuredClone(chain));
    runtime.publish('offramp', { id: 'ok', type: 'keep', config: {} });
    runtime.publish('offramp', { id: 'bad', type: 'errs', config: {} });
    runtime.publish('binding', {
      id: 'flow',
      links: {
        '/onramp/src/{instance}/out': ['/pipeline/chain/{instance}/in'],
        '/pipeline/chain/{instance}/out': ['/offramp/ok/{instance}/in'],
        '/pipeline/chain/{instance}/err': ['/offramp/bad/{instance}/in'],
      },
    });
    await runtime.activate('binding', 'flow', 'main', {});
    frames.next({ stream: 0, value: { n: 2 }, originUri: 'test://push' });
    // n is a string: the first node cannot double it
    frames.next({ stream: 0, value: { n: 'x' }, originUri: 'test://push' });
    await eventually(() => out.length === 1 && errs.length === 1, 5000, 'one out, one on err');
    expect(out[0].data).to.deep.equal({ n: 2, n2: 4, label: 'n=4' });
    expect(String(errs[0].meta.error)).to.match(/double/);
  });

  it('keeps links as written when it has them', () => {
    runtime = new Runtime({ logger: createLogger('silent') });
    const stored = runtime.publish('pipeline', {
      id: 'p',
      interface: { inputs: ['in'], outputs: ['out'] },
      nodes: [{ id: 'pass', type: 'passthrough' }],
      links: { in: ['pass'], pass: ['out'] },
    }) as { links: unknown };
    expect(stored.links).to.deep.equal({ in: ['pass'], pass: ['out'] });
  });
});
