import { expect } from 'chai';
import { counter, countEvents } from '../../src/pipeline/operators/counter';
import { ev, testContext, testScheduler } from './helpers';

describe('generic::counter', () => {
  it('should wrap each value with a count starting at 1, keeping meta', () => {
    testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const a = ev(1, 'x', { meta: { k: 1 } });
      const b = ev(2, 'y');
      const e1 = cold('-a--b-|', { a, b });
      const e1subs = '  ^-----!';
      const expected = '-x--y-|';
      expectObservable(e1.pipe(countEvents())).toBe(expected, {
        x: { ...a, data: { count: 1, event: 'x' } },
        y: { ...b, data: { count: 2, event: 'y' } },
      });
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    });
  });

  it('should start again at 1 for a new subscription and pass errors on', () => {
    testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const a = ev(1, 'x');
      const e1 = cold('-a-#', { a });
      const e1subs = ['^--!', '^--!'];
      const op = countEvents();
      const x = { ...a, data: { count: 1, event: 'x' } };
      expectObservable(e1.pipe(op)).toBe('-x-#', { x });
      expectObservable(e1.pipe(op)).toBe('-x-#', { x });
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    });
  });

  it('should be a plain OperatorFunction as an operator type', () => {
    const made = counter.create({}, testContext(testScheduler()));
    expect(made).to.be.a('function');
  });
});
