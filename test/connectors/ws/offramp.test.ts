import { expect } from 'chai';
import type { EddyEvent } from '../../../src/core/event';
import { eventually } from '../../helpers/runtime';
import { type DirectOfframp, Server, directOfframp, event, freePort, kinds } from './helpers';

const texts = (server: Server) => server.received.map((r) => [r.text, r.binary]);
const correlations = (events: EddyEvent[]) => events.map((e) => e.meta.correlation);

describe('ws offramp', () => {
  const servers: Server[] = [];
  let ramp: DirectOfframp | undefined;
  const serve = async (port = 0, answer?: Parameters<typeof Server.start>[1]) => {
    const s = await Server.start(port, answer);
    servers.push(s);
    return s;
  };
  afterEach(async () => {
    await ramp?.stop();
    ramp = undefined;
    await Promise.all(servers.splice(0).map((s) => s.stop()));
  });

  it('sends each event as one text message, binary with meta binary, and acks each with its time', async () => {
    const server = await serve();
    ramp = await directOfframp({ url: server.url });
    ramp.send(event({ n: 1 }));
    ramp.send(event({ n: 2 }, { binary: true }));
    ramp.send(event('plain'));
    await eventually(() => server.received.length === 3, 3000, 'three messages');
    expect(texts(server)).to.deep.equal([
      ['{"n":1}', false],
      ['{"n":2}', true],
      ['"plain"', false],
    ]);
    await eventually(() => ramp!.insights.length === 3, 3000, 'three acks');
    expect(kinds(ramp.insights)).to.deep.equal(['ack', 'ack', 'ack']);
    expect(ramp.insights[0].meta).to.have.property('time').that.is.a('number');
  });

  it('config binary: true sends binary messages; meta binary false overrides it', async () => {
    const server = await serve();
    ramp = await directOfframp({ url: server.url, binary: true });
    ramp.send(event({ n: 1 }));
    ramp.send(event({ n: 2 }, { binary: false }));
    await eventually(() => server.received.length === 2, 3000, 'two messages');
    expect(texts(server)).to.deep.equal([
      ['{"n":1}', true],
      ['{"n":2}', false],
    ]);
  });

  it('meta url sends to another server over its own connection; an unreachable one fails the event without triggering the breaker', async () => {
    const main = await serve();
    const other = await serve();
    ramp = await directOfframp({ url: main.url });
    ramp.send(event({ to: 'main' }));
    ramp.send(event({ to: 'other' }, { url: other.url }));
    ramp.send(event({ to: 'other', again: true }, { url: other.url }));
    await eventually(() => main.received.length === 1 && other.received.length === 2, 3000, 'messages at both servers');
    expect(main.received[0].text).to.equal('{"to":"main"}');
    expect(other.received.map((r) => r.text)).to.deep.equal(['{"to":"other"}', '{"to":"other","again":true}']);
    expect(other.sockets.size).to.equal(1);

    const nobody = `ws://127.0.0.1:${await freePort()}/`;
    ramp.send(event({ to: 'nobody' }, { url: nobody }));
    ramp.send(event({ bad: 'url' }, { url: 'http://example.invalid/' }));
    await eventually(() => ramp!.insights.length === 5, 3000, 'five insights');
    // the bad URL fails at once, the unreachable server after its connection attempt: order by event
    const fails = ramp.insights.filter((i) => i.kind === 'fail').sort((x, y) => x.event!.id.seq - y.event!.id.seq);
    expect(kinds(ramp.insights).filter((k) => k !== 'fail')).to.deep.equal(['ack', 'ack', 'ack']);
    expect(fails.map((i) => i.event!.data)).to.deep.equal([{ to: 'nobody' }, { bad: 'url' }]);
    expect(fails[0].meta?.error).to.match(/not connected to ws:\/\/127\.0\.0\.1/);
    expect(fails[1].meta?.error).to.match(/not a ws:\/\/ or wss:\/\/ URL/);

    // once that server is up, a send after the back-off delay opens the connection again
    const late = await serve(Number(new URL(nobody).port));
    await eventually(
      async () => {
        ramp!.send(event({ to: 'late' }, { url: nobody }));
        await new Promise((r) => setTimeout(r, 50));
        return late.received.length > 0;
      },
      3000,
      'a send to the override server once it is up',
    );
    expect(late.received[0].text).to.equal('{"to":"late"}');
  });

  it('reconnects after a server restart: breaker triggered while down, sends fail meanwhile, restored and delivering after', async () => {
    const first = await serve();
    const port = first.port;
    ramp = await directOfframp({ url: first.url });
    ramp.send(event({ n: 1 }));
    await eventually(() => first.received.length === 1, 3000, 'the first message');

    await first.stop();
    servers.splice(servers.indexOf(first), 1);
    await eventually(() => kinds(ramp!.insights).includes('trigger'), 3000, 'the breaker to be triggered');
    ramp.send(event({ n: 2 }));
    await eventually(() => kinds(ramp!.insights).includes('fail'), 3000, 'the send while down to fail');

    const second = await serve(port);
    await eventually(() => kinds(ramp!.insights).includes('restore'), 5000, 'the breaker to be restored');
    ramp.send(event({ n: 3 }));
    await eventually(() => second.received.length === 1, 3000, 'the message after reconnecting');
    expect(second.received[0].text).to.equal('{"n":3}');
    await eventually(() => ramp!.insights.length === 5, 3000, 'the last ack');
    expect(kinds(ramp.insights)).to.deep.equal(['ack', 'trigger', 'fail', 'restore', 'ack']);
    expect(ramp.insights[2].meta?.error).to.match(/not connected/);
  });

  it('starts with the breaker triggered when the server is not up yet, and restores it when it comes', async () => {
    const port = await freePort();
    ramp = await directOfframp({ url: `ws://127.0.0.1:${port}/` });
    expect(kinds(ramp.insights)).to.deep.equal(['trigger']);
    const server = await serve(port);
    await eventually(() => kinds(ramp!.insights).includes('restore'), 5000, 'the restore');
    ramp.send(event({ n: 1 }));
    await eventually(() => server.received.length === 1, 3000, 'the message');
  });

  it('close() closes its connections and stops reconnecting', async () => {
    const server = await serve();
    ramp = await directOfframp({ url: server.url });
    await eventually(() => server.sockets.size === 1, 3000, 'the connection');
    await ramp.stop();
    ramp = undefined;
    await eventually(() => server.sockets.size === 0, 3000, 'the connection to close');
  });

  describe('linked', () => {
    it('emits each server message on out with the correlation of the oldest unanswered request, and meta binary', async () => {
      const server = await serve(0, (text, binary, socket) => socket.send(Buffer.from(text), { binary }));
      ramp = await directOfframp({ url: server.url }, { linked: true });
      for (let i = 0; i < 20; i++) ramp.send(event({ i }, { correlation: `c${i}`, binary: i % 2 === 1 }));
      await eventually(() => ramp!.out.length === 20, 3000, '20 replies');
      expect(ramp.out.map((e) => e.data)).to.deep.equal(Array.from({ length: 20 }, (_, i) => ({ i })));
      expect(correlations(ramp.out)).to.deep.equal(Array.from({ length: 20 }, (_, i) => `c${i}`));
      expect(ramp.out.map((e) => e.meta.binary)).to.deep.equal(Array.from({ length: 20 }, (_, i) => i % 2 === 1));
      expect(ramp.err).to.deep.equal([]);
    });

    it('a server that sends several messages per request: the extra ones take the most recent request', async () => {
      const server = await serve(0, (text, _binary, socket) => {
        socket.send(text);
        socket.send(JSON.stringify({ more: JSON.parse(text) }));
      });
      ramp = await directOfframp({ url: server.url }, { linked: true });
      ramp.send(event({ q: 1 }, { correlation: 'one' }));
      await eventually(() => ramp!.out.length === 2, 3000, 'two messages for the first request');
      ramp.send(event({ q: 2 }, { correlation: 'two' }));
      await eventually(() => ramp!.out.length === 4, 3000, 'two messages for the second request');
      expect(ramp.out.map((e) => [e.data, e.meta.correlation])).to.deep.equal([
        [{ q: 1 }, 'one'],
        [{ more: { q: 1 } }, 'one'],
        [{ q: 2 }, 'two'],
        [{ more: { q: 2 } }, 'two'],
      ]);
    });

    it('an undecodable server message goes to err with the correlation; a batch is refused on err and failed', async () => {
      const server = await serve(0, (text, _binary, socket) => socket.send(text === '{"bad":true}' ? 'not json' : text));
      ramp = await directOfframp({ url: server.url }, { linked: true });
      const bad = event({ bad: true }, { correlation: 'b' });
      ramp.send(bad);
      await eventually(() => ramp!.err.length === 1, 3000, 'the decode error');
      expect(ramp.err[0].data).to.deep.include({ event_id: `${bad.id.uid}:${bad.id.seq}` });
      expect((ramp.err[0].data as { error: string }).error).to.match(/cannot decode/);
      expect(ramp.err[0].meta).to.include({ correlation: 'b' });
      expect(ramp.err[0].meta.error).to.equal((ramp.err[0].data as { error: string }).error);

      const batch: EddyEvent = {
        ...event(null),
        isBatch: true,
        data: [
          { data: { value: { m: 1 }, meta: { correlation: 'x' }, ingest_ns: 1n } },
          { data: { value: { m: 2 }, meta: { correlation: 'y' }, ingest_ns: 1n } },
        ],
      };
      ramp.send(batch);
      await eventually(() => ramp!.err.length === 2, 3000, 'the batch refused');
      expect((ramp.err[1].data as { error: string }).error).to.match(/batched events are not supported/);
      expect(ramp.err[1].meta.correlation).to.deep.equal(['x', 'y']);
      await eventually(() => kinds(ramp!.insights).includes('fail'), 3000, 'the fail');
      expect(server.received.map((r) => r.text)).to.deep.equal(['{"bad":true}']);
      expect(ramp.offramp.counters.error).to.equal(1);
    });

    it('a send that fails while the server is down goes to err with the correlation', async () => {
      const server = await serve();
      ramp = await directOfframp({ url: server.url }, { linked: true });
      await server.stop();
      servers.splice(0);
      await eventually(() => kinds(ramp!.insights).includes('trigger'), 3000, 'the trigger');
      ramp.send(event({ n: 1 }, { correlation: 'lost' }));
      await eventually(() => ramp!.err.length === 1, 3000, 'the err event');
      expect(ramp.err[0].meta).to.include({ correlation: 'lost' });
      expect((ramp.err[0].data as { error: string }).error).to.match(/not connected/);
      expect(kinds(ramp.insights)).to.deep.equal(['trigger', 'fail']);
    });
  });
});
