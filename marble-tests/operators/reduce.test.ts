import { expect } from 'chai';
import { map } from 'rxjs';
import type { EddyEvent, PortEvent } from '../../src/core/event';
import { reduce, reduceNode, type ReduceConfig } from '../../src/pipeline/operators/reduce';
import { UID, ev, testContext, testScheduler } from './helpers';

/** Runs the node over the events (one per frame) and returns what it emitted. */
function run(config: ReduceConfig, events: EddyEvent[], marble?: string): PortEvent[] {
  const s = testScheduler();
  const outs: PortEvent[] = [];
  s.run(({ cold }) => {
    const values = Object.fromEntries(events.map((e, i) => [String.fromCharCode(97 + i), e]));
    reduceNode(config, testContext(s, 'r'))
      .apply(cold(marble ?? `${Object.keys(values).join('')}|`, values))
      .subscribe((o) => outs.push(o));
  });
  return outs;
}

describe('generic::reduce', () => {
  it('ends a reduction at ends_when (the event included) and merges fields by strategy', () => {
    const config: ReduceConfig = {
      ends_when: 'event.end',
      merge: { msg: { strategy: 'concat', separator: '|' }, n: 'sum', lo: 'min', hi: 'max', tags: 'array', last: 'last' },
    };
    const outs = run(config, [
      ev(1, { msg: 'a', n: 1, lo: 5, hi: 5, tags: 'x', last: 1, end: false, keep: 'first' }),
      ev(2, { msg: 'b', n: 9007199254740993n, lo: 2, hi: 9, tags: 'y', last: 2, end: false, keep: 'second' }),
      ev(3, { msg: 'c', n: 1, lo: 3, hi: 1, tags: 'z', last: 3, end: true }),
      ev(4, { msg: 'd', n: 1, lo: 0, hi: 0, tags: 'w', last: 4, end: false }),
    ]);
    expect(outs.map((o) => [o.port, o.event.data])).to.deep.equal([
      ['out', { msg: 'a|b|c', n: 9007199254740995n, lo: 2, hi: 9, tags: ['x', 'y', 'z'], last: 3, end: false, keep: 'first' }],
      ['out', { msg: 'd', n: 1, lo: 0, hi: 0, tags: ['w'], last: 4, end: false }],
    ]);
    expect(outs[0].event.meta).to.deep.equal({ reduced: 3 });
  });

  it('emits at max_events, and emits what is open when the input completes', () => {
    const outs = run({ max_events: 2, merge: { n: 'sum' } }, [ev(1, { n: 1 }), ev(2, { n: 2 }), ev(3, { n: 4 })]);
    expect(outs.map((o) => o.event.data)).to.deep.equal([{ n: 3 }, { n: 4 }]);
  });

  it('gives the reduced event an id of its own that tracks every member, transactional when any was', () => {
    const outs = run({ max_events: 2 }, [ev(1, { n: 1 }), { ...ev(2, { n: 2 }), transactional: true, opMeta: { 7: 'wal' } }]);
    expect(outs[0].event.id).to.deep.equal({ uid: UID, seq: 1 });
    expect(outs[0].event.tracked).to.deep.equal([
      { uid: 1, seq: 1 },
      { uid: 1, seq: 2 },
    ]);
    expect(outs[0].event.transactional).to.equal(true);
    expect(outs[0].event.opMeta).to.deep.equal({ 7: 'wal' });
  });

  /** Runs the node over a cold marble in virtual time and compares `port` and data per emission. */
  function expectReduced(config: ReduceConfig, input: string, values: Record<string, EddyEvent>, expected: string, outputs: Record<string, unknown>): void {
    const s = testScheduler();
    s.run(({ cold, expectObservable }) => {
      const node = reduceNode(config, testContext(s, 'r'));
      expectObservable(node.apply(cold(input, values)).pipe(map(({ port, event }) => ({ port, data: event.data })))).toBe(expected, outputs);
    });
  }

  it('ends the open reduction before an event for which starts_when holds: the starting event opens the next one', () => {
    const config: ReduceConfig = { starts_when: 'event.s', merge: { v: 'array' } };
    const values = { a: ev(1, { s: true, v: 1 }), b: ev(2, { s: false, v: 2 }), c: ev(3, { s: true, v: 3 }), d: ev(4, { s: false, v: 4 }) };
    // c closes [a, b] as it arrives, and is the first of [c, d]
    expectReduced(config, 'a-b-c-d-|', values, '----X---(Y|)', {
      X: { port: 'out', data: { s: true, v: [1, 2] } },
      Y: { port: 'out', data: { s: true, v: [3, 4] } },
    });
  });

  it('counts the quiet timeout from the last event of the reduction, not from its first', () => {
    const config: ReduceConfig = { timeout: 10, merge: { v: 'array' } };
    const values = { a: ev(1, { v: 1 }), b: ev(2, { v: 2 }), c: ev(3, { v: 3 }) };
    // a at 0, b at 5, c at 14: never 10 ms apart, so one reduction, emitted 10 ms after c (at 24)
    expectReduced(config, 'a----b--------c--------------|', values, '------------------------X----|', {
      X: { port: 'out', data: { v: [1, 2, 3] } },
    });
    // 10 ms after b it is emitted; c, 11 ms after b, opens the next one
    expectReduced(config, 'a----b----------c--|', values, '---------------X---(Y|)', {
      X: { port: 'out', data: { v: [1, 2] } },
      Y: { port: 'out', data: { v: [3] } },
    });
  });

  it('sends an event of a new group past max_groups to overflow, and a failing expression to err', () => {
    const outs = run({ group_by: { h: 'event.h' }, max_groups: 1, starts_when: 'event.s' }, [
      ev(1, { h: 1, s: true }),
      ev(2, { h: 2, s: true }),
      ev(3, { h: 1 }),
    ]);
    expect(outs.map((o) => [o.port, o.event.data, o.event.meta.error])).to.deep.equal([
      ['overflow', { h: 2, s: true }, undefined],
      ['err', { h: 1 }, 'generic::reduce node r: starts_when: field not found: s'],
      ['out', { h: 1, s: true }, undefined],
    ]);
  });

  it('keeps groups apart whose keys print alike: the number 5, the big integer 5 and the string "5" are three hosts', () => {
    const outs = run({ group_by: { h: 'event.h' }, merge: { n: 'sum' } }, [
      ev(1, { h: '9007199254740993', n: 1 }),
      ev(2, { h: 9007199254740993n, n: 2 }),
      ev(3, { h: '9007199254740993', n: 4 }),
    ]);
    expect(outs.map((o) => o.event.data)).to.deep.equal([
      { h: '9007199254740993', n: 5 },
      { h: 9007199254740993n, n: 2 },
    ]);
  });

  it('refuses a bad config naming the field', () => {
    expect(() => reduce.validate!({ merge: { a: { strategy: 'sum', separator: ',' } } }, 'n')).to.throw(
      'generic::reduce node n: merge.a.separator: only with strategy concat',
    );
    expect(() => reduce.validate!({ ends_when: 'event.' }, 'n')).to.throw('generic::reduce node n: ends_when:');
    expect(() => reduce.validate!({ timeout: 'x' }, 'n')).to.throw('generic::reduce node n: timeout:');
  });
});

describe('generic::reduce saved with its sources (guarantee: exactly_once)', () => {
  it('acks an event once a reduction holds it, its output answers for none, and a stop keeps what is open', () => {
    const s = testScheduler();
    const ctx = testContext(s, 'r');
    const outs: PortEvent[] = [];
    const node = reduceNode({ ends_when: 'event.end', merge: { n: 'sum' } }, ctx);
    node.state!.savedWithSources!();
    const values = { a: ev(1, { n: 1, end: false }), b: ev(2, { n: 2, end: true }), c: ev(3, { n: 4, end: false }) };
    for (const e of Object.values(values)) e.transactional = true;
    s.run(({ cold }) => {
      node.apply(cold('abc|', values)).subscribe((o) => outs.push(o));
    });
    expect(ctx.raised.map((i) => [i.kind, i.event?.id.seq])).to.deep.equal([
      ['ack', 1],
      ['ack', 2],
      ['ack', 3],
    ]);
    // the reduction a-b ended; c's was open at the stop: kept in the state, not emitted
    expect(outs.map((o) => [o.port, o.event.data, o.event.transactional, o.event.tracked])).to.deep.equal([['out', { n: 3, end: false }, false, []]]);
    expect(node.state!.partitions()).to.deep.equal(['']);
    expect(node.state!.snapshot('').size).to.equal(1);
  });
});
