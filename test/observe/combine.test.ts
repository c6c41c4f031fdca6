import { expect } from 'chai';
import { combineObserved, type ObservedInstance } from '../../src/runtime/observe/observe';

/** One worker's view of the linked ws onramp `/onramp/ws/main`. */
const ws = (closed: Record<string, number>): ObservedInstance => ({
  kind: 'onramp',
  artefact: 'ws',
  instance: 'main',
  url: '/onramp/ws/main',
  state: 'running',
  reason: null,
  breaker: 'closed',
  ports: [{ port: 'out', direction: 'out', events: 5, errors: 0 }],
  closedConnections: closed,
});

describe('combineObserved (one instance run by several workers)', () => {
  it('sums the connections each worker closed, per reason', () => {
    const [combined] = combineObserved([[ws({ unread_replies: 2 })], [ws({ unread_replies: 3, other: 1 })], [ws({})]]);
    expect(combined.closedConnections).to.deep.equal({ unread_replies: 5, other: 1 });
    expect(combined.ports).to.deep.equal([{ port: 'out', direction: 'out', events: 15, errors: 0 }]);
  });
});
