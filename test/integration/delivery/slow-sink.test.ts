import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EddyEvent } from '../../../src/core/event';
import { eventually } from '../../helpers/runtime';
import { type Flow, idOf, range, registriesWith, sleep, startFlow, testOfframp } from './helpers';

/**
 * A blaster faster than a sink that takes a while per send. The offramp
 * triggers the breaker at `concurrency` in-flight sends and the blaster
 * checks the breaker before every event, so neither the sends in flight nor
 * the events read but not yet sent may ever exceed `concurrency`, whatever
 * the timing.
 */
describe('delivery: a slow sink behind a fast source', () => {
  let dir: string;
  let flow: Flow | undefined;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'eddy-slow-'))));
  afterEach(async () => {
    await flow?.stop();
    flow = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  for (const concurrency of [1, 8, 32]) {
    it(`keeps at most maxInFlight = ${concurrency} sends in flight and delivers every event exactly once`, async () => {
      const COUNT = 1000;
      const source = join(dir, 'events.json');
      writeFileSync(
        source,
        range(1, COUNT)
          .map((id) => `{"id":${id}}\n`)
          .join(''),
      );
      let inFlight = 0;
      let peak = 0;
      let completed = 0;
      let peakBacklog = 0;
      const arrived = new Map<number, number>();
      let read = () => 0;
      const slow = testOfframp('slow', async (event: EddyEvent) => {
        inFlight++;
        peak = Math.max(peak, inFlight);
        // events the source read that the sink has not finished: in flight plus any buffered on the way
        peakBacklog = Math.max(peakBacklog, read() - completed);
        await sleep(1);
        arrived.set(idOf(event), (arrived.get(idOf(event)) ?? 0) + 1);
        inFlight--;
        completed++;
      });
      flow = await startFlow({
        registries: registriesWith([], [slow]),
        onramp: { type: 'blaster', config: { source, iters: COUNT } },
        offramp: { type: 'slow', config: { concurrency } },
      });
      const counters = flow.runtime.onramp(flow.onramp)!.runtime.counters;
      read = () => counters.out;
      await eventually(() => completed >= COUNT, 12000, 'every event at the sink');
      // shutdown finishes the sends in flight and ends the flow: an extra delivery would be counted by now
      await flow.stop();
      expect(peak, 'sends in flight').to.be.at.most(concurrency);
      expect(peakBacklog, 'events read but not yet sent').to.be.at.most(concurrency);
      // the limit was reached, so the breaker did the bounding, not the timing
      expect(peak).to.equal(concurrency);
      expect(counters.out).to.equal(COUNT);
      expect(arrived.size).to.equal(COUNT);
      expect(
        [...arrived.values()].every((n) => n === 1),
        'each event once',
      ).to.equal(true);
      expect([...arrived.keys()].sort((a, b) => a - b)).to.deep.equal(range(1, COUNT));
    });
  }
});
