/** Shared fixtures of the operator marble tests. */
import { expect } from 'chai';
import { TestScheduler } from 'rxjs/testing';
import type { EddyEvent, Insight } from '../../src/core/event';
import type { OperatorContext } from '../../src/pipeline/operator';

export const UID = 1000;
export const PIPELINE = '/pipeline/p/01';

/** A TestScheduler asserting with chai's deep equality (bigints included). */
export function testScheduler(): TestScheduler {
  return new TestScheduler((actual, expected) => {
    expect(actual).to.deep.equal(expected);
  });
}

/** A plain event from onramp uid 1. */
export function ev(seq: number, data: unknown = { n: seq }, extra: Partial<EddyEvent> = {}): EddyEvent {
  return {
    id: { uid: 1, seq },
    data,
    meta: {},
    ingestNs: BigInt(seq) * 1_000_000n,
    originUri: 'test://host/in',
    isBatch: false,
    transactional: false,
    ...extra,
  };
}

/** An operator context whose raised insights are collected in `raised`. */
export function testContext(scheduler: TestScheduler, nodeId = 'op'): OperatorContext & { raised: Insight[] } {
  const raised: Insight[] = [];
  return { nodeId, pipelineUrl: PIPELINE, uid: UID, scheduler, raised, insight: (i) => raised.push(i) };
}
