import { expect } from 'chai';
import { createLogger } from '../../../src/core/logger';
import { Runtime } from '../../../src/runtime/runtime';
import { eventually } from '../../helpers/runtime';
import { Client, type DirectOnramp, directOnramp, freePort, sleep } from './helpers';
import { boundAddresses } from '../bound-addresses';

describe('ws onramp', () => {
  let ramp: DirectOnramp | undefined;
  const clients: Client[] = [];
  const connect = async (url: string) => {
    const c = await Client.open(url);
    clients.push(c);
    return c;
  };
  afterEach(async () => {
    // the onramp first: a test that failed while its sockets were paused would leave a client's close handshake unread
    await ramp?.stop();
    ramp = undefined;
    await Promise.all(clients.splice(0).map((c) => c.close()));
  });

  it('reads text and binary messages, with meta binary and the origin svc-ws://<client ip>:<client port>/<listen port>', async () => {
    ramp = await directOnramp({ port: 0 });
    const c = await connect(ramp.url);
    await c.send('{"text":1}');
    await c.send(Buffer.from('{"binary":2}'));
    await eventually(() => ramp!.events.length === 2, 3000, 'two events');
    expect(ramp.events.map((e) => [e.data, e.meta])).to.deep.equal([
      [{ text: 1 }, { binary: false }],
      [{ binary: 2 }, { binary: true }],
    ]);
    expect(ramp.events[0].originUri).to.equal(`svc-ws://127.0.0.1:${c.port}/${ramp.source.port}`);
  });

  it('gives each connection its own framing stream: partial lines of two clients do not mix', async () => {
    ramp = await directOnramp({ port: 0 }, { preprocessors: ['lines'] });
    const a = await connect(ramp.url);
    const b = await connect(ramp.url);
    await a.send('{"from":"a",');
    await b.send('{"from":"b",');
    await sleep(20); // pacing only: the halves are separate messages whatever the timing
    await b.send('"n":1}\n{"from":"b","n":2}\n');
    await a.send('"n":1}\n');
    await eventually(() => ramp!.events.length === 3, 3000, 'three events');
    expect(ramp.errors).to.deep.equal([]);
    const seen = ramp.events.map((e) => [e.data, e.originUri]);
    const origin = (c: Client) => `svc-ws://127.0.0.1:${c.port}/${ramp!.source.port}`;
    expect(seen).to.deep.equal([
      [{ from: 'b', n: 1 }, origin(b)],
      [{ from: 'b', n: 2 }, origin(b)],
      [{ from: 'a', n: 1 }, origin(a)],
    ]);
  });

  it('sends a malformed message to err and keeps reading the next good one', async () => {
    ramp = await directOnramp({ port: 0 });
    const c = await connect(ramp.url);
    await c.send('{"good":1}');
    await c.send('{not json');
    await c.send('{"good":2}');
    await eventually(() => ramp!.events.length === 2 && ramp!.errors.length === 1, 3000, 'two events and one error');
    expect(ramp.events.map((e) => e.data)).to.deep.equal([{ good: 1 }, { good: 2 }]);
    expect((ramp.errors[0].data as { raw: string }).raw).to.equal('{not json');
    expect(ramp.runtime.counters.error).to.equal(1);
  });

  it('ends the stream of a client that disconnects (its last partial line is flushed), and serves the next client', async () => {
    ramp = await directOnramp({ port: 0 }, { preprocessors: ['lines'] });
    const gone = await connect(ramp.url);
    await gone.send('{"last":true}');
    await gone.close();
    await eventually(() => ramp!.events.length === 1, 3000, 'the flushed partial line');
    expect(ramp.events[0].data).to.deep.equal({ last: true });
    const next = await connect(ramp.url);
    await next.send('{"next":1}\n');
    await eventually(() => ramp!.events.length === 2, 3000, 'the next client');
    expect(ramp.events[1].data).to.deep.equal({ next: 1 });
  });

  it('stops reading while the circuit breaker is triggered, and delivers everything in order after restore', async () => {
    ramp = await directOnramp({ port: 0 });
    const c = await connect(ramp.url);
    await c.send('{"n":0}');
    await eventually(() => ramp!.events.length === 1, 3000, 'the first event');
    ramp.runtime.contraflow({ kind: 'trigger', from: 'test' });
    for (let n = 1; n <= 50; n++) await c.send(`{"n":${n}}`);
    const late = await connect(ramp.url); // a connection accepted while paused is paused too
    await late.send('{"late":true}');
    // both connections accepted: a socket that read while triggered would be flowing, and none is
    await eventually(() => ramp!.runtime.inputs()!.open === 2, 3000, 'the late connection accepted');
    expect(ramp.runtime.inputs(), 'sockets reading while triggered').to.deep.equal({ open: 2, reading: 0 });
    expect(ramp.events).to.have.length(1);
    expect(c.socket.readyState).to.equal(c.socket.OPEN);
    ramp.runtime.contraflow({ kind: 'restore', from: 'test' });
    await eventually(() => ramp!.events.length === 52, 3000, 'all events after restore');
    const ns = ramp.events.map((e) => (e.data as { n?: number }).n).filter((n) => n !== undefined);
    expect(ns).to.deep.equal(Array.from({ length: 51 }, (_, i) => i));
    expect(ramp.events.some((e) => (e.data as { late?: boolean }).late)).to.equal(true);
  });

  it('fails to start on a port that is in use, naming the cause', async () => {
    ramp = await directOnramp({ port: 0 });
    const err = await directOnramp({ port: ramp.source.port }).then(
      () => null,
      (e: unknown) => e as Error,
    );
    expect(err?.message).to.match(/cannot listen on 127\.0\.0\.1:\d+: .*EADDRINUSE/);
  });

  it('close() terminates its clients and frees the port', async () => {
    ramp = await directOnramp({ port: 0 });
    const port = ramp.source.port;
    const c = await connect(ramp.url);
    await ramp.stop();
    ramp = undefined;
    await eventually(() => c.closed, 3000, 'the client to be cut off');
    ramp = await directOnramp({ port });
    expect(ramp.source.port).to.equal(port);
  });

  describe('linked', () => {
    it('a message that fails to decode is answered with an error notice; one that makes no event yet gets nothing', async () => {
      ramp = await directOnramp({ port: 0 }, { linked: true, preprocessors: ['lines'] });
      const c = await connect(ramp.url);
      await c.send('{"partial":');
      await c.send('oops\n');
      await eventually(() => c.received.length === 1, 3000, 'the error notice');
      const notice = JSON.parse(c.received[0].text);
      expect(notice).to.have.keys(['error']);
      expect(notice.error).to.be.a('string').and.not.empty;
      expect(c.received[0].binary).to.equal(false);
      expect(ramp.source.waiting).to.equal(0);
    });

    it('a closed connection drops its waiters, and an unanswered request times out', async () => {
      ramp = await directOnramp({ port: 0, timeout: 60000 }, { linked: true });
      const a = await connect(ramp.url);
      const b = await connect(ramp.url);
      for (let i = 0; i < 5; i++) await a.send(`{"a":${i}}`);
      for (let i = 0; i < 3; i++) await b.send(`{"b":${i}}`);
      await eventually(() => ramp!.source.waiting === 8, 3000, '8 waiting requests');
      await a.close();
      await eventually(() => ramp!.source.waiting === 3, 3000, "a's waiters dropped");
      await b.close();
      await eventually(() => ramp!.source.waiting === 0, 3000, "b's waiters dropped");
      await ramp.stop();

      ramp = await directOnramp({ port: 0, timeout: 50 }, { linked: true });
      const c = await connect(ramp.url);
      await c.send('{"never":"answered"}');
      await eventually(() => ramp!.events.length === 1, 3000, 'the request');
      await eventually(() => ramp!.source.waiting === 0, 3000, 'the timeout');
      expect(c.closed).to.equal(false);
      expect(c.received).to.deep.equal([]);
    });
  });
});

describe('ws onramp linked through a runtime (onramp -> passthrough -> onramp in)', () => {
  let runtime: Runtime;
  let port: number;
  const clients: Client[] = [];
  beforeEach(async () => {
    runtime = await new Runtime({ logger: createLogger('silent') }).start();
    port = await freePort();
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
    await runtime.shutdown();
  });

  async function echo(nodes: { id: string; type: string; config?: Record<string, unknown> }[] = []) {
    runtime.publish('onramp', { id: 'ws', type: 'ws', linked: true, config: { host: '127.0.0.1', port } });
    const chain = [...nodes, { id: 'pass', type: 'passthrough' }];
    const links: Record<string, string[]> = { in: [chain[0].id] };
    chain.forEach((n, i) => (links[n.id] = [i + 1 < chain.length ? chain[i + 1].id : 'out']));
    runtime.publish('pipeline', { id: 'echo', interface: { inputs: ['in'], outputs: ['out'] }, nodes: chain, links });
    runtime.publish('binding', {
      id: 'echo',
      links: {
        '/onramp/ws/{instance}/out': ['/pipeline/echo/{instance}/in'],
        '/pipeline/echo/{instance}/out': ['/onramp/ws/{instance}/in'],
      },
    });
    await runtime.activate('binding', 'echo', 'main');
  }

  it('200 concurrent clients each get their own reply, and nothing is left waiting', async () => {
    await echo();
    const opened = await Promise.all(Array.from({ length: 200 }, () => Client.open(`ws://127.0.0.1:${port}/`)));
    clients.push(...opened);
    await Promise.all(opened.map((c, i) => c.send(JSON.stringify({ client: i, ask: `q${i}` }))));
    await eventually(() => opened.every((c) => c.received.length === 1), 8000, 'a reply for every client');
    opened.forEach((c, i) => {
      expect(c.received[0].binary).to.equal(false);
      expect(JSON.parse(c.received[0].text)).to.deep.equal({ client: i, ask: `q${i}` });
    });
    const source = runtime.onramp('/onramp/ws/main')!.runtime as unknown as { parts: { source: { waiting: number } } };
    expect(source.parts.source.waiting).to.equal(0);
  });

  it('a reply goes out binary when its meta binary is true (a binary request keeps it through passthrough)', async () => {
    await echo();
    const c = await Client.open(`ws://127.0.0.1:${port}/`);
    clients.push(c);
    await c.send(Buffer.from('{"bin":1}'));
    await c.send('{"text":1}');
    await eventually(() => c.received.length === 2, 3000, 'two replies');
    expect(c.received).to.deep.equal([
      { text: '{"bin":1}', binary: true },
      { text: '{"text":1}', binary: false },
    ]);
  });

  it('rejects a batched reply: the requests get an error notice and the onramp counts an error', async () => {
    await echo([{ id: 'batch', type: 'generic::batch', config: { count: 2 } }]);
    const a = await Client.open(`ws://127.0.0.1:${port}/`);
    const b = await Client.open(`ws://127.0.0.1:${port}/`);
    clients.push(a, b);
    await a.send('{"a":1}');
    await b.send('{"b":1}');
    await eventually(() => a.received.length === 1 && b.received.length === 1, 3000, 'the error notices');
    for (const c of [a, b]) expect(JSON.parse(c.received[0].text).error).to.match(/batched replies are not supported/);
    expect(runtime.onramp('/onramp/ws/main')!.runtime.counters.error).to.equal(1);
  });
});

describe('ws onramp defaults', () => {
  let runtime: Runtime;
  beforeEach(async () => {
    runtime = await new Runtime({ logger: createLogger('silent') }).start();
  });
  afterEach(() => runtime.shutdown());

  it('listens on 127.0.0.1 when its config gives no host', async () => {
    const port = await freePort();
    runtime.publish('onramp', { id: 'ws', type: 'ws', config: { port } });
    runtime.publish('pipeline', {
      id: 'p',
      interface: { inputs: ['in'], outputs: ['out'] },
      nodes: [{ id: 'pass', type: 'passthrough' }],
      links: { in: ['pass'], pass: ['out'] },
    });
    runtime.publish('binding', { id: 'b', links: { '/onramp/ws/{instance}/out': ['/pipeline/p/{instance}/in'] } });
    await runtime.activate('binding', 'b', 'main');
    expect(boundAddresses(port, 'tcp'), 'addresses listening on the port').to.deep.equal(['127.0.0.1']);
    const c = await Client.open(`ws://127.0.0.1:${port}/`);
    await c.send('{"local":true}');
    await eventually(() => runtime.onramp('/onramp/ws/main')!.runtime.counters.out === 1, 3000, "the local client's message");
    await c.close();
  });
});
