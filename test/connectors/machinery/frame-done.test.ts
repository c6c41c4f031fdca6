import { expect } from 'chai';
import { Observable, asyncScheduler } from 'rxjs';
import type { EddyEvent } from '../../../src/core/event';
import { createLogger } from '../../../src/core/logger';
import { CircuitBreaker } from '../../../src/contraflow/circuit-breaker';
import { OnrampRuntime, onrampContext } from '../../../src/ramps/onramp';
import type { Frame, FrameResult, OnrampSource } from '../../../src/connectors/connector';
import { Registries } from '../../../src/runtime/registries';

/**
 * A frame with `done` (the broker onramps' settlement, linked onramps' replies): `done` sees the ids of every event
 * made from it, or its errors, before any of those events goes downstream.
 */
describe('connector machinery: a frame’s done', () => {
  it('sees the ids of all its events before they go downstream, in order; a frame that made none reports its error', () => {
    const registries = Registries.withBuiltins();
    const breaker = new CircuitBreaker();
    const ctx = onrampContext({ url: '/onramp/done/test', uid: 7, hostname: 'test', logger: createLogger('silent'), requestExit: () => undefined }, breaker, {
      scheduler: asyncScheduler,
    });
    const log: string[] = [];
    const results: FrameResult[] = [];
    const frame = (data: string): Frame => ({
      stream: 's',
      originUri: 'test://done',
      data: Buffer.from(data),
      done: (r) => {
        results.push(r);
        log.push(`done ${r.ids.map((id) => id.seq).join(',')}${r.errors.length > 0 ? ' error' : ''}`);
      },
    });
    const source: OnrampSource = {
      frames: new Observable<Frame>((sub) => {
        sub.next(frame('{"a":1}\n{"a":2}\n{"a":3}\n'));
        sub.next(frame('{"a":4}\n'));
        sub.next(frame('{nope\n'));
      }),
      transactional: true,
      close: async () => undefined,
    };
    const runtime = new OnrampRuntime({
      ctx,
      breaker,
      source,
      codec: registries.codecs.get('json', 'codec').create(),
      preprocessors: () => [registries.preprocessors.get('lines').create({})],
    });
    const events: EddyEvent[] = [];
    const sub = runtime.out$.subscribe((e) => {
      events.push(e);
      log.push(`event ${e.id.seq}`);
    });
    runtime.err$.subscribe(() => undefined);
    sub.unsubscribe();
    expect(log).to.deep.equal(['done 1,2,3', 'event 1', 'event 2', 'event 3', 'done 4', 'event 4', 'done  error']);
    expect(results[2].ids).to.deep.equal([]);
    expect(events.map((e) => e.id.uid)).to.deep.equal([7, 7, 7, 7]);
  });
});
