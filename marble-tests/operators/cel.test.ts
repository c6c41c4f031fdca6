import { celNode } from '../../src/pipeline/operators/cel';
import { ev, testScheduler } from './helpers';

describe('runtime::cel', () => {
  const a = ev(1, { level: 'ERROR', count: 2, user: { name: 'ann', secret: 'x' } }, { meta: { host: 'h1' } });
  const b = ev(2, { level: 'info', count: 7, user: { name: 'bob' } });

  it('should drop events unless the filter is true', () => {
    testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const e1 = cold('-a-b-|', { a, b });
      const e1subs = ' ^----!';
      const node = celNode({ filter: 'event.count > 5' }, 'f');
      expectObservable(node.apply(e1)).toBe('---B-|', { B: { port: 'out', event: b } });
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    });
  });

  it('should set metadata, patch and remove fields, all from the event as it arrived', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const node = celNode(
        {
          meta: { class: 'event.level.lowerAscii() == "error" ? "alert" : "info"', from: 'meta.host' },
          set: { count: 'event.count + 1', 'user.tag': 'event.user.name + "!" ', 'stats.double': 'event.count * 2' },
          remove: ['user.secret'],
        },
        'm',
      );
      expectObservable(node.apply(cold('a|', { a }))).toBe('A|', {
        A: {
          port: 'out',
          event: {
            ...a,
            meta: { host: 'h1', class: 'alert', from: 'h1' },
            data: { level: 'ERROR', count: 3, user: { name: 'ann', tag: 'ann!' }, stats: { double: 4 } },
          },
        },
      });
    });
  });

  it('should route to the port the route expression names', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const node = celNode({ route: 'event.level == "ERROR" ? "alerts" : "out"' }, 'r');
      expectObservable(node.apply(cold('ab|', { a, b }))).toBe('AB|', {
        A: { port: 'alerts', event: a },
        B: { port: 'out', event: b },
      });
    });
  });

  it('should send an event whose evaluation fails to err with the reason in meta error', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const node = celNode({ filter: 'event.missing > 1', set: { x: '1 / 0' } }, 'bad');
      const node2 = celNode({ set: { x: 'event.count / (event.count - 2)' } }, 'div');
      const nonBool = celNode({ filter: 'event.count' }, 'nb');
      expectObservable(node.apply(cold('a|', { a }))).toBe('A|', {
        A: { port: 'err', event: { ...a, meta: { ...a.meta, error: 'runtime::cel node bad: filter: field not found: missing' } } },
      });
      expectObservable(node2.apply(cold('ab|', { a, b }))).toBe('AB|', {
        A: { port: 'err', event: { ...a, meta: { ...a.meta, error: 'runtime::cel node div: set.x: int divide by zero' } } },
        B: { port: 'out', event: { ...b, data: { ...(b.data as object), x: 1 } } },
      });
      expectObservable(nonBool.apply(cold('a|', { a }))).toBe('A|', {
        A: { port: 'err', event: { ...a, meta: { ...a.meta, error: 'runtime::cel node nb: filter: must be a bool, got bigint' } } },
      });
    });
  });
});
