import { expect } from 'chai';
import { Subject } from 'rxjs';
import type { TestScheduler } from 'rxjs/testing';
import { createLogger } from '../../src/core/logger';
import type { EddyEvent, EventId } from '../../src/core/event';
import { CircuitBreaker } from '../../src/contraflow/circuit-breaker';
import { pullLoop } from '../../src/connectors/_shared/pull-loop';
import { OnrampRuntime } from '../../src/ramps/onramp';
import { OfframpRuntime } from '../../src/ramps/offramp';
import type { Frame } from '../../src/connectors/connector';
import { json } from '../../src/codecs/json';
import { Registries } from '../../src/runtime/registries';
import { PipelineRuntime } from '../../src/pipeline/pipeline';
import { testScheduler } from '../helpers';

const logger = createLogger('silent');
const ramp = (url: string, uid: number) => ({ url, uid, hostname: 'test', logger, requestExit: () => undefined });

describe('circuit breaker', () => {
  let scheduler: TestScheduler;
  beforeEach(() => (scheduler = testScheduler()));

  it('pauses a pull source while triggered and resumes on restore, reading every item exactly once', () => {
    scheduler.run(({ cold, expectObservable }) => {
      const breaker = new CircuitBreaker();
      let next = 0;
      // one item per frame, five items, then done
      const source = pullLoop<number>(
        breaker,
        (subscriber) => {
          subscriber.next(next++);
          return next === 5 ? 'done' : 1;
        },
        undefined,
        scheduler,
      );
      cold('--t----r', { t: 'trigger', r: 'restore' }).subscribe((kind) =>
        kind === 'trigger' ? breaker.trigger('/offramp/slow/one') : breaker.restore('/offramp/slow/one'),
      );
      expectObservable(source).toBe('ab-----cd(e|)', { a: 0, b: 1, c: 2, d: 3, e: 4 });
    });
  });

  it('stays closed until every part that triggered it has restored', () => {
    scheduler.run(({ cold, expectObservable }) => {
      const breaker = new CircuitBreaker();
      cold('-a-b-A-B', { a: 'a', b: 'b', A: 'A', B: 'B' }).subscribe((x) => (x === x.toLowerCase() ? breaker.trigger(x) : breaker.restore(x.toLowerCase())));
      expectObservable(breaker.changes).toBe('tf-----t', { t: true, f: false });
    });
  });
});

describe('acks and fails travel back to the onramp that read the event', () => {
  it('routes ack and fail through the pipeline to the right onramp and event id, and trigger/restore to every onramp', async () => {
    const scheduler = testScheduler();
    const acks: Record<string, string[]> = { left: [], right: [] };
    const onramp = (name: string, uid: number, frames: Subject<Frame>) => {
      const breaker = new CircuitBreaker();
      const runtime = new OnrampRuntime({
        ctx: ramp(`/onramp/${name}/one`, uid),
        breaker,
        source: {
          frames,
          transactional: true,
          onAck: (id: EventId) => acks[name].push(`ack ${id.uid}:${id.seq}`),
          onFail: (id: EventId) => acks[name].push(`fail ${id.uid}:${id.seq}`),
        },
        codec: json.create(),
        preprocessors: () => [],
      });
      return { runtime, breaker };
    };
    const leftFrames = new Subject<Frame>();
    const rightFrames = new Subject<Frame>();
    const left = onramp('left', 1, leftFrames);
    const right = onramp('right', 2, rightFrames);
    const pipeline = new PipelineRuntime(
      { id: 'p', interface: {}, nodes: [{ id: 'pass', type: 'passthrough' }], links: { in: ['pass'], pass: ['out'] } },
      { url: '/pipeline/p/one', operators: Registries.withBuiltins().operators, scheduler, logger, nextUid: () => 99 },
    );
    pipeline.start();
    // a sink that fails every event whose data is odd
    const offramp = new OfframpRuntime({
      ctx: ramp('/offramp/sink/one', 3),
      codec: json.create(),
      postprocessors: [],
      autoAck: true,
      maxInFlight: 10,
      createSink: () => ({
        send: (_payloads: Buffer[], event: EddyEvent) => {
          if ((event.data as number) % 2 === 1) throw new Error('odd');
        },
      }),
    });
    await offramp.start();
    for (const o of [left, right]) {
      pipeline.addSource(o.runtime);
      o.runtime.out$.subscribe(pipeline.input('in'));
    }
    pipeline.output('out').subscribe(offramp.connect(pipeline));

    const frame = (n: number): Frame => ({ stream: 0, data: Buffer.from(String(n)), originUri: 'svc-test://x' });
    leftFrames.next(frame(2));
    rightFrames.next(frame(3));
    leftFrames.next(frame(5));
    rightFrames.next(frame(4));
    expect(acks).to.deep.equal({ left: ['ack 1:1', 'fail 1:2'], right: ['fail 2:1', 'ack 2:2'] });

    // a restore by a part that never triggered changes nothing; a trigger reaches both onramps
    pipeline.contraflow({ kind: 'trigger', from: '/offramp/sink/one' });
    expect([left.breaker.isOpen, right.breaker.isOpen]).to.deep.equal([false, false]);
    pipeline.contraflow({ kind: 'restore', from: '/offramp/other/one' });
    expect(left.breaker.isOpen).to.equal(false);
    pipeline.contraflow({ kind: 'restore', from: '/offramp/sink/one' });
    expect([left.breaker.isOpen, right.breaker.isOpen]).to.deep.equal([true, true]);
  });

  it('acks every member of a batch at the onramps that read them', () => {
    const seen: string[] = [];
    const breaker = new CircuitBreaker();
    const runtime = new OnrampRuntime({
      ctx: ramp('/onramp/in/one', 7),
      breaker,
      source: { frames: new Subject<Frame>(), onAck: (id: EventId) => seen.push(`${id.uid}:${id.seq}`) },
      codec: json.create(),
      preprocessors: () => [],
    });
    const batch = {
      id: { uid: 500, seq: 1 },
      tracked: [
        { uid: 7, seq: 1 },
        { uid: 8, seq: 1 },
        { uid: 7, seq: 2 },
      ],
      data: [],
      meta: {},
      ingestNs: 0n,
      originUri: '',
      isBatch: true,
      transactional: true,
    };
    runtime.contraflow({ kind: 'ack', event: batch, from: '/offramp/x/one' });
    expect(seen).to.deep.equal(['7:1', '7:2']);
  });

  it('triggers the sources while an async sink has too many sends in flight, and restores once they drain', async () => {
    const scheduler = testScheduler();
    const pipeline = new PipelineRuntime(
      { id: 'p', interface: {}, nodes: [], links: { in: ['out'] } },
      { url: '/pipeline/p/one', operators: Registries.withBuiltins().operators, scheduler, logger, nextUid: () => 99 },
    );
    pipeline.start();
    const gates: string[] = [];
    pipeline.addSource({ url: '/onramp/x/one', contraflow: (i) => gates.push(i.kind) });
    const release: (() => void)[] = [];
    const offramp = new OfframpRuntime({
      ctx: ramp('/offramp/slow/one', 3),
      codec: json.create(),
      postprocessors: [],
      autoAck: true,
      maxInFlight: 4,
      createSink: () => ({ send: () => new Promise<void>((resolve) => release.push(resolve)) }),
    });
    await offramp.start();
    pipeline.output('out').subscribe(offramp.connect(pipeline));
    const event = (n: number): EddyEvent => ({
      id: { uid: 1, seq: n },
      data: n,
      meta: {},
      ingestNs: 0n,
      originUri: '',
      isBatch: false,
      transactional: false,
    });
    for (let n = 1; n <= 4; n++) pipeline.input('in').next(event(n));
    expect(gates).to.deep.equal(['trigger']);
    release.shift()!();
    await new Promise((r) => setImmediate(r));
    expect(gates).to.deep.equal(['trigger']);
    release.shift()!();
    await new Promise((r) => setImmediate(r));
    expect(gates).to.deep.equal(['trigger', 'restore']);
  });
});
