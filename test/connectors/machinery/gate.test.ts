import { expect } from 'chai';
import type { Subscriber } from 'rxjs';
import type { Frame, OfframpContext, OfframpType } from '../../../src/connectors/connector';
import { createLogger } from '../../../src/core/logger';
import { Runtime } from '../../../src/runtime/runtime';
import { activatePushFlow, pushOnramp } from '../../helpers/push-onramp';

/**
 * The onramp gate (src/ramps/onramp.ts): frames a source delivers
 * while the circuit breaker is shut are held, in order, and released when it
 * opens. These tests shut the breaker again from inside a release: the sink
 * triggers it when it sees a released frame, synchronously, while the
 * release loop is still running.
 */
describe('connector machinery: the onramp gate, triggered again while it releases held frames', () => {
  let runtime: Runtime | undefined;
  afterEach(async () => {
    await runtime?.shutdown();
    runtime = undefined;
  });

  /**
   * push (a source that never pauses: every frame it delivers while the gate
   * is shut is held) → passthrough → keeper (keeps the `n` of each event, and
   * calls `onReceive` with it and its context, inside `send`).
   */
  async function startFlow(onReceive: (n: number, ctx: OfframpContext) => void) {
    const feeds = new Map<string, Subscriber<Frame>>();
    let sinkCtx: OfframpContext | undefined;
    const kept: number[] = [];
    const push = pushOnramp(feeds);
    const keeper: OfframpType<Record<string, never>> = {
      name: 'keeper',
      defaultCodec: 'json',
      autoAck: true,
      configSchema: { type: 'object', additionalProperties: false, properties: {} },
      create(_config, ctx) {
        sinkCtx = ctx;
        return {
          send: (_payloads, event) => {
            const n = (event.data as { n: number }).n;
            kept.push(n);
            onReceive(n, ctx);
          },
        };
      },
    };
    runtime = new Runtime({ logger: createLogger('silent') }).registerOnramp(push).registerOfframp(keeper);
    await runtime.start();
    await activatePushFlow(runtime);
    const onramp = runtime.onramp('/onramp/push/main')!.runtime;
    return {
      kept,
      onramp,
      push: (...ns: number[]) => ns.forEach((n) => feeds.get('/onramp/push/main')!.next({ stream: 0, originUri: 'svc-push://test', value: { n } })),
      complete: () => feeds.get('/onramp/push/main')!.complete(),
      trigger: () => sinkCtx!.trigger(),
      restore: () => sinkCtx!.restore(),
    };
  }

  it('keeps the rest held until the breaker restores again, then lets them through in order, none lost or repeated', async () => {
    let retriggered = false;
    const flow = await startFlow((n, ctx) => {
      // the second released frame shuts the gate again, once
      if (n === 2 && !retriggered) {
        retriggered = true;
        ctx.trigger();
      }
    });
    flow.trigger();
    flow.push(1, 2, 3, 4, 5, 6);
    expect(flow.kept).to.deep.equal([]);
    expect(flow.onramp.held).to.equal(6);

    flow.restore(); // releases 1 and 2; 2 shuts the gate before 3 goes out
    expect(retriggered).to.equal(true);
    expect(flow.onramp.breaker.isOpen).to.equal(false);
    expect(flow.kept).to.deep.equal([1, 2]);
    expect(flow.onramp.held).to.equal(4);

    // a frame arriving now queues behind the ones still held
    flow.push(7);
    expect(flow.kept).to.deep.equal([1, 2]);
    expect(flow.onramp.held).to.equal(5);

    flow.restore();
    expect(flow.onramp.breaker.isOpen).to.equal(true);
    expect(flow.kept).to.deep.equal([1, 2, 3, 4, 5, 6, 7]);
    expect(flow.onramp.held).to.equal(0);

    // and with the gate open, frames go straight through again
    flow.push(8);
    expect(flow.kept).to.deep.equal([1, 2, 3, 4, 5, 6, 7, 8]);
  });

  it('stops again at every re-trigger: a breaker shut by each released frame lets one through per restore', async () => {
    const flow = await startFlow((_n, ctx) => ctx.trigger());
    flow.trigger();
    flow.push(1, 2, 3);
    expect(flow.onramp.held).to.equal(3);
    for (const upTo of [1, 2, 3]) {
      flow.restore();
      expect(flow.kept).to.deep.equal([1, 2, 3].slice(0, upTo));
      expect(flow.onramp.held).to.equal(3 - upTo);
    }
  });

  it('a restore from inside the release (triggered and restored by one frame) goes on releasing, in order, once each', async () => {
    const flow = await startFlow((n, ctx) => {
      if (n === 2) {
        ctx.trigger();
        ctx.restore();
      }
    });
    flow.trigger();
    flow.push(1, 2, 3, 4);
    flow.restore();
    expect(flow.kept).to.deep.equal([1, 2, 3, 4]);
    expect(flow.onramp.held).to.equal(0);
  });

  it('a source that ends while frames are held ends only after they are released, even across a re-trigger', async () => {
    let retriggered = false;
    const flow = await startFlow((n, ctx) => {
      if (n === 2 && !retriggered) {
        retriggered = true;
        ctx.trigger();
      }
    });
    // the onramp's event stream is shared: this joins the binding's subscription to see it end
    let ended = false;
    const watch = flow.onramp.out$.subscribe({ complete: () => (ended = true) });
    flow.trigger();
    flow.push(1, 2, 3, 4);
    flow.complete();
    expect(flow.onramp.held).to.equal(4);
    expect(ended).to.equal(false);
    flow.restore();
    expect(flow.kept).to.deep.equal([1, 2]);
    expect(flow.onramp.held).to.equal(2);
    expect(ended).to.equal(false);
    flow.restore();
    expect(flow.kept).to.deep.equal([1, 2, 3, 4]);
    expect(flow.onramp.held).to.equal(0);
    expect(ended).to.equal(true);
    watch.unsubscribe();
  });
});
