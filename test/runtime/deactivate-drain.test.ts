import { expect } from 'chai';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Runtime } from '../../src/runtime/runtime';
import { createLogger } from '../../src/core/logger';
import { eventually } from '../helpers/runtime';

/**
 * Deactivating a binding stops what only it runs as a shutdown does: the
 * sources pause, the pipelines drain (a partial batch flushes), the sinks
 * write it and close. A pipeline another binding still uses is left running.
 */
describe('deactivating a binding drains its flow', () => {
  let dir: string;
  let runtime: Runtime;
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'eddy-drain-'));
    runtime = await new Runtime({ logger: createLogger('silent') }).start();
  });
  afterEach(async () => {
    await runtime.shutdown();
    rmSync(dir, { recursive: true, force: true });
  });

  const flow = (id: string, onramp: string) => ({
    id,
    links: { [`/onramp/${onramp}/{instance}/out`]: ['/pipeline/batched/{instance}/in'], '/pipeline/batched/{instance}/out': ['/offramp/out/{instance}/in'] },
  });

  it('writes a partial batch the pipeline holds before the sink closes', async () => {
    const input = join(dir, 'in.json');
    const output = join(dir, 'out.json');
    writeFileSync(input, '{"n":1}\n{"n":2}\n{"n":3}\n');
    runtime.publish('onramp', { id: 'lines', type: 'file', config: { source: input } });
    runtime.publish('offramp', { id: 'out', type: 'file', config: { file: output } });
    runtime.publish('pipeline', {
      id: 'batched',
      interface: { inputs: ['in'], outputs: ['out'] },
      nodes: [{ id: 'b', type: 'generic::batch', config: { count: 100 } }],
      links: { in: ['b'], b: ['out'] },
    });
    runtime.publish('binding', flow('f', 'lines'));
    await runtime.activate('binding', 'f', 'main');
    // the three lines are read (the onramp counts them out), and wait in the batch of 100
    const out = () =>
      (runtime.observe().find((o) => o.url === '/onramp/lines/main') as { ports?: { port: string; events: number }[] } | undefined)?.ports?.find(
        (p) => p.port === 'out',
      )?.events;
    await eventually(() => out() === 3, 5000, 'the onramp to read 3 lines');
    expect(existsSync(output) ? readFileSync(output, 'utf8') : '').to.equal('');
    await runtime.deactivate('binding', 'f', 'main');
    const written = readFileSync(output, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as unknown);
    expect(written.flat()).to.deep.equal([{ n: 1 }, { n: 2 }, { n: 3 }]);
    expect(runtime.instancesOf('pipeline', 'batched')).to.deep.equal([]);
  });
});
