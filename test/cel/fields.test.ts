import { expect } from 'chai';
import { parse } from '@bufbuild/cel';
import { eventFields } from '../../src/pipeline/cel/fields';
import { LazyCelScope, compileCel } from '../../src/pipeline/cel/engine';

/**
 * eventFields (src/pipeline/cel/fields.ts): the top-level fields of `event`
 * an expression reads, or undefined when it may read the whole event.
 * runtime::cel gives an expression only those fields of an undecoded frame,
 * so a field missed here would read as absent: every "fields" answer is
 * also checked by evaluating on just those fields against the whole event.
 */
const fields = (src: string) => eventFields(parse(src).expr);

const event = { a: 1, b: { c: 'x' }, tags: ['t1', 't2'], n: null, s: 'str', event: 'inner' };

describe('cel: eventFields, the top-level fields an expression reads', () => {
  const reading: [string, string[]][] = [
    ['event.a == 1', ['a']],
    ['has(event.n) ? 1 : 2', ['n']],
    ['event.b.c == "x" && event.a > 0', ['b', 'a']],
    ['"t1" in event.tags', ['tags']],
    ['event.tags.exists(t, t == "t2")', ['tags']],
    ['event.tags.map(x, x + event.s)', ['tags', 's']],
    ['{"k": event.a, "l": [event.s]}', ['a', 's']],
    ['meta.x == 1 || true', []],
    ['event.event', ['event']],
    ['[1, 2].all(e, e > 0) && event.a == 1', ['a']],
  ];
  for (const [src, want] of reading) {
    it(`${src}: reads ${JSON.stringify(want)}, and gives on just those what it gives on the whole event`, () => {
      expect(fields(src)).to.deep.equal(want);
      const only = Object.fromEntries(want.filter((k) => k in event).map((k) => [k, (event as Record<string, unknown>)[k]]));
      const program = compileCel(src);
      const meta = { x: 1 };
      expect(program.evaluateJson(new LazyCelScope(only, meta))).to.deep.equal(program.evaluateJson(new LazyCelScope(event, meta)));
    });
  }

  const whole = [
    'event',
    'size(event)',
    'event["a"]',
    '"a" in event',
    'has(event.b) && event == {}',
    'event.tags.exists(event, event == "t1")',
    '[1].map(event, event)',
    'dyn(event).a',
  ];
  for (const src of whole) {
    it(`${src}: may read the whole event`, () => {
      expect(fields(src)).to.equal(undefined);
    });
  }
});
