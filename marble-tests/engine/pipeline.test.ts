import { expect } from 'chai';
import { map } from 'rxjs';
import type { TestScheduler } from 'rxjs/testing';
import { createLogger } from '../../src/core/logger';
import type { EddyEvent, Insight } from '../../src/core/event';
import { Registries } from '../../src/runtime/registries';
import { PipelineRuntime } from '../../src/pipeline/pipeline';
import type { StoredPipeline } from '../../src/pipeline/graph';
import type { OperatorType } from '../../src/pipeline/operator';
import { ev, testScheduler } from '../helpers';

function pipeline(artefact: StoredPipeline, scheduler: TestScheduler, registries = Registries.withBuiltins()): PipelineRuntime {
  let uid = 1000;
  const p = new PipelineRuntime(artefact, {
    url: '/pipeline/test/one',
    operators: registries.operators,
    scheduler,
    logger: createLogger('silent'),
    nextUid: () => ++uid,
  });
  p.start();
  return p;
}

const a = ev(1, 1, 'a');
const b = ev(1, 2, 'b');
const c = ev(2, 1, 'c');

describe('pipeline graph compiled to RxJS', () => {
  let scheduler: TestScheduler;
  beforeEach(() => (scheduler = testScheduler()));

  it('counts what a node emits on a port no link takes (direction unlinked), and only that', () => {
    const p = pipeline(
      {
        id: 'late',
        interface: { inputs: ['in'], outputs: ['out'] },
        nodes: [{ id: 'w', type: 'window::aggregate', config: { window: { size: 10 }, time: 'event.ts', aggregate: { n: 'count()' } } }],
        links: { in: ['w'], w: ['out'] },
      },
      scheduler,
    );
    const outs: EddyEvent[] = [];
    p.output('out').subscribe((e) => outs.push(e));
    // 25 closes [0, 10); 3 is then late, and `late` is linked nowhere; 'x' is no time (err, linked nowhere)
    for (const [seq, ts] of [
      [1, 3],
      [2, 25],
      [3, 3],
      [4, 'x'],
    ] as const)
      p.input('in').next(ev(1, seq, { ts }));
    expect(outs.map((e) => e.data)).to.deep.equal([{ n: 1 }]);
    expect(p.counts.get('w|unlinked|late')).to.deep.equal({ count: 1 });
    expect(p.counts.get('w|unlinked|err')).to.deep.equal({ count: 1 });
    expect(p.counts.has('w|unlinked|out')).to.equal(false);
  });

  it('fans out: an event linked to two nodes leaves once through each', () => {
    scheduler.run(({ hot, expectObservable }) => {
      const p = pipeline(
        {
          id: 'fan',
          interface: { inputs: ['in'], outputs: ['out'] },
          nodes: [
            { id: 'left', type: 'passthrough' },
            { id: 'right', type: 'passthrough' },
          ],
          links: { in: ['left', 'right'], left: ['out'], right: ['out'] },
        },
        scheduler,
      );
      hot('  --a---b--|', { a, b }).subscribe(p.input('in'));
      expectObservable(p.output('out')).toBe('--(aa)(bb)', { a, b });
    });
  });

  it('fans in: two inputs merge into one node in arrival order, and an input completing does not complete the pipeline', () => {
    scheduler.run(({ hot, expectObservable }) => {
      const p = pipeline(
        {
          id: 'fanin',
          interface: { inputs: ['left', 'right'], outputs: ['out'] },
          nodes: [{ id: 'join', type: 'passthrough' }],
          links: { left: ['join'], right: ['join'], join: ['out'] },
        },
        scheduler,
      );
      hot('-a----b-|', { a, b }).subscribe(p.input('left'));
      hot('---c-----', { c }).subscribe(p.input('right'));
      expectObservable(p.output('out')).toBe('-a-c--b--', { a, b, c });
    });
  });

  it('merges the streams of several sources linked to one input (a binding merge)', () => {
    scheduler.run(({ hot, expectObservable }) => {
      const p = pipeline(
        {
          id: 'merge',
          interface: { inputs: ['in'], outputs: ['out'] },
          nodes: [],
          links: { in: ['out'] },
        },
        scheduler,
      );
      hot('a---b|', { a, b }).subscribe(p.input('in'));
      hot('--c--', { c }).subscribe(p.input('in'));
      expectObservable(p.output('out')).toBe('a-c-b', { a, b, c });
    });
  });

  it('routes the ports of a ported operator to their links and drops unlinked ports', () => {
    const registries = Registries.withBuiltins();
    const split: OperatorType = {
      name: 'test::split',
      create: () => ({
        apply: (input) => input.pipe(map((event) => ({ port: event.data === 'b' ? 'odd' : event.data === 'c' ? 'nowhere' : 'out', event }))),
      }),
    };
    registries.operators.register(split.name, split);
    scheduler.run(({ hot, expectObservable }) => {
      const p = pipeline(
        {
          id: 'ports',
          interface: { inputs: ['in'], outputs: ['out', 'side'] },
          nodes: [{ id: 'split', type: 'test::split' }],
          links: { in: ['split'], split: ['out'], 'split/odd': ['side'] },
        },
        scheduler,
        registries,
      );
      hot('-a-b-c-', { a, b, c }).subscribe(p.input('in'));
      expectObservable(p.output('out')).toBe('-a-----', { a });
      expectObservable(p.output('side')).toBe('---b---', { b });
    });
  });

  it('runs contraflow back through operators in reverse order, then to every source', () => {
    const registries = Registries.withBuiltins();
    const seen: string[] = [];
    const tagging = (name: string, swallow = false): OperatorType => ({
      name,
      create: () => ({
        apply: (input) => input.pipe(map((event) => ({ port: 'out', event }))),
        onInsight: (insight: Insight) => {
          seen.push(`${name}:${insight.kind}`);
          return swallow && insight.kind === 'restore' ? null : insight;
        },
      }),
    });
    registries.operators.register('test::first', tagging('test::first'));
    registries.operators.register('test::second', tagging('test::second', true));
    const p = pipeline(
      {
        id: 'contra',
        interface: {},
        nodes: [
          { id: 'one', type: 'test::first' },
          { id: 'two', type: 'test::second' },
        ],
        links: { in: ['one'], one: ['two'], two: ['out'] },
      },
      testScheduler(),
      registries,
    );
    const received: Insight[] = [];
    p.addSource({ url: '/onramp/x/one', contraflow: (i) => received.push(i) });
    p.addSource({ url: '/onramp/y/one', contraflow: (i) => received.push(i) });
    p.contraflow({ kind: 'ack', event: a, from: '/offramp/o/one' });
    p.contraflow({ kind: 'restore', from: '/offramp/o/one' });
    expect(seen).to.deep.equal(['test::second:ack', 'test::first:ack', 'test::second:restore']);
    expect(received.map((i) => i.kind)).to.deep.equal(['ack', 'ack']);
  });
});
