import { expect } from 'chai';
import { map } from 'rxjs';
import type { EddyEvent, PortEvent } from '../../src/core/event';
import type { OperatorNode } from '../../src/pipeline/operator';
import { dedupe, dedupeNode } from '../../src/pipeline/operators/dedupe';
import { fnv1a, sample, sampleNode } from '../../src/pipeline/operators/sample';
import { ev, testContext, testScheduler } from './helpers';

const portOf = ({ port, event }: PortEvent) => `${port}:${String((event.data as { k: unknown }).k)}`;

/** Feeds a marble of events through a node in virtual time and compares `port:key` per emission. */
function expectPorts(
  make: (ctx: ReturnType<typeof testContext>) => OperatorNode,
  input: string,
  values: Record<string, EddyEvent>,
  expected: string,
  outputs: Record<string, string>,
): void {
  const s = testScheduler();
  s.run(({ cold, expectObservable }) => {
    expectObservable(make(testContext(s)).apply(cold(input, values)).pipe(map(portOf))).toBe(expected, outputs);
  });
}

const k = (seq: number, key: unknown) => ev(seq, { k: key });

describe('generic::dedupe', () => {
  it('passes the first event of a key and sends repeats within `within` of its first sighting to duplicate', () => {
    // a at 0; its repeat at 4 is a duplicate, at 10 (10 ms after the first, not after the repeat) it passes again
    const values = { a: k(1, 'x'), b: k(2, 'y'), c: k(3, 'x'), d: k(4, 'x'), e: k(5, 1), f: k(6, 1.0) };
    expectPorts((ctx) => dedupeNode({ key: 'event.k', within: 10 }, ctx), 'a-b-c-----d-e-f|', values, 'A-B-C-----D-E-F|', {
      A: 'out:x',
      B: 'out:y',
      C: 'duplicate:x',
      D: 'out:x',
      E: 'out:1',
      F: 'duplicate:1',
    });
  });

  it('forgets the least recently seen key past max_keys', () => {
    const values = { a: k(1, 'a'), b: k(2, 'b'), c: k(3, 'c'), d: k(4, 'a'), e: k(5, 'c') };
    expectPorts((ctx) => dedupeNode({ key: 'event.k', max_keys: 2 }, ctx), 'abcde|', values, 'ABCDE|', {
      A: 'out:a',
      B: 'out:b',
      C: 'out:c',
      D: 'out:a',
      E: 'duplicate:c',
    });
  });

  it('sends an event whose key cannot be evaluated to err, naming the node', () => {
    const s = testScheduler();
    s.run(({ cold, expectObservable }) => {
      const node = dedupeNode({ key: 'event.id' }, testContext(s, 'dd'));
      expectObservable(node.apply(cold('a|', { a: k(1, 'x') })).pipe(map((o) => [o.port, o.event.meta.error]))).toBe('a|', {
        a: ['err', 'generic::dedupe node dd: key: field not found: id'],
      });
    });
  });

  it('refuses a bad config naming the field', () => {
    expect(() => dedupe.validate!({ key: 'event.' }, 'n')).to.throw('generic::dedupe node n: key:');
    expect(() => dedupe.validate!({ key: 'event.k', within: 'soon' }, 'n')).to.throw('generic::dedupe node n: within: "soon" is not a duration');
  });
});

describe('generic::sample', () => {
  it('keeps 1 in N: the 1st, the N+1th, …', () => {
    const values = Object.fromEntries('abcdefg'.split('').map((c, i) => [c, k(i + 1, i + 1)]));
    expectPorts((ctx) => sampleNode({ one_in: 3 }, ctx), 'abcdefg|', values, 'ABCDEFG|', {
      A: 'out:1',
      B: 'dropped:2',
      C: 'dropped:3',
      D: 'out:4',
      E: 'dropped:5',
      F: 'dropped:6',
      G: 'out:7',
    });
  });

  it('with a key, keeps or drops every event of a key alike, by its hash', () => {
    const keys = ['u1', 'u2', 'u3', 'u4', 'u5', 'u6', 'u7', 'u8'];
    const kept = new Set(keys.filter((key) => fnv1a(key) % 2 === 0));
    expect(kept.size, 'the fixture keeps some keys and drops others').to.be.within(1, keys.length - 1);
    const s = testScheduler();
    const outs: string[] = [];
    s.run(({ cold }) => {
      const values = Object.fromEntries([...keys, ...keys].map((key, i) => [String.fromCharCode(97 + i), k(i + 1, key)]));
      sampleNode({ one_in: 2, key: 'event.k' }, testContext(s))
        .apply(cold(`${Object.keys(values).join('')}|`, values))
        .subscribe((o) => outs.push(portOf(o)));
    });
    expect(outs).to.deep.equal([...keys, ...keys].map((key) => `${kept.has(key) ? 'out' : 'dropped'}:${key}`));
  });

  it('keeps at most per_second events a second of scheduler time, per key with a key', () => {
    const values = { a: k(1, 'x'), b: k(2, 'x'), c: k(3, 'y'), d: k(4, 'x'), e: k(5, 'x') };
    // a, b, c and d in second 0; e in second 1
    expectPorts((ctx) => sampleNode({ per_second: 2, key: 'event.k' }, ctx), 'abcd 1s e|', values, 'ABCD 1s E|', {
      A: 'out:x',
      B: 'out:x',
      C: 'out:y',
      D: 'dropped:x',
      E: 'out:x',
    });
  });

  it('keeps keys apart that differ only in type, as dedupe and window::aggregate do: the string "1" and the number 1 are two keys', () => {
    const values = { a: k(1, '1'), b: k(2, 1), c: k(3, 1n), d: k(4, 1.0), e: k(5, '1'), f: k(6, 'null'), g: k(7, null) };
    // one event a second per key: the first of each key passes; c and d are the number 1 again (CEL reads a big
    // integer 1 and 1.0 as the int 1), e the string "1" again; the string "null" and null are two keys too
    expectPorts((ctx) => sampleNode({ per_second: 1, key: 'event.k' }, ctx), 'abcdefg|', values, 'ABCDEFG|', {
      A: 'out:1',
      B: 'out:1',
      C: 'dropped:1',
      D: 'dropped:1',
      E: 'dropped:1',
      F: 'out:null',
      G: 'out:null',
    });
    const s = testScheduler();
    const kept: string[] = [];
    s.run(({ cold }) => {
      sampleNode({ one_in: 2, key: 'event.k' }, testContext(s))
        .apply(cold('abcdefg|', values))
        .subscribe((o) => kept.push(o.port));
    });
    // with one_in, a string key hashes as the string itself
    expect(kept[0], 'the string key "1"').to.equal(fnv1a('1') % 2 === 0 ? 'out' : 'dropped');
    expect(kept[3], 'the number 1.0, the same key as 1').to.equal(kept[1]);
  });

  it('refuses a config without exactly one of one_in and per_second', () => {
    expect(() => sample.validate!({}, 'n')).to.throw('generic::sample node n: give exactly one of one_in and per_second');
    expect(() => sample.validate!({ one_in: 2, per_second: 3 }, 'n')).to.throw('exactly one');
    expect(() => sample.validate!({ one_in: 2, max_keys: 3 }, 'n')).to.throw('max_keys: only with per_second and key');
  });
});
