import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EddyEvent } from '../../../src/core/event';
import type { OfframpContext } from '../../../src/connectors/connector';
import { eventually } from '../../helpers/runtime';
import { type Flow, type ProbeLog, idOf, probeOnramp, range, registriesWith, startFlow, testOfframp } from './helpers';

describe('delivery: a sink that triggers the circuit breaker, then restores it', () => {
  let dir: string;
  let flow: Flow | undefined;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'eddy-cb-'))));
  afterEach(async () => {
    await flow?.stop();
    flow = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  /** A sink that triggers when it gets event `at`, and restores when the test says so. */
  function gateSink(at: number) {
    const received: number[] = [];
    let sinkCtx: OfframpContext | undefined;
    const type = testOfframp('gate', (event: EddyEvent, ctx: OfframpContext) => {
      received.push(idOf(event));
      if (received.length === at) {
        sinkCtx = ctx;
        ctx.trigger();
      }
    });
    return { type, received, restore: () => sinkCtx!.restore() };
  }

  it('stops the source from reading while triggered, resumes on restore, and loses nothing', async () => {
    const log: ProbeLog = { read: 0, acks: [], fails: [] };
    const gate = gateSink(30);
    flow = await startFlow({
      registries: registriesWith([probeOnramp(log)], [gate.type]),
      onramp: { type: 'probe', config: { count: 100 } },
      offramp: { type: 'gate' },
    });
    const breaker = flow.runtime.onramp(flow.onramp)!.runtime.breaker;
    // every change of the breaker, with how much the source had read when it happened
    const changes: [boolean, number][] = [];
    const watch = breaker.changes.subscribe((open) => changes.push([open, log.read]));
    await eventually(() => gate.received.length >= 30, 5000, 'the trigger');
    // the source read nothing after the event that triggered the breaker: it reads only while the
    // breaker is open (checked before each event), and the breaker has stayed shut since event 30
    expect(log.read).to.equal(30);
    expect(gate.received).to.deep.equal(range(1, 30));
    expect(breaker.isOpen).to.equal(false);
    expect(breaker.holders()).to.deep.equal(['/offramp/dst/main']);

    gate.restore();
    await eventually(() => gate.received.length >= 100, 5000, 'the rest after restore');
    watch.unsubscribe();
    // open at start, shut at event 30 with nothing read since, open again on restore
    expect(changes).to.deep.equal([
      [true, 0],
      [false, 30],
      [true, 30],
    ]);
    expect(breaker.isOpen).to.equal(true);
    await eventually(() => log.acks.length >= 100, 5000, 'every ack');
    // shutdown finishes the sends in flight and ends the flow: an extra delivery would be counted by now
    await flow.stop();
    expect(gate.received).to.deep.equal(range(1, 100));
    expect(log.acks).to.deep.equal(range(1, 100));
    expect(log.fails).to.deep.equal([]);
  });

  it('with qos::wal in between, the source keeps reading into the log while the sink is triggered; the log sends the rest on restore', async () => {
    const log: ProbeLog = { read: 0, acks: [], fails: [] };
    const gate = gateSink(30);
    flow = await startFlow({
      registries: registriesWith([probeOnramp(log)], [gate.type]),
      onramp: { type: 'probe', config: { count: 100 } },
      nodes: [{ id: 'wal', type: 'qos::wal', config: { read_count: 10, max_elements: 1000, dir: join(dir, 'wal') } }],
      offramp: { type: 'gate' },
    });
    await eventually(() => gate.received.length >= 30 && log.acks.length >= 100, 5000, 'the trigger and every event stored');
    expect(log.read).to.equal(100);
    expect(flow.runtime.onramp(flow.onramp)!.runtime.breaker.isOpen).to.equal(true);
    // the WAL sends from its log in the same turn as it acks a stored batch, so once all 100 are acked
    // an event it sent while its output was triggered has reached the sink already
    expect(gate.received).to.deep.equal(range(1, 30));

    gate.restore();
    await eventually(() => gate.received.length >= 100, 5000, 'the rest after restore');
    // shutdown finishes the sends in flight and ends the flow: a duplicate would be counted by now
    await flow.stop();
    expect(gate.received).to.deep.equal(range(1, 100));
  });
});
