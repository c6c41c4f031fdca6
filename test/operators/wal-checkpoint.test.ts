import { expect } from 'chai';
import { Subject, VirtualTimeScheduler, type Subscription } from 'rxjs';
import type { EddyEvent, Insight, PortEvent } from '../../src/core/event';
import type { PartitionedState, StateChanges, StateValue } from '../../src/core/state';
import type { CheckpointedSink } from '../../src/core/checkpoint';
import { CheckpointingLog, STORED_BEFORE } from '../../src/pipeline/operators/wal/checkpoint';
import { MemoryWalStorage } from '../../src/pipeline/operators/wal/storage';

/**
 * qos::wal with guarantee exactly_once (core/checkpoint.ts), on a memory
 * store in virtual time: what a checkpoint saves, how a failure goes back to
 * it, what a restart replays, and what it drops of a source read again.
 * The stateful node and the sink after it are stand-ins the test drives.
 */
const UID = 9;
const INTERVAL = 100;

/** A stateful node's stand-in: counts what it held, one entry `n` in partition ''. */
class Counter implements PartitionedState {
  n = 0;
  private changed = false;
  hold(): void {
    this.n++;
    this.changed = true;
  }
  partitions(): string[] {
    return this.n > 0 ? [''] : [];
  }
  snapshot(): Map<string, StateValue> {
    return new Map([['n', this.n]]);
  }
  takeChanges(): Map<string, StateChanges> {
    if (!this.changed) return new Map();
    this.changed = false;
    return new Map([['', new Map([['n', this.n]])]]);
  }
  restore(_partition: string, entries: ReadonlyMap<string, StateValue>): void {
    this.n = entries.get('n') as number;
    this.changed = false;
  }
  release(): void {
    this.n = 0;
  }
}

/** A file offramp's stand-in: its length grows by 10 per event written. */
class Sink implements CheckpointedSink {
  length = 0;
  resumedAt: (number | undefined)[] = [];
  rewinds: number[] = [];
  resumeAt(length: number | undefined): void {
    this.resumedAt.push(length);
    this.length = length ?? 0;
  }
  position(): Promise<number> {
    return Promise.resolve(this.length);
  }
  rewind(length: number): Promise<void> {
    this.rewinds.push(length);
    this.length = length;
    return Promise.resolve();
  }
}

const event = (n: number, replay?: string): EddyEvent => ({
  id: { uid: 1, seq: n },
  data: { n },
  meta: {},
  ingestNs: 0n,
  originUri: 'test://host',
  isBatch: false,
  transactional: false,
  ...(replay !== undefined ? { replay } : {}),
});

/** Lets the promises the log awaits run (the memory store answers at once). */
const settle = async () => {
  for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
};

/** A log on `storage` with a counter and a sink after it, subscribed. */
async function open(storage: MemoryWalStorage) {
  const scheduler = new VirtualTimeScheduler();
  const dropped: string[] = [];
  const ctx = {
    nodeId: 'log',
    pipelineUrl: '/pipeline/p/main',
    uid: UID,
    scheduler,
    insight: (_i: Insight) => undefined,
    drop: (e: EddyEvent, rule: string) => void dropped.push(`${(e.data as { n: number }).n} ${rule}`),
  };
  const log = new CheckpointingLog({ read_count: 100, max_elements: 1000 }, ctx, storage, INTERVAL);
  const counter = new Counter();
  const sink = new Sink();
  await log.attachCheckpoint({ stateful: [{ pipeline: 'p', node: 'count', state: counter }], sinks: [{ url: '/offramp/out/main', type: 'file', sink }] });
  const input = new Subject<EddyEvent>();
  const out: PortEvent[] = [];
  const sub: Subscription = log.apply(input).subscribe((e) => out.push(e));
  await settle();
  /** the events sent downstream so far, by their input number */
  const sent = () => out.map((p) => (p.event.data as { n: number }).n);
  const answer = (kind: 'ack' | 'fail', n: number) => {
    const e = out.filter((p) => (p.event.data as { n: number }).n === n).at(-1)!.event;
    log.onInsight({ kind, event: e, from: '/offramp/out/main' });
  };
  /** downstream takes event n: the counter holds it and it is acked; the sink writes a line for it */
  const take = (n: number) => {
    counter.hold();
    sink.length += 10;
    answer('ack', n);
  };
  /** the interval passes: the checkpoint runs, and the sends it held (scheduled) go out */
  const checkpoint = async () => {
    scheduler.flush();
    await settle();
    scheduler.flush();
  };
  return { log, input, counter, sink, sent, take, answer, checkpoint, dropped, flush: () => scheduler.flush(), close: () => sub.unsubscribe() };
}

describe('qos::wal guarantee exactly_once: checkpoints', () => {
  it('saves the state, the sink length and how far it read in one checkpoint, which a restart goes on from', async () => {
    const storage = new MemoryWalStorage();
    const a = await open(storage);
    expect(a.sink.resumedAt).to.deep.equal([undefined]); // no checkpoint yet: the sink opens as it would
    for (const n of [1, 2, 3]) a.input.next(event(n));
    await settle();
    expect(a.sent()).to.deep.equal([1, 2, 3]);
    for (const n of [1, 2, 3]) a.take(n);
    await a.checkpoint();
    const saved = storage.loadCheckpoint();
    expect(saved.seq).to.equal(3);
    expect(saved.sinks.get('/offramp/out/main')).to.equal(30);
    expect(saved.state.get('p/count')?.get('')?.get('n')).to.equal(3);
    expect([...storage.data.keys()], 'what the checkpoint covers left the log with it').to.deep.equal([]);

    // 4 and 5 are taken, but no checkpoint follows: a restart does them again, from the state of the last one
    for (const n of [4, 5]) a.input.next(event(n));
    await settle();
    for (const n of [4, 5]) a.take(n);
    a.close(); // a crash: no last checkpoint (the stop's would need a clean shutdown)

    const b = await open(storage);
    expect(b.counter.n, 'the state as the checkpoint saved it').to.equal(3);
    expect(b.sink.resumedAt, 'the sink goes on from its saved length').to.deep.equal([30]);
    expect(b.sent(), 'only what the checkpoint did not cover is sent again').to.deep.equal([4, 5]);
  });

  it('an event that failed since the last checkpoint takes the flow back to it: state restored, sink cut back, the events sent again', async () => {
    const a = await open(new MemoryWalStorage());
    for (const n of [1, 2]) a.input.next(event(n));
    await settle();
    for (const n of [1, 2]) a.take(n);
    await a.checkpoint();
    for (const n of [3, 4]) a.input.next(event(n));
    await settle();
    a.take(3);
    a.answer('fail', 4);
    await a.checkpoint();
    expect(a.sink.rewinds).to.deep.equal([20]);
    expect(a.counter.n, 'event 3 is not counted twice: the state went back to before it').to.equal(2);
    expect(a.sent()).to.deep.equal([1, 2, 3, 4, 3, 4]);
  });

  it('a checkpoint waits for every event sent to settle, and sends nothing while it waits', async () => {
    const a = await open(new MemoryWalStorage());
    for (const n of [1, 2]) a.input.next(event(n));
    await settle();
    a.take(1);
    await a.checkpoint();
    a.input.next(event(3));
    await settle();
    a.flush();
    expect(a.sent(), 'held while the checkpoint waits for event 2').to.deep.equal([1, 2]);
    a.take(2);
    await a.checkpoint();
    expect(a.sent()).to.deep.equal([1, 2, 3]);
  });

  it('drops, counted, what a replayable source sends again after a restart, as many as it had stored', async () => {
    const storage = new MemoryWalStorage();
    const a = await open(storage);
    for (const n of [1, 2, 3]) a.input.next(event(n, '/onramp/in/main'));
    await settle();
    a.close();
    const b = await open(storage);
    // the file is read again from its start: 1-3 were stored, 4 is new
    for (const n of [1, 2, 3, 4]) b.input.next(event(n, '/onramp/in/main'));
    await settle();
    expect(b.dropped).to.deep.equal([1, 2, 3].map((n) => `${n} ${STORED_BEFORE}`));
    expect(b.sent(), 'the stored 1-3 replayed from the log, then 4').to.deep.equal([1, 2, 3, 4]);
  });
});
