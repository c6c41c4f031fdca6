import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EddyEvent } from '../../../src/core/event';
import { eventually } from '../../helpers/runtime';
import { type Flow, type ProbeLog, idOf, probeOnramp, range, registriesWith, sleep, startFlow, testOfframp } from './helpers';

describe('delivery: failing sinks send fail back; qos::wal retries until the sink succeeds', () => {
  let dir: string;
  let flow: Flow | undefined;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'eddy-fail-'))));
  afterEach(async () => {
    await flow?.stop();
    flow = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  const variants: [string, () => Promise<void> | void][] = [
    [
      'throws',
      () => {
        throw new Error('sink down');
      },
    ],
    ['rejects later', () => sleep(2).then(() => Promise.reject(new Error('sink down')))],
  ];
  for (const [how, send] of variants) {
    it(`a sink that ${how}: every transactional event is failed back to the source, none acked`, async () => {
      const log: ProbeLog = { read: 0, acks: [], fails: [] };
      flow = await startFlow({
        registries: registriesWith([probeOnramp(log)], [testOfframp('broken', send)]),
        onramp: { type: 'probe', config: { count: 30 } },
        offramp: { type: 'broken' },
      });
      await eventually(() => log.fails.length >= 30, 5000, 'fails');
      const counters = flow.runtime.offramp('/offramp/dst/main')!.counters;
      // shutdown finishes the sends in flight and ends the flow: any late ack or extra fail is in the log now
      await flow.stop();
      expect(log.fails).to.deep.equal(range(1, 30));
      expect(log.acks).to.deep.equal([]);
      expect(counters.error).to.equal(30);
    });
  }

  it('a failing sink sends no fail for events that are not transactional', async () => {
    const log: ProbeLog = { read: 0, acks: [], fails: [] };
    flow = await startFlow({
      registries: registriesWith([probeOnramp(log)], [testOfframp('broken', () => Promise.reject(new Error('down')))]),
      onramp: { type: 'probe', config: { count: 10, transactional: false } },
      offramp: { type: 'broken' },
    });
    await eventually(() => flow!.runtime.offramp('/offramp/dst/main')!.counters.error === 10, 5000, 'errors');
    expect(log.fails).to.deep.equal([]);
  });

  it('with qos::wal before a sink that fails its first sends, every event is retried until delivered, exactly once', async () => {
    // event 51 is held back, to be sent as a sentinel once 1..50 are delivered
    const log: ProbeLog = { read: 0, acks: [], fails: [], hold: 50 };
    const FAILURES = 13;
    let attempts = 0;
    const delivered: number[] = [];
    const flaky = testOfframp('flaky', (event: EddyEvent) => {
      if (++attempts <= FAILURES) throw new Error(`attempt ${attempts} fails`);
      delivered.push(idOf(event));
    });
    flow = await startFlow({
      registries: registriesWith([probeOnramp(log)], [flaky]),
      onramp: { type: 'probe', config: { count: 51 } },
      nodes: [{ id: 'wal', type: 'qos::wal', config: { read_count: 5, max_elements: 1000, dir: join(dir, 'wal') } }],
      offramp: { type: 'flaky' },
    });
    await eventually(() => delivered.length >= 50, 10000, 'every event delivered');
    // no late duplicates: the WAL sends in log order, so a resend of 1..50 would come before the sentinel 51
    log.hold = undefined;
    await eventually(() => delivered.includes(51), 5000, 'the sentinel');
    expect(delivered[delivered.length - 1], 'the sentinel is the last event').to.equal(51);
    expect([...delivered].sort((a, b) => a - b)).to.deep.equal(range(1, 51));
    expect(attempts).to.equal(51 + FAILURES);
    // the WAL took ownership: the source got its acks once stored, and no fail
    await eventually(() => log.acks.length >= 51, 5000, 'the sentinel stored');
    expect([...log.acks].sort((a, b) => a - b)).to.deep.equal(range(1, 51));
    expect(log.fails).to.deep.equal([]);
  });

  it('with qos::wal before a sink that rejects asynchronously at first, every event still arrives', async () => {
    const log: ProbeLog = { read: 0, acks: [], fails: [] };
    let attempts = 0;
    const delivered = new Set<number>();
    const flaky = testOfframp('flaky', async (event: EddyEvent) => {
      const attempt = ++attempts;
      await sleep(1);
      if (attempt <= 20) throw new Error(`attempt ${attempt} fails`);
      delivered.add(idOf(event));
    });
    flow = await startFlow({
      registries: registriesWith([probeOnramp(log)], [flaky]),
      onramp: { type: 'probe', config: { count: 40 } },
      nodes: [{ id: 'wal', type: 'qos::wal', config: { read_count: 10, max_elements: 1000, dir: join(dir, 'wal') } }],
      offramp: { type: 'flaky' },
    });
    await eventually(() => delivered.size === 40, 10000, 'every event delivered');
    expect([...delivered].sort((a, b) => a - b)).to.deep.equal(range(1, 40));
    expect(log.fails).to.deep.equal([]);
  });
});
