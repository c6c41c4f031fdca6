import { expect } from 'chai';
import { Subject, asyncScheduler } from 'rxjs';
import type { EddyEvent, PortEvent } from '../../src/core/event';
import { MAX_CLASSES, bucketNode } from '../../src/pipeline/operators/bucket';

const event = (cls: string): EddyEvent => ({
  id: { uid: 1, seq: 1 },
  data: null,
  meta: { class: cls, rate: 1 },
  ingestNs: 0n,
  originUri: '',
  isBatch: false,
  transactional: false,
});

describe('grouper::bucket bounds its state', () => {
  it('keeps at most MAX_CLASSES classes: the least recently used one starts afresh', () => {
    const input = new Subject<EddyEvent>();
    const ports: string[] = [];
    const sub = bucketNode(asyncScheduler)
      .apply(input)
      .subscribe((pe: PortEvent) => ports.push(pe.port));
    input.next(event('first')); // rate 1: the first event passes
    input.next(event('first')); // the second overflows
    expect(ports).to.deep.equal(['out', 'overflow']);
    for (let i = 0; i < MAX_CLASSES; i++) input.next(event(`other${i}`));
    ports.length = 0;
    input.next(event('first')); // evicted, so its window is new and the event passes again
    expect(ports).to.deep.equal(['out']);
    input.next(event(`other${MAX_CLASSES - 1}`)); // still kept: overflows
    expect(ports).to.deep.equal(['out', 'overflow']);
    sub.unsubscribe();
  });

  it('keeps a string dimension apart from every other value, "1" from 1 and "null" from none', () => {
    const input = new Subject<EddyEvent>();
    const ports: string[] = [];
    const sub = bucketNode(asyncScheduler)
      .apply(input)
      .subscribe((pe: PortEvent) => ports.push(pe.port));
    const withDimensions = (dimensions: unknown): EddyEvent => ({ ...event('c'), meta: { class: 'c', rate: 1, dimensions } });
    // rate 1: each dimension's first event passes, a second one overflows
    for (const d of ['1', 1, 'null', null, ['1'], '["1"]']) input.next(withDimensions(d));
    expect(ports).to.deep.equal(['out', 'out', 'out', 'out', 'out', 'out']);
    input.next(withDimensions('1'));
    expect(ports[6]).to.equal('overflow');
    sub.unsubscribe();
  });

  it('a fractional cardinality below one keeps one dimension, like windows, instead of failing the stream', () => {
    const input = new Subject<EddyEvent>();
    const ports: string[] = [];
    let failed: unknown;
    const sub = bucketNode(asyncScheduler)
      .apply(input)
      .subscribe({ next: (pe: PortEvent) => ports.push(pe.port), error: (err) => (failed = err) });
    const fractional = (dimension: string): EddyEvent => ({ ...event('c'), meta: { class: 'c', rate: 1, cardinality: 0.5, dimensions: dimension } });
    input.next(fractional('a')); // passes
    input.next(fractional('a')); // the same window: overflows
    input.next(fractional('b')); // evicts a
    input.next(fractional('a')); // a starts afresh
    expect(failed).to.equal(undefined);
    expect(ports).to.deep.equal(['out', 'overflow', 'out', 'out']);
    sub.unsubscribe();
  });

  it('sends an event whose meta rate is no positive number to err, naming what it got: a scalar as its text, a record or a list by its kind', () => {
    const input = new Subject<EddyEvent>();
    const errors: unknown[] = [];
    const sub = bucketNode(asyncScheduler)
      .apply(input)
      .subscribe((pe: PortEvent) => errors.push(pe.port === 'err' ? pe.event.meta.error : pe.port));
    for (const [i, rate] of [-2, 'fast', { per: 1 }, [1]].entries()) input.next({ ...event(`c${i}`), meta: { class: `c${i}`, rate } });
    expect(errors).to.deep.equal([
      'bucket: meta rate must be a positive number, got "-2"',
      'bucket: meta rate must be a positive number, got "fast"',
      'bucket: meta rate must be a positive number, got a record',
      'bucket: meta rate must be a positive number, got a list',
    ]);
    sub.unsubscribe();
  });
});
