import { expect } from 'chai';
import { existsSync, fstatSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventually } from '../../helpers/runtime';
import { type Flow, type ProbeLog, probeOnramp, range, registriesWith, startFlow } from './helpers';

const COUNT = 2000;
/** the byte offset just after the line of event `id` (`{"id":n}\n` lines, ids from 1) */
const endOf = (id: number): number => range(1, id).reduce((sum, n) => sum + `{"id":${n}}\n`.length, 0);

/** A probe log whose `acks.push` first runs `check` on each acked seq. */
function checkedLog(check: (seq: number) => void): ProbeLog {
  const log: ProbeLog = { read: 0, acks: [], fails: [] };
  const push = log.acks.push.bind(log.acks);
  log.acks.push = (...seqs: number[]) => {
    for (const seq of seqs) check(seq);
    return push(...seqs);
  };
  return log;
}

describe('delivery: the file offramp acks an event once its bytes are where it promised', () => {
  let dir: string;
  let flow: Flow | undefined;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'eddy-file-ack-'))));
  afterEach(async () => {
    await flow?.stop();
    flow = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  it('acks each event only when its line is in the file (the write callback), not when it is buffered', async () => {
    const file = join(dir, 'out.json');
    const early: number[] = [];
    const log = checkedLog((seq) => {
      const size = existsSync(file) ? readFileSync(file).length : 0;
      if (size < endOf(seq)) early.push(seq);
    });
    flow = await startFlow({
      registries: registriesWith([probeOnramp(log)], []),
      onramp: { type: 'probe', config: { count: COUNT } },
      offramp: { type: 'file', config: { file } },
    });
    await eventually(() => log.acks.length >= COUNT, 10000, 'every ack');
    expect(early, 'acked before written').to.deep.equal([]);
    expect(log.acks).to.deep.equal(range(1, COUNT));
    expect(log.fails).to.deep.equal([]);
  });

  for (const append of [false, true]) {
    it(`append: ${append} ${append ? 'adds the lines after what the file held' : '(the default) truncates a file that exists at activation'}`, async () => {
      const file = join(dir, 'out.json');
      writeFileSync(file, '{"earlier":1}\n');
      const log: ProbeLog = { read: 0, acks: [], fails: [] };
      flow = await startFlow({
        registries: registriesWith([probeOnramp(log)], []),
        onramp: { type: 'probe', config: { count: 3 } },
        offramp: { type: 'file', config: { file, append } },
      });
      await eventually(() => log.acks.length >= 3, 10000, 'every ack');
      const lines = ['{"id":1}', '{"id":2}', '{"id":3}'];
      expect(readFileSync(file, 'utf8')).to.equal([...(append ? ['{"earlier":1}'] : []), ...lines, ''].join('\n'));
    });
  }

  it('fsync: true acks each event only after an fsync that covered its line, with one fsync per flush, not per event', async () => {
    const file = join(dir, 'out.json');
    // watch every fsync of a file handle: the size of the file when it started, recorded once it finished
    const probe = await open(join(dir, 'probe'), 'w');
    const proto = Object.getPrototypeOf(probe) as { sync(): Promise<void> };
    await probe.close();
    // eslint-disable-next-line @typescript-eslint/unbound-method -- called with the handle as this (realSync.call) and put back afterwards
    const realSync = proto.sync;
    const synced: number[] = [];
    proto.sync = async function (this: { fd: number }) {
      const size = fstatSync(this.fd).size;
      await realSync.call(this);
      synced.push(size);
    };
    try {
      const early: number[] = [];
      const log = checkedLog((seq) => {
        if (Math.max(0, ...synced) < endOf(seq)) early.push(seq);
      });
      flow = await startFlow({
        registries: registriesWith([probeOnramp(log)], []),
        onramp: { type: 'probe', config: { count: COUNT } },
        offramp: { type: 'file', config: { file, fsync: true } },
      });
      await eventually(() => log.acks.length >= COUNT, 10000, 'every ack');
      expect(early, 'acked before fsynced').to.deep.equal([]);
      expect(log.acks).to.deep.equal(range(1, COUNT));
      expect(synced.length).to.be.above(0);
      // the probe reads 16 events per step, one step per macrotask: at most one flush, so one fsync, per 16 events
      expect(synced.length).to.be.at.most(COUNT / 16);
    } finally {
      proto.sync = realSync;
    }
  });

  it('a write that fails (/dev/full: no space) fails its events, acks none, and the offramp reports itself down', async function () {
    if (!existsSync('/dev/full')) this.skip();
    const log: ProbeLog = { read: 0, acks: [], fails: [] };
    flow = await startFlow({
      registries: registriesWith([probeOnramp(log)], []),
      onramp: { type: 'probe', config: { count: 40 } },
      offramp: { type: 'file', config: { file: '/dev/full' } },
    });
    const down = () => flow!.runtime.health().instances.find((i) => i.url === '/offramp/dst/main')?.state === 'down';
    // once down, the breaker holds the source, so what it read stops growing and every event of it fails
    await eventually(() => down() && log.read > 0 && log.fails.length === log.read, 5000, 'the offramp down and every event read failed');
    expect(log.acks).to.deep.equal([]);
    expect([...log.fails].sort((a, b) => a - b)).to.deep.equal(range(1, log.read));
    const health = flow.runtime.health();
    expect(health.status).to.equal('unhealthy');
    expect(health.instances.find((i) => i.url === '/offramp/dst/main')).to.deep.equal({
      url: '/offramp/dst/main',
      state: 'down',
      reason: 'the sink is disconnected or full',
    });
  });
});
