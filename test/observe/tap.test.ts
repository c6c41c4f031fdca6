import { expect } from 'chai';
import { connect } from 'node:net';
import { event } from '../../src/core/event';
import { TapClient, tapOptions } from '../../src/runtime/observe/tap';
import { call, eventually } from '../helpers/runtime';
import { readSse, startFlow, type Flow, type SseMessage } from './flow';

const OUT = '/pipeline/relay/main';
const events = (messages: SseMessage[]) =>
  messages
    .filter((m) => m.event === 'event')
    .map((m) => m.data as { data: unknown; seq: number; port: string; ingest_ns: string; origin: string | null; meta: unknown });
const ended = (messages: SseMessage[]) => messages.some((m) => m.event === 'end');

describe('live tap: GET /tap/{kind}/{id}/{instance}/{port}', function () {
  this.timeout(15_000);
  let flow: Flow;
  beforeEach(async () => {
    flow = await startFlow();
  });
  afterEach(() => flow.stop());

  /** starts reading a tap and resolves once the runtime has the client on the port */
  async function tap(path: string, until: (m: SseMessage[]) => boolean): Promise<{ messages: Promise<SseMessage[]> }> {
    const [, kind, artefact, instance, port] = /^\/tap\/(\w+)\/([^/]+)\/([^/]+)\/([^/?]+)/.exec(path)!;
    const url = `/${kind}/${artefact}/${instance}`;
    const before = flow.runtime.taps.clientCount(url, port);
    const reading = readSse(flow.base + path, until);
    await eventually(() => flow.runtime.taps.clientCount(url, port) > before, 5000, `a tap client on ${url}/${port}`);
    return { messages: reading }; // wrapped: an async function returning a promise would wait for it
  }

  it('streams the events leaving a pipeline port, as one JSON line each, with ingest time and origin', async () => {
    const reading = await tap('/tap/pipeline/relay/main/out?max=2', ended);
    flow.push({ n: 1 });
    flow.push({ n: 2, big: 12345678901234567890n });
    const messages = await reading.messages;
    expect(messages.map((m) => m.event)).to.deep.equal(['event', 'event', 'end']);
    const [first, second] = events(messages);
    expect(first).to.deep.include({ data: { n: 1 }, meta: {}, origin: 'svc-push://test', port: 'out', seq: 1 });
    expect(first.ingest_ns).to.match(/^\d+$/);
    expect(second.data).to.deep.equal({ n: 2, big: '12345678901234567890' });
    expect(messages[2].data).to.deep.equal({ reason: 'max reached' });
    // the stream ended: the port is untapped again
    await eventually(() => flow.runtime.taps.clientCount(OUT, 'out') === 0, 5000, 'the port untapped');
  });

  it('a tap on a busy pipeline changes nothing downstream: the offramp gets the same events in the same order', async () => {
    const burst = (from: number) => {
      for (let i = from; i < from + 500; i++) flow.push({ i, text: 'x'.repeat(100) });
    };
    burst(0);
    await eventually(() => flow.kept.length === 500, 5000, '500 events without a tap');
    const untapped = flow.kept.splice(0).map((e) => e.data);

    // three taps: one reading everything, one with a tiny queue (misses), one never read beyond its headers
    const all = await tap('/tap/pipeline/relay/main/in?queue=10000', (m) => events(m).length === 500);
    const small = await tap('/tap/pipeline/relay/main/out?queue=5', (m) => m.some((x) => x.event === 'missed'));
    const offramp = await tap('/tap/offramp/keeper/main/in?sample=7', (m) => events(m).length === Math.floor(500 / 7));
    burst(0);
    await eventually(() => flow.kept.length === 500, 5000, '500 events with taps');
    expect(flow.kept.map((e) => e.data)).to.deep.equal(untapped);

    expect(events(await all.messages).map((e) => e.data)).to.deep.equal(untapped);
    const missed = (await small.messages).find((m) => m.event === 'missed')!;
    // the burst came in one turn of the event loop: 5 queued, the other 495 missed and reported
    expect(missed.data).to.deep.equal({ missed: 495, total_missed: 495 });
    expect(events(await offramp.messages).map((e) => e.seq)).to.deep.equal(Array.from({ length: 71 }, (_, k) => 7 * (k + 1)));
  });

  it('sample=N sends every Nth event and max=M ends the stream after M', async () => {
    const reading = await tap('/tap/onramp/push/main/out?sample=3&max=4', ended);
    for (let i = 1; i <= 20; i++) flow.push({ i });
    const messages = await reading.messages;
    expect(events(messages).map((e) => [e.seq, e.data])).to.deep.equal([
      [3, { i: 3 }],
      [6, { i: 6 }],
      [9, { i: 9 }],
      [12, { i: 12 }],
    ]);
    expect(messages.at(-1)).to.deep.equal({ event: 'end', data: { reason: 'max reached' } });
    await eventually(() => flow.kept.length === 20, 5000, 'all 20 delivered');
  });

  it('filter=CEL sends only the events it gives true for; sample counts those, seq every event passing the port', async () => {
    // odd i: `false || error` is an evaluation error (event.nope is missing), which does not pass
    const filter = encodeURIComponent('event.i % 2 == 0 || event.nope == 1');
    const reading = await tap(`/tap/onramp/push/main/out?filter=${filter}&sample=2&max=3`, ended);
    for (let i = 1; i <= 20; i++) flow.push({ i });
    const messages = await reading.messages;
    // the even i pass, every second of them is sent; seq is the event's place among all passing the port
    expect(events(messages).map((e) => [e.seq, e.data])).to.deep.equal([
      [4, { i: 4 }],
      [8, { i: 8 }],
      [12, { i: 12 }],
    ]);
    expect(messages.at(-1)).to.deep.equal({ event: 'end', data: { reason: 'max reached' } });
  });

  it('rate=R passes at most R a second and reports the rest as missed', async () => {
    const reading = await tap('/tap/pipeline/relay/main/out?rate=1', (m) => m.some((x) => x.event === 'missed'));
    for (let i = 0; i < 50; i++) flow.push({ i });
    const messages = await reading.messages;
    const got = events(messages).length;
    const missed = (messages.find((m) => m.event === 'missed')!.data as { total_missed: number }).total_missed;
    expect(got + missed).to.equal(50);
    expect(missed).to.be.greaterThan(0);
  });

  it('rate: a token bucket of R a second, counted on the clock it is given', () => {
    let now = 0;
    const client = new TapClient(
      'out',
      tapOptions({ rate: '2' }),
      () => undefined,
      () => now,
    );
    for (let i = 0; i < 5; i++) client.offer(event({ i }));
    now += 1000;
    for (let i = 5; i < 10; i++) client.offer(event({ i }));
    const text = client.take();
    const sent = [...text.matchAll(/"data":\{"i":(\d+)\}/g)].map((m) => Number(m[1]));
    expect(sent).to.deep.equal([0, 1, 5, 6]);
    expect([...text.matchAll(/event: missed\ndata: (.*)/g)].map((m) => JSON.parse(m[1]))).to.deep.equal([
      { missed: 3, total_missed: 3 },
      { missed: 3, total_missed: 6 },
    ]);
  });

  it('onramp err carries what could not be decoded, also with nothing linked to err', async () => {
    const reading = await tap('/tap/onramp/push/main/err?max=1', ended);
    flow.pushRaw('{not json');
    const [error] = events(await reading.messages);
    expect(error.port).to.equal('err');
    expect(error.data).to.deep.include({ raw: '{not json', source_id: '/onramp/push/main' });
  });

  it('ends the stream with "instance stopped" when the instance goes', async () => {
    const reading = await tap('/tap/pipeline/relay/main/out', ended);
    expect((await call(flow.base, 'DELETE', '/binding/flow/main')).status).to.equal(200);
    expect((await reading.messages).at(-1)).to.deep.equal({ event: 'end', data: { reason: 'instance stopped' } });
  });

  it('drops a client that stops reading, and the flow goes on', async () => {
    const socket = connect(Number(new URL(flow.base).port), '127.0.0.1');
    await new Promise((r) => socket.once('connect', r));
    socket.write(`GET /tap/pipeline/relay/main/out?queue=10 HTTP/1.1\r\nHost: ${new URL(flow.base).host}\r\nAccept: text/event-stream\r\n\r\n`);
    socket.pause(); // reads nothing more: the kernel's buffers, then the server's, fill up
    try {
      await eventually(() => flow.runtime.taps.clientCount(OUT, 'out') === 1, 5000, 'the raw client tapping');
      const payload = 'y'.repeat(64 * 1024);
      let pushed = 0;
      // bursts until the server drops the client (bounded: 4000 events of 64 KiB)
      while (flow.runtime.taps.clientCount(OUT, 'out') > 0 && pushed < 4000) {
        for (let i = 0; i < 20; i++) flow.push({ n: pushed++, payload });
        await new Promise((r) => setImmediate(r));
      }
      expect(flow.runtime.taps.clientCount(OUT, 'out'), `still tapping after ${pushed} events`).to.equal(0);
      await eventually(() => flow.kept.length === pushed, 5000, 'every event delivered');
      expect(flow.kept.map((e) => (e.data as { n: number }).n)).to.deep.equal(Array.from({ length: pushed }, (_, i) => i));
    } finally {
      socket.destroy();
    }
  });

  it('answers 404 naming the unknown artefact, instance or port, and 400 naming a bad query parameter', async () => {
    const cases: [string, number, string][] = [
      ['/tap/pipeline/relay/main/nope', 404, "pipeline instance /pipeline/relay/main has no port 'nope' to tap (ports: inputs in; outputs out, err)"],
      ['/tap/onramp/push/main/in', 404, "onramp instance /onramp/push/main has no port 'in' to tap (ports: out, err)"],
      ['/tap/offramp/keeper/main/out', 404, "offramp instance /offramp/keeper/main has no port 'out' to tap (ports: in)"],
      ['/tap/pipeline/relay/other/out', 404, 'instance /pipeline/relay/other not found'],
      ['/tap/pipeline/ghost/main/out', 404, "pipeline 'ghost' not found"],
      ['/tap/binding/flow/main/out', 404, 'no route for GET /tap/binding/flow/main/out (the routes are in GET /openapi.json)'],
      ['/tap/pipeline/relay/main/out?sample=0', 400, "query parameter 'sample' must be a positive integer, not '0'"],
      ['/tap/pipeline/relay/main/out?rate=fast', 400, "query parameter 'rate' must be a positive number, not 'fast'"],
      ['/tap/pipeline/relay/main/out?queue=100000', 400, "query parameter 'queue' must be at most 10000, not 100000"],
      ['/tap/pipeline/relay/main/out?max=1&max=2', 400, "query parameter 'max' must be given once, as a number"],
      ['/tap/pipeline/relay/main/out?smaple=2', 400, "query parameter 'smaple' is unknown (known: filter, sample, rate, max, queue)"],
      ['/tap/pipeline/relay/main/out?filter=event.a%20%2B', 400, "query parameter 'filter': 1:9: found + but expecting end of input"],
    ];
    for (const [path, status, error] of cases) {
      const reply = await call(flow.base, 'GET', path);
      expect([reply.status, reply.body], path).to.deep.equal([status, { error }]);
    }
    expect(flow.runtime.taps.clientCount(OUT, 'out')).to.equal(0);
  });
});

describe('live tap with --api-token', () => {
  let flow: Flow;
  before(async () => {
    flow = await startFlow({ token: 'sesame' });
  });
  after(() => flow.stop());

  it('needs the bearer token like every other route', async () => {
    expect((await call(flow.base, 'GET', '/tap/pipeline/relay/main/out')).status).to.equal(401);
    const reading = readSse(`${flow.base}/tap/pipeline/relay/main/out?max=1`, ended, { authorization: 'Bearer sesame' });
    await eventually(() => flow.runtime.taps.clientCount(OUT, 'out') === 1, 5000, 'the tap client');
    flow.push({ secret: false });
    expect(events(await reading).map((e) => e.data)).to.deep.equal([{ secret: false }]);
  });
});
