import { expect } from 'chai';
import { TestScheduler } from 'rxjs/testing';
import type { EddyEvent } from '../src/core/event';

/** A TestScheduler that deep-compares frames with chai, as RxJS's own observableMatcher does. */
export function testScheduler(): TestScheduler {
  return new TestScheduler((actual, expected) => {
    expect(actual).to.deep.equal(expected);
  });
}

/** A plain event for marble value maps. */
export function ev(uid: number, seq: number, data: unknown, extra: Partial<EddyEvent> = {}): EddyEvent {
  return {
    id: { uid, seq },
    data,
    meta: {},
    ingestNs: 0n,
    originUri: 'svc-test://localhost',
    isBatch: false,
    transactional: false,
    ...extra,
  };
}
