import { expect } from 'chai';
import { VirtualTimeScheduler } from 'rxjs';
import { createLogger } from '../../../src/core/logger';
import type { EddyEvent, Insight } from '../../../src/core/event';
import { OfframpRuntime } from '../../../src/ramps/offramp';
import { RetryPolicy, classify } from '../../../src/connectors/_shared/retry';
import type { DeadLetterConfig, RetryConfig } from '../../../src/schema/artefacts';
import { json } from '../../../src/codecs/json';

/** A sink that fails with the queued errors first, then takes every send; each send's virtual time is kept. */
class ScriptedSink {
  readonly sentAt: number[] = [];
  readonly delivered: string[] = [];
  constructor(
    private readonly scheduler: VirtualTimeScheduler,
    readonly failures: Error[],
  ) {}
  send(payloads: Buffer[]): void {
    this.sentAt.push(this.scheduler.now());
    const failure = this.failures.shift();
    if (failure) throw failure;
    this.delivered.push(...payloads.map((p) => p.toString()));
  }
}

const status = (code: number, extra: object = {}) => Object.assign(new Error(`answered ${code}`), { status: code }, extra);

function event(seq: number, transactional = true): EddyEvent {
  return { id: { uid: 1, seq }, data: { n: seq }, meta: { m: 1 }, ingestNs: 0n, originUri: 'test://', isBatch: false, transactional };
}

async function setUp(failures: Error[], options: { retry?: RetryConfig; deadLetter?: DeadLetterConfig; linkErr?: boolean } = {}) {
  const scheduler = new VirtualTimeScheduler();
  const sink = new ScriptedSink(scheduler, failures);
  const offramp = new OfframpRuntime({
    ctx: { url: '/offramp/o/t', uid: 70, hostname: 'test', logger: createLogger('silent'), requestExit: () => undefined },
    codec: json.create(),
    postprocessors: [],
    autoAck: true,
    maxInFlight: 16,
    scheduler,
    retry: options.retry && new RetryPolicy(options.retry),
    deadLetter: options.deadLetter,
    createSink: () => ({ send: (payloads: Buffer[]) => sink.send(payloads) }),
  });
  await offramp.start();
  const insights: Insight[] = [];
  const input = offramp.connect({ url: '/pipeline/p/t', contraflow: (i) => insights.push(i) });
  const letters: EddyEvent[] = [];
  if (options.linkErr !== false) offramp.output('err').subscribe((e) => letters.push(e));
  const seen = () => insights.map((i) => (i.kind === 'ack' || i.kind === 'fail' ? `${i.kind} ${i.event!.id.seq}` : i.kind));
  return { scheduler, sink, offramp, input, insights, letters, seen };
}

describe('offramp machinery: retries and dead letters (virtual time)', () => {
  it('classifies failures by status, then by code', () => {
    expect(
      [
        status(503),
        status(429),
        status(404),
        Object.assign(new Error(), { code: 'ECONNREFUSED' }),
        Object.assign(new Error(), { code: 'ETIMEDOUT' }),
        new Error('x'),
      ].map(classify),
    ).to.deep.equal(['5xx', '429', '4xx', 'connection', 'timeout', 'other']);
  });

  it('retries a 503 with doubling delays, the breaker held meanwhile, and acks once the send succeeds', async () => {
    const t = await setUp([status(503), status(503)], { retry: { attempts: 3, backoff: { initial: '100ms', factor: 2, jitter: false } } });
    t.input.next(event(1));
    expect(t.seen()).to.deep.equal(['trigger']);
    t.scheduler.flush();
    expect(t.sink.sentAt).to.deep.equal([0, 100, 300]);
    expect(t.sink.delivered).to.deep.equal(['{"n":1}']);
    expect(t.seen()).to.deep.equal(['trigger', 'ack 1', 'restore']);
    expect(t.letters).to.deep.equal([]);
    expect(t.offramp.counters.retries).to.equal(2);
  });

  it('fails at once what the policy does not retry (a 400 by default), as a dead letter on err with the reason', async () => {
    const t = await setUp([status(400)], { retry: { attempts: 5 } });
    t.input.next(event(1));
    t.scheduler.flush();
    expect(t.sink.sentAt).to.deep.equal([0]);
    expect(t.seen()).to.deep.equal(['fail 1']);
    expect(t.letters).to.have.length(1);
    expect(t.letters[0]).to.deep.include({ data: { n: 1 }, transactional: false });
    expect(t.letters[0].meta).to.deep.equal({ m: 1, error: { type: 'send', message: 'answered 400', status: 400, attempt: 1 } });
  });

  it('gives up after `attempts` sends, the dead letter saying how many', async () => {
    const t = await setUp([status(502), status(502), status(502)], { retry: { attempts: 3, backoff: { initial: 10, jitter: false } } });
    t.input.next(event(1));
    t.scheduler.flush();
    expect(t.sink.sentAt).to.deep.equal([0, 10, 30]);
    expect(t.seen()).to.deep.equal(['trigger', 'fail 1', 'restore']);
    expect((t.letters[0].meta.error as { attempt: number }).attempt).to.equal(3);
  });

  it('draws each delay with full jitter by default, up to the delay it would wait without (senders that failed together spread out)', async () => {
    const t = await setUp(
      Array.from({ length: 30 }, () => status(503)),
      { retry: { attempts: 31, backoff: { initial: 100, factor: 1 } } },
    );
    t.input.next(event(1));
    t.scheduler.flush();
    const delays = t.sink.sentAt.slice(1).map((at, i) => at - t.sink.sentAt[i]);
    expect(delays).to.have.length(30);
    for (const delay of delays) expect(delay).to.be.within(1, 100);
    expect(new Set(delays).size, 'not one beat').to.be.above(1);
  });

  it('waits for a Retry-After longer than its backoff, up to max', async () => {
    const t = await setUp([status(429, { retryAfterMs: 2000 }), status(429, { retryAfterMs: 60_000 })], {
      retry: { attempts: 3, backoff: { initial: 100, max: '5s' } },
    });
    t.input.next(event(1));
    t.scheduler.flush();
    expect(t.sink.sentAt).to.deep.equal([0, 2000, 7000]);
  });

  it('retries connection errors by default and `any` failure when asked', async () => {
    const refused = Object.assign(new Error('refused'), { code: 'ECONNREFUSED' });
    const a = await setUp([refused], { retry: { attempts: 2 } });
    a.input.next(event(1));
    a.scheduler.flush();
    expect(a.seen()).to.deep.equal(['trigger', 'ack 1', 'restore']);
    const b = await setUp([new Error('odd')], { retry: { attempts: 2, on: ['any'] } });
    b.input.next(event(1));
    b.scheduler.flush();
    expect(b.seen()).to.deep.equal(['trigger', 'ack 1', 'restore']);
  });

  it("with ack_source, the dead letter carries the event's ids and settles its source: acked when the dead-letter path acks it, failed when it fails", async () => {
    const t = await setUp([status(400), status(400)], { deadLetter: { ack_source: true } });
    t.input.next(event(1));
    t.input.next(event(2));
    expect(t.seen(), 'the source waits for the dead-letter path').to.deep.equal([]);
    expect(t.letters.map((l) => l.transactional)).to.deep.equal([true, true]);
    expect(t.letters[0].tracked).to.deep.include({ uid: 1, seq: 1 });
    t.offramp.contraflow({ kind: 'ack', event: t.letters[0], from: '/offramp/dlq/t' });
    t.offramp.contraflow({ kind: 'fail', event: t.letters[1], from: '/offramp/dlq/t', meta: { error: 'disk full' } });
    expect(t.seen()).to.deep.equal(['ack 1', 'fail 2']);
    expect(t.insights[1].meta).to.deep.equal({ error: 'the dead-letter path failed it too: disk full' });
    // settled once: a second answer does nothing
    t.offramp.contraflow({ kind: 'ack', event: t.letters[0], from: '/offramp/dlq/t' });
    expect(t.seen()).to.have.length(2);
  });

  it('without a link on err, fails the source as before (no dead letter, ack_source or not)', async () => {
    const t = await setUp([status(400)], { deadLetter: { ack_source: true }, linkErr: false });
    t.input.next(event(1));
    expect(t.seen()).to.deep.equal(['fail 1']);
  });

  it('fails a send still waiting for its retry when the offramp closes, and restores the breaker', async () => {
    const t = await setUp([status(503)], { retry: { attempts: 3, backoff: { initial: '1m' } } });
    t.input.next(event(1));
    await t.offramp.close();
    expect(t.seen()).to.deep.equal(['trigger', 'fail 1', 'restore']);
    expect(t.insights[1].meta?.error).to.match(/^offramp closed while the send waited for attempt 2: answered 503/);
    expect(t.sink.sentAt).to.deep.equal([0]);
  });
});
