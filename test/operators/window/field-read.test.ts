import { expect } from 'chai';
import fc from 'fast-check';
import type { EddyEvent } from '../../../src/core/event';
import { compileCel } from '../../../src/pipeline/cel/engine';
import { EventScope, compileEventExpression } from '../../../src/pipeline/window/expressions';

const event = (data: unknown): EddyEvent => ({
  id: { uid: 1, seq: 1 },
  data,
  meta: {},
  ingestNs: 0n,
  originUri: 'test://',
  isBatch: false,
  transactional: false,
});

/** The value, or the error's message. */
function outcome(f: () => unknown): { value: unknown } | { error: string } {
  try {
    return { value: f() };
  } catch (err) {
    return { error: (err as Error).message };
  }
}

describe('window expressions: the direct read of event.a.b', () => {
  it('gives what the CEL program gives, values and errors alike, for any data', () => {
    const leaf = fc.oneof(
      fc.jsonValue(),
      fc.bigInt(),
      fc.constantFrom(-0, 0, 1.5, Number.MAX_SAFE_INTEGER + 2, undefined, 'x', true),
      fc.constant(new Map<string, unknown>([['b', 1]])),
      fc.constant(Object.assign(Object.create(null) as object, { b: 2 })),
      fc.constant(new Uint8Array([1])),
    );
    const data = fc.oneof(leaf, fc.record({ a: leaf }), fc.record({ a: fc.record({ b: leaf }) }), fc.record({ a: fc.array(leaf, { maxLength: 2 }) }));
    const sources = ['event.a', 'event.a.b', ' event . a . b '];
    fc.assert(
      fc.property(data, fc.constantFrom(...sources), (d, source) => {
        const direct = outcome(() => compileEventExpression(source).evaluate(new EventScope(event(d))));
        const cel = outcome(() => compileCel(source).evaluateJson(new EventScope(event(d))));
        expect(direct, `${source} of ${fc.stringify(d)}`).to.deep.equal(cel);
      }),
      { numRuns: 2000 },
    );
  });

  it('reads nested fields straight from the data', () => {
    const scope = new EventScope(event({ a: { b: 'deep', n: 7, t: false }, s: 'top' }));
    expect(compileEventExpression('event.s').evaluate(scope)).to.equal('top');
    expect(compileEventExpression('event.a.b').evaluate(scope)).to.equal('deep');
    expect(compileEventExpression('event.a.n').evaluate(scope)).to.equal(7);
    expect(compileEventExpression('event.a.t').evaluate(scope)).to.equal(false);
    expect(() => compileEventExpression('event.a.x').evaluate(scope)).to.throw('field not found: x');
  });

  it('still refuses what CEL refuses to compile (a reserved word as a field)', () => {
    expect(() => compileEventExpression('event.in')).to.throw();
  });
});
