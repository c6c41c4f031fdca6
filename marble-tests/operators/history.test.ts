import { recordHistory } from '../../src/pipeline/operators/history';
import { ev, testScheduler } from './helpers';

describe('debug::history', () => {
  it('should append "evt: <op>(<id>)" to the named meta array', () => {
    testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const a = ev(1, 'x');
      const b = ev(2, 'y', { meta: { trail: ['evt: before(1:2)'], other: true } });
      const e1 = cold('-a-b-|', { a, b });
      const e1subs = '  ^----!';
      const expected = '-x-y-|';
      expectObservable(e1.pipe(recordHistory({ op: 'step', name: 'trail' }))).toBe(expected, {
        x: { ...a, meta: { trail: ['evt: step(1:1)'] } },
        y: { ...b, meta: { trail: ['evt: before(1:2)', 'evt: step(1:2)'], other: true } },
      });
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    });
  });
});
