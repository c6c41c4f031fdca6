import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { Subject, asyncScheduler, type Subscription } from 'rxjs';
import type { EddyEvent, Insight, PortEvent } from '../../src/core/event';
import type { OperatorContext } from '../../src/pipeline/operator';
import { wal, type WalNode } from '../../src/pipeline/operators/wal';
import { eventually } from '../helpers/runtime';

const config = (dir: string) => ({ read_count: 10, max_elements: 1000, dir });

function context(raised: Insight[]): OperatorContext {
  return { nodeId: 'w', pipelineUrl: '/pipeline/p/01', uid: 77, scheduler: asyncScheduler, insight: (i) => raised.push(i) };
}

const event = (seq: number): EddyEvent => ({
  id: { uid: 1, seq },
  data: { seq },
  meta: { m: seq },
  ingestNs: 1_700_000_000_123_456_789n + BigInt(seq),
  originUri: 'test://host',
  isBatch: false,
  transactional: true,
});

/** Runs a WAL node on a dir: collects its output and the insights it raises. */
function open(dir: string) {
  const raised: Insight[] = [];
  const out: PortEvent[] = [];
  const input = new Subject<EddyEvent>();
  const node = wal.create(config(dir), context(raised)) as WalNode;
  const sub: Subscription = node.apply(input).subscribe((e) => out.push(e));
  return { node, input, out, raised, close: async () => (sub.unsubscribe(), await node.stop()) };
}

// a positive wait; the checks after it are safe from late events: the replay comes in log order, and event 4 is a sentinel after it
const until = (cond: () => boolean, ms = 5000) => eventually(cond, ms);

describe('qos::wal persistence (LevelDB)', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'eddy-wal-test-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('should ack sources once stored and replay unacked events after reopening', async () => {
    const first = open(dir);
    for (let i = 1; i <= 3; i++) first.input.next(event(i));
    await until(() => first.out.length === 3);
    expect(first.raised.filter((i) => i.kind === 'ack').map((i) => i.event?.id.seq)).to.deep.equal([1, 2, 3]);
    // downstream acks the second event only
    expect(first.node.onInsight?.({ kind: 'ack', event: first.out[1].event, from: 'o' })).to.equal(null);
    await first.close();

    const second = open(dir);
    await until(() => second.out.length === 2);
    const replayed = second.out.map((p) => p.event);
    expect(replayed.map((e) => e.data)).to.deep.equal([{ seq: 1 }, { seq: 3 }]);
    expect(replayed[0].ingestNs).to.equal(event(1).ingestNs);
    expect(replayed[0].meta).to.deep.equal({ m: 1 });
    expect(replayed.every((e) => e.transactional && e.id.uid === 77)).to.equal(true);
    // new events continue the sequence after the stored ones
    second.input.next(event(4));
    await until(() => second.out.length === 3);
    expect(second.out[2].event.id.seq).to.equal(4);
    await second.close();
  });

  it('should lose no acked event when its process is killed with SIGKILL', async () => {
    const writer = join(__dirname, 'fixtures', 'wal-writer.js');
    const child = spawn(process.execPath, [writer, dir, '50'], { stdio: ['ignore', 'pipe', 'inherit'] });
    const acked = new Set<number>();
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      for (const m of chunk.matchAll(/acked (\d+)/g)) acked.add(Number(m[1]));
    });
    await until(() => acked.size >= 50, 10000);
    const exited = new Promise((r) => child.on('exit', r));
    child.kill('SIGKILL');
    await exited;

    const reopened = open(dir);
    await until(() => reopened.out.length >= 50);
    expect(reopened.out.map((p) => (p.event.data as { seq: number }).seq)).to.deep.equal([...acked].sort((a, b) => a - b));
    await reopened.close();
  });
});
