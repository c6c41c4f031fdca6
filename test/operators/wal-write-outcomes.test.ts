import { expect } from 'chai';
import { Subject, VirtualTimeScheduler, type Subscription } from 'rxjs';
import type { EddyEvent, Insight, PortEvent } from '../../src/core/event';
import { walNode } from '../../src/pipeline/operators/wal';
import { ControlledWalStorage } from './wal-storage-control';

const UID = 77;
const FROM = '/pipeline/p/01/w';

const event = (seq: number, transactional = true): EddyEvent => ({
  id: { uid: 1, seq },
  data: { seq },
  meta: {},
  ingestNs: BigInt(seq),
  originUri: 'test://host',
  isBatch: false,
  transactional,
});

/**
 * A WAL node on a storage whose writes finish when the test says so (and
 * succeed or fail as it says): what reaches the source, and what goes
 * downstream, before and after each write's outcome.
 */
function open() {
  const storage = new ControlledWalStorage();
  const raised: Insight[] = [];
  const out: PortEvent[] = [];
  const input = new Subject<EddyEvent>();
  let failed: unknown;
  const scheduler = new VirtualTimeScheduler();
  const ctx = { nodeId: 'w', pipelineUrl: '/pipeline/p/01', uid: UID, scheduler, insight: (i: Insight) => void raised.push(i) };
  const node = walNode({ read_count: 10, max_elements: 100 }, ctx, storage);
  const sub: Subscription = node.apply(input).subscribe({ next: (e) => out.push(e), error: (err) => (failed = err) });
  /** the insights for the source, as `kind seq` */
  const told = () => raised.map((i) => `${i.kind} ${i.event?.id.seq}`);
  /** what went downstream, as `port seq` (the input event's seq, from its data) */
  const sent = () => out.map((p) => `${p.port} ${(p.event.data as { seq: number }).seq}`);
  return { storage, raised, input, node, scheduler, told, sent, failed: () => failed, close: () => sub.unsubscribe() };
}

describe('qos::wal: acks only what its storage has written', () => {
  it('acks nothing and sends nothing downstream while a write is under way; once it finishes, acks exactly its events', async () => {
    const wal = open();
    wal.input.next(event(1));
    expect(wal.storage.writes.map((w) => w.seqs)).to.deep.equal([[1]]);
    // 2 and 3 arrive while 1 is being written: they wait for the next write
    wal.input.next(event(2));
    wal.input.next(event(3));
    expect(wal.storage.writes).to.have.length(1);
    expect(wal.told()).to.deep.equal([]);
    expect(wal.sent()).to.deep.equal([]);

    await wal.storage.writes[0].succeed();
    expect(wal.told()).to.deep.equal(['ack 1']);
    expect(wal.sent()).to.deep.equal(['out 1']);
    expect(wal.storage.writes.map((w) => w.seqs)).to.deep.equal([[1], [2, 3]]);

    await wal.storage.writes[1].succeed();
    expect(wal.told()).to.deep.equal(['ack 1', 'ack 2', 'ack 3']);
    expect(wal.sent()).to.deep.equal(['out 1', 'out 2', 'out 3']);
    wal.close();
  });

  it('a failed write acks nothing: it fails its transactional events back to their source, sends the others to err, and the log carries on', async () => {
    const wal = open();
    wal.input.next(event(1));
    wal.input.next(event(2));
    wal.input.next(event(3, false)); // 2 and 3 are written together
    await wal.storage.writes[0].succeed();
    expect(wal.storage.writes[1].seqs).to.deep.equal([2, 3]);

    await wal.storage.writes[1].fail('disk full');
    expect(wal.told()).to.deep.equal(['ack 1', 'fail 2']);
    const failure = wal.raised[1];
    expect(failure).to.deep.include({ from: FROM, event: event(2) });
    expect(failure.meta).to.deep.equal({ error: 'qos::wal node w: write failed: disk full' });
    // the non-transactional event has nobody to fail it back to: it leaves on err, with the reason
    expect(wal.sent()).to.deep.equal(['out 1', 'err 3']);
    expect(wal.node.ports).to.include('err');
    expect([...wal.storage.data.keys()]).to.deep.equal([1]);

    // the node is still running: the next event is written, acked and sent
    expect(wal.failed()).to.equal(undefined);
    wal.input.next(event(4));
    expect(wal.storage.writes[2].seqs).to.deep.equal([4]);
    await wal.storage.writes[2].succeed();
    expect(wal.told()).to.deep.equal(['ack 1', 'fail 2', 'ack 4']);
    expect(wal.sent()).to.deep.equal(['out 1', 'err 3', 'out 4']);
    wal.close();
  });

  it('a failed write is never sent downstream, also when a downstream fail replays over its seqs', async () => {
    const wal = open();
    wal.input.next(event(1));
    wal.input.next(event(2));
    await wal.storage.writes[0].succeed();
    await wal.storage.writes[1].fail('I/O error');
    wal.input.next(event(3));
    await wal.storage.writes[2].succeed();
    expect(wal.sent()).to.deep.equal(['out 1', 'out 3']);
    // downstream fails 1: the replay from 1 skips 2, which was never stored, and sends 3 again
    const stored1 = { ...event(1), id: { uid: UID, seq: 1 } };
    expect(wal.node.onInsight?.({ kind: 'fail', event: stored1, from: '/offramp/o/01' })).to.equal(null);
    wal.scheduler.flush();
    expect(wal.sent()).to.deep.equal(['out 1', 'out 3', 'out 1', 'out 3']);
    expect(wal.told()).to.deep.equal(['ack 1', 'fail 2', 'ack 3']);
    wal.close();
  });
});
