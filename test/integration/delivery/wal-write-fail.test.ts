import { expect } from 'chai';
import type { EddyEvent } from '../../../src/core/event';
import type { OperatorType } from '../../../src/pipeline/operator';
import { walNode, type WalConfig } from '../../../src/pipeline/operators/wal';
import { MemoryWalStorage, type WalStorage } from '../../../src/pipeline/operators/wal/storage';
import { eventually } from '../../helpers/runtime';
import { type Flow, type ProbeLog, idOf, probeOnramp, range, registriesWith, startFlow, testOfframp } from './helpers';

/**
 * A WAL storage that writes on a later microtask, as a disk does, and fails
 * every write holding an event whose `id` is in `failing` (a full disk).
 */
class FailingStorage implements WalStorage {
  private readonly memory = new MemoryWalStorage();
  constructor(private readonly failing: Set<number>) {}
  load() {
    return this.memory.load();
  }
  async append(entries: [number, string][], lastSeq: number): Promise<void> {
    await Promise.resolve();
    const ids = entries.map(([, text]) => (JSON.parse(text) as { data: { id: number } }).data.id);
    if (ids.some((id) => this.failing.has(id))) throw new Error(`no space left on device (events ${ids.join(',')})`);
    this.memory.append(entries, lastSeq);
  }
  remove(seqs: number[]) {
    this.memory.remove(seqs);
  }
  close() {
    // nothing held: the memory storage needs no closing
  }
}

/** qos::wal with a storage the test chooses. */
const walOn = (storage: WalStorage): OperatorType<WalConfig> => ({
  name: 'test::wal',
  create: (config, ctx) => walNode(config, ctx, storage),
});

describe('delivery: qos::wal whose storage fails a write', () => {
  let flow: Flow | undefined;
  afterEach(async () => {
    await flow?.stop();
    flow = undefined;
  });

  it('fails exactly the events of the failed write back to the source, acks and delivers every other one, and keeps running', async () => {
    const log: ProbeLog = { read: 0, acks: [], fails: [] };
    const delivered: number[] = [];
    const registries = registriesWith([probeOnramp(log)], [testOfframp('sink', (event: EddyEvent) => void delivered.push(idOf(event)))]);
    registries.operators.register('test::wal', walOn(new FailingStorage(new Set([5, 30]))));
    flow = await startFlow({
      registries,
      onramp: { type: 'probe', config: { count: 60 } },
      nodes: [{ id: 'wal', type: 'test::wal', config: { read_count: 1000, max_elements: 1000 } }],
      offramp: { type: 'sink' },
    });
    await eventually(() => log.acks.length + log.fails.length >= 60, 5000, 'an ack or a fail for every event');
    // the WAL sends what it stored in the turn the write finished (read_count is above the count), so by now every stored event is delivered
    await flow.stop();
    flow = undefined;

    expect(log.fails).to.include.members([5, 30]);
    // each event is either acked (stored) or failed (not stored), never both, and every one is answered
    expect(log.acks.filter((id) => log.fails.includes(id))).to.deep.equal([]);
    expect([...log.acks, ...log.fails].sort((a, b) => a - b)).to.deep.equal(range(1, 60));
    // the writes after each failure went on: events past the last failed one were stored and delivered
    expect(log.acks).to.include(60);
    // delivered: exactly what was acked, in order, once each
    expect(delivered).to.deep.equal(log.acks);
  });
});
