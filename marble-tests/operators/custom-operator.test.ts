import { expect } from 'chai';
import { uppercaseOperator } from '../../examples/custom-operator';
import { TypeRegistry } from '../../src/core/registry';
import type { OperatorType } from '../../src/pipeline/operator';
import { builtinOperators } from '../../src/pipeline/operators';
import { ev, testContext, testScheduler } from './helpers';

describe('custom operator example::uppercase', () => {
  it('should register next to the builtins and work as a plain OperatorFunction', () => {
    const registry = new TypeRegistry<OperatorType<any>>('operator'); // eslint-disable-line @typescript-eslint/no-explicit-any -- holds operator types of different config types, as the runtime's registry does
    for (const t of builtinOperators) registry.register(t.name, t);
    registry.register(uppercaseOperator.name, uppercaseOperator);
    expect(registry.has('example::uppercase')).to.equal(true);

    const s = testScheduler();
    s.run(({ cold, expectObservable, expectSubscriptions }) => {
      const made = uppercaseOperator.create({ field: 'msg' }, testContext(s));
      if (typeof made !== 'function') throw new Error('expected an OperatorFunction');
      const a = ev(1, { msg: 'hello', n: 1 });
      const b = ev(2, { msg: 3 });
      const e1 = cold('-a-b-|', { a, b });
      const e1subs = ' ^----!';
      expectObservable(e1.pipe(made)).toBe('-A-B-|', { A: { ...a, data: { msg: 'HELLO', n: 1 } }, B: b });
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    });
  });
});
