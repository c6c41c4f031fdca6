import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger } from '../../../src/core/logger';
import { Runtime } from '../../../src/runtime/runtime';
import { eventually } from '../../helpers/runtime';
import { idOf, probeOnramp, range, registriesWith, testOfframp, type ProbeLog } from './helpers';

/**
 * Two onramp instances feed one pipeline instance. Acks and fails travel
 * back to every transactional input of the pipeline; each onramp must take
 * only those about its own events (the event id's uid), or an onramp would
 * ack or replay what another one sent. Event seqs overlap on purpose (both
 * count from 1), and the second onramp sends more, so a stray insight shows
 * as a duplicate or as a seq the first one never sent.
 */
describe('delivery: two onramps feeding one pipeline each get only their own acks and fails', () => {
  let runtime: Runtime | undefined;
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'eddy-two-'))));
  afterEach(async () => {
    await runtime?.shutdown();
    runtime = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  const LEFT = 30;
  const RIGHT = 50;

  /** probe `left` (LEFT events) and `right` (RIGHT events, `{side: 'right'}`) -> pipeline `p` (nodes) -> offramp `dst`. */
  async function start(logs: { left: ProbeLog; right: ProbeLog }, sink: ReturnType<typeof testOfframp>, nodes: unknown[]): Promise<Runtime> {
    // one probe type per side, so each side's log is its own
    const left = { ...probeOnramp(logs.left), name: 'left-probe' };
    const right = { ...probeOnramp(logs.right), name: 'right-probe' };
    const rt = new Runtime({ registries: registriesWith([left, right], [sink]), logger: createLogger('silent') });
    await rt.start();
    const ids = (nodes as { id: string }[]).map((n) => n.id);
    const links: Record<string, string[]> = { in: [ids[0]] };
    ids.forEach((id, i) => (links[id] = [ids[i + 1] ?? 'out']));
    rt.publish('onramp', { id: 'left', type: 'left-probe', config: { count: LEFT } });
    rt.publish('onramp', { id: 'right', type: 'right-probe', config: { count: RIGHT, data: { side: 'right' } } });
    rt.publish('pipeline', { id: 'p', interface: { inputs: ['in'], outputs: ['out'] }, nodes, links });
    rt.publish('offramp', { id: 'dst', type: sink.name });
    rt.publish('binding', {
      id: 'two',
      links: {
        '/onramp/left/{instance}/out': ['/pipeline/p/{instance}/in'],
        '/onramp/right/{instance}/out': ['/pipeline/p/{instance}/in'],
        '/pipeline/p/{instance}/out': ['/offramp/dst/{instance}/in'],
      },
    });
    await rt.activate('binding', 'two', 'main', {});
    return rt;
  }

  it('a sink failing odd ids: each onramp gets the acks of its even ids and the fails of its odd ids, no other', async () => {
    const logs = { left: { read: 0, acks: [], fails: [] } as ProbeLog, right: { read: 0, acks: [], fails: [] } as ProbeLog };
    const failOdd = testOfframp('fail-odd', (event) => {
      if (idOf(event) % 2 === 1) throw new Error(`refusing odd id ${idOf(event)}`);
    });
    runtime = await start(logs, failOdd, [{ id: 'pass', type: 'passthrough' }]);
    const settled = (log: ProbeLog, count: number) => log.acks.length + log.fails.length >= count;
    await eventually(() => settled(logs.left, LEFT) && settled(logs.right, RIGHT), 5000, 'an ack or fail for every event');
    await runtime.shutdown();
    runtime = undefined;

    const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
    expect(sorted(logs.left.acks)).to.deep.equal(range(1, LEFT).filter((n) => n % 2 === 0));
    expect(sorted(logs.left.fails)).to.deep.equal(range(1, LEFT).filter((n) => n % 2 === 1));
    expect(sorted(logs.right.acks)).to.deep.equal(range(1, RIGHT).filter((n) => n % 2 === 0));
    expect(sorted(logs.right.fails)).to.deep.equal(range(1, RIGHT).filter((n) => n % 2 === 1));
  });

  it('through a qos::wal: each onramp gets one ack per event it sent, once the WAL stored it, and the sink gets every event once', async () => {
    const logs = { left: { read: 0, acks: [], fails: [] } as ProbeLog, right: { read: 0, acks: [], fails: [] } as ProbeLog };
    const received: string[] = [];
    // the sink fails each event the first time it sees it: the WAL replays it, the sources never hear of it
    const seen = new Set<string>();
    const flaky = testOfframp('flaky', (event) => {
      const key = `${(event.data as { side?: string }).side ?? 'left'}:${idOf(event)}`;
      if (!seen.has(key)) {
        seen.add(key);
        throw new Error(`first delivery of ${key} refused`);
      }
      received.push(key);
    });
    runtime = await start(logs, flaky, [{ id: 'wal', type: 'qos::wal', config: { read_count: 8, max_elements: 1000, dir: join(dir, 'wal') } }]);
    await eventually(() => received.length >= LEFT + RIGHT, 10000, 'every event past the flaky sink');
    await runtime.shutdown();
    runtime = undefined;

    expect([...logs.left.acks].sort((a, b) => a - b)).to.deep.equal(range(1, LEFT));
    expect([...logs.right.acks].sort((a, b) => a - b)).to.deep.equal(range(1, RIGHT));
    expect(logs.left.fails).to.deep.equal([]);
    expect(logs.right.fails).to.deep.equal([]);
    const expected = [...range(1, LEFT).map((n) => `left:${n}`), ...range(1, RIGHT).map((n) => `right:${n}`)];
    expect([...received].sort()).to.deep.equal(expected.sort());
  });
});
