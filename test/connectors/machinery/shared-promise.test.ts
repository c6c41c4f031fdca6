import { expect } from 'chai';
import { createLogger } from '../../../src/core/logger';
import type { EddyEvent, Insight, Meta } from '../../../src/core/event';
import { OfframpRuntime } from '../../../src/ramps/offramp';
import type { Sink } from '../../../src/connectors/connector';
import { json } from '../../../src/codecs/json';

function event(seq: number, transactional = true): EddyEvent {
  return { id: { uid: 1, seq }, data: { n: seq }, meta: {}, ingestNs: 0n, originUri: 'test://', isBatch: false, transactional };
}

/** A sink gathering sends into requests: every send until `cut()` returns the open request's promise (as the kafka offramp does). */
class GatheringSink implements Sink {
  readonly requests: { resolve(meta?: Meta): void; reject(err: Error): void; sent: string[] }[] = [];
  private open: Promise<Meta | undefined> | undefined;
  /** when set, every send returns this promise (settled already or not) */
  fixed: Promise<Meta | undefined> | undefined;
  send(payloads: Buffer[]): Promise<Meta | undefined> {
    if (this.fixed) return this.fixed;
    if (!this.open) {
      const request = { sent: [] as string[] } as GatheringSink['requests'][number];
      this.open = new Promise<Meta | undefined>((resolve, reject) => Object.assign(request, { resolve, reject }));
      this.requests.push(request);
    }
    this.requests[this.requests.length - 1].sent.push(...payloads.map(String));
    return this.open;
  }
  cut(): void {
    this.open = undefined;
  }
}

async function setUp(maxInFlight = 100) {
  const sink = new GatheringSink();
  const offramp = new OfframpRuntime({
    ctx: { url: '/offramp/o/t', uid: 70, hostname: 'test', logger: createLogger('silent'), requestExit: () => undefined },
    codec: json.create(),
    postprocessors: [],
    autoAck: true,
    maxInFlight,
    createSink: () => sink,
  });
  await offramp.start();
  const insights: Insight[] = [];
  const input = offramp.connect({ url: '/pipeline/p/t', contraflow: (i) => insights.push(i) });
  const seen = () => insights.map((i) => (i.kind === 'ack' || i.kind === 'fail' ? `${i.kind} ${i.event!.id.seq}` : i.kind));
  return { sink, offramp, input, insights, seen };
}

const turn = () => new Promise((r) => setImmediate(r));

describe('offramp machinery: sends sharing one sink promise', () => {
  it('acks every send of a request once it resolves, with the meta it resolves with, and counts them in flight until then', async () => {
    const t = await setUp();
    for (const seq of [1, 2, 3]) t.input.next(event(seq));
    t.sink.cut();
    t.input.next(event(4));
    expect(t.offramp.inFlightSends).to.equal(4);
    const time = { time: 7 };
    t.sink.requests[0].resolve(time);
    await turn();
    expect(t.seen()).to.deep.equal(['ack 1', 'ack 2', 'ack 3']);
    expect(t.insights.every((i) => i.meta === time)).to.equal(true);
    expect(t.offramp.inFlightSends).to.equal(1);
    t.sink.requests[1].resolve();
    await turn();
    expect(t.seen()).to.deep.equal(['ack 1', 'ack 2', 'ack 3', 'ack 4']);
    expect(t.insights[3]).to.not.have.property('meta');
    expect(t.offramp.inFlightSends).to.equal(0);
    expect(t.offramp.counters.out).to.equal(4);
  });

  it('fails every send of a rejected request, and acks none of those not transactional', async () => {
    const t = await setUp();
    t.input.next(event(1));
    t.input.next(event(2, false));
    t.input.next(event(3));
    t.sink.requests[0].reject(new Error('refused'));
    await turn();
    expect(t.seen()).to.deep.equal(['fail 1', 'fail 3']);
    expect(t.offramp.counters.error).to.equal(3);
    expect(t.offramp.inFlightSends).to.equal(0);
  });

  it('triggers the breaker at the limit and restores it when a request settles them all', async () => {
    const t = await setUp(3);
    for (const seq of [1, 2, 3]) t.input.next(event(seq));
    expect(t.seen()).to.deep.equal(['trigger']);
    t.sink.requests[0].resolve();
    await turn();
    expect(t.seen()).to.deep.equal(['trigger', 'ack 1', 'ack 2', 'ack 3', 'restore']);
  });

  it('loses no send when a sink returns a promise settled already, again after its sends were acked', async () => {
    const t = await setUp();
    t.sink.fixed = Promise.resolve(undefined);
    t.input.next(event(1));
    t.input.next(event(2));
    await turn();
    t.input.next(event(3));
    await turn();
    expect(t.seen()).to.deep.equal(['ack 1', 'ack 2', 'ack 3']);
    expect(t.offramp.inFlightSends).to.equal(0);
  });
});
