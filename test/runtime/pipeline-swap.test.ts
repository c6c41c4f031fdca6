import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Runtime } from '../../src/runtime/runtime';
import { createLogger } from '../../src/core/logger';
import { completeLines } from '../helpers/lines';
import { eventually } from '../helpers/runtime';

/**
 * Runtime.replacePipeline: a changed pipeline swapped into a running binding
 * in place, its onramp paused meanwhile but never stopped (runtime/swap.ts).
 */
describe('replacing a running pipeline in place', function () {
  this.timeout(30000);
  let dir: string;
  let runtime: Runtime;
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'eddy-swap-'));
    runtime = await new Runtime({ logger: createLogger('silent') }).start();
  });
  afterEach(async () => {
    await runtime.shutdown();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Count windows of `count` ticks, each written as the ids of its ticks. */
  const windows = (count: number) => ({
    id: 'windows',
    interface: { inputs: ['in'], outputs: ['out'] },
    nodes: [{ id: 'w', type: 'window::aggregate', config: { window: { count }, aggregate: { ids: 'collect(event.id, 1000)' } } }],
    links: { in: ['w'], w: ['out'] },
  });
  const output = () => join(dir, 'out.json');
  const written = () => completeLines(output()).map((l) => (JSON.parse(l) as { ids: number[] }).ids);

  async function start(): Promise<void> {
    runtime.publish('onramp', { id: 'ticks', type: 'metronome', config: { interval: 1 } });
    runtime.publish('offramp', { id: 'out', type: 'file', config: { file: output() } });
    runtime.publish('pipeline', windows(3));
    runtime.publish('binding', {
      id: 'f',
      links: { '/onramp/ticks/{instance}/out': ['/pipeline/windows/{instance}/in'], '/pipeline/windows/{instance}/out': ['/offramp/out/{instance}/in'] },
    });
    await runtime.activate('binding', 'f', 'main');
  }

  it('keeps the onramp running: its counter goes on, and every tick is in exactly one window, of the old size or the new', async () => {
    await start();
    const onramp = runtime.onramp('/onramp/ticks/main');
    const offramp = runtime.offramp('/offramp/out/main');
    const oldPipeline = runtime.pipeline('/pipeline/windows/main');
    await eventually(() => written().length >= 5, 10000, 'windows of 3');
    await runtime.replacePipeline(windows(5));
    // the same onramp and offramp instances; a new pipeline instance under the same URL, of the new version
    expect(runtime.onramp('/onramp/ticks/main')).to.equal(onramp);
    expect(runtime.offramp('/offramp/out/main')).to.equal(offramp);
    expect(runtime.pipeline('/pipeline/windows/main')).not.to.equal(oldPipeline);
    expect(runtime.getInstance('pipeline', 'windows', 'main')).to.deep.include({ nodes: windows(5).nodes });
    expect(runtime.describe('pipeline', 'windows').artefact).to.deep.include({ nodes: windows(5).nodes });
    expect(onramp!.runtime.breaker.holders(), 'the swap let the breaker go').to.deep.equal([]);
    await eventually(() => written().filter((ids) => ids.length === 5).length >= 5, 10000, 'windows of 5');
    await runtime.deactivate('binding', 'f', 'main');
    const all = written();
    const sizes = all.map((ids) => ids.length);
    const swap = sizes.findIndex((n) => n !== 3);
    // windows of 3, the window open at the swap flushed (1 or 2 ticks; none when it was empty), windows of 5, the last flushed
    expect(
      sizes.slice(0, swap).every((n) => n === 3),
      sizes.join(','),
    ).to.equal(true);
    const after = sizes.slice(sizes[swap] < 3 ? swap + 1 : swap, -1);
    expect(after.length).to.be.greaterThan(4);
    expect(
      after.every((n) => n === 5),
      sizes.join(','),
    ).to.equal(true);
    const ids = all.flat();
    // the metronome counts from 0 for as long as its source runs: a restart would have started it again at 0
    expect(ids, 'every tick once, in order').to.deep.equal(ids.map((_, i) => i));
  });

  it('refuses a pipeline that is not kept by one binding (409), and changes nothing', async () => {
    await start();
    await runtime.activate('pipeline', 'windows', 'direct');
    const refused = await runtime.replacePipeline(windows(5)).then(
      () => undefined,
      (err: unknown) => err as Error,
    );
    expect(refused?.message).to.equal("pipeline 'windows' cannot be replaced while it runs: /pipeline/windows/direct is kept by direct, not by one binding");
    expect(runtime.describe('pipeline', 'windows').artefact).to.deep.include({ nodes: windows(3).nodes });
    expect(runtime.getInstance('pipeline', 'windows', 'main')).to.deep.include({ nodes: windows(3).nodes });
  });

  it('refuses a new version without a port the binding links (400), and changes nothing', async () => {
    await start();
    const renamed = { ...windows(5), interface: { inputs: ['in'], outputs: ['done'] }, links: { in: ['w'], w: ['done'] } };
    const refused = await runtime.replacePipeline(renamed).then(
      () => undefined,
      (err: unknown) => err as Error,
    );
    expect(refused?.message).to.equal("link /pipeline/windows/main/out -> /offramp/out/main/in: pipeline has no output 'out' (outputs: done, err)");
    expect(runtime.describe('pipeline', 'windows').artefact).to.deep.include({ nodes: windows(3).nodes });
  });
});
