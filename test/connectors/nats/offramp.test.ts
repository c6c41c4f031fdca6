import { expect } from 'chai';
import type { NatsConnection } from '@nats-io/nats-core';
import { jetstreamManager, StorageType } from '@nats-io/jetstream';
import type { EddyEvent } from '../../../src/core/event';
import { natsOfframp } from '../../../src/connectors/nats/offramp';
import { eventually } from '../../helpers/runtime';
import { requireService } from '../../helpers/services';
import { Collector, PrivateServer, client, directOfframp, event, freePort, kinds, serviceHost, unique, type DirectOfframp } from './helpers';

const headersOf = (c: Collector, i: number) => {
  const h = c.msgs[i].headers;
  return h ? Object.fromEntries([...h].map(([k, v]) => [k, [...v]])) : undefined;
};

describe('nats offramp', function () {
  let nc: NatsConnection;
  let ramp: DirectOfframp | undefined;

  before(async function () {
    await requireService(this, 'nats');
    nc = await client();
  });
  after(async () => nc?.close());
  afterEach(async () => {
    await ramp?.stop();
    ramp = undefined;
  });

  it('publishes each event to subject with the configured reply and headers, and acks it once the server confirmed it', async () => {
    const subject = unique('eddy.test.out');
    const got = new Collector(nc, subject);
    await nc.flush();
    ramp = await directOfframp({ hosts: [serviceHost()], subject, reply: 'replies.here', headers: { 'X-Source': 'eddy', Multi: ['a', 'b'] } });
    ramp.send(event({ n: 1 }));
    ramp.send(event('two'));
    await eventually(() => got.msgs.length === 2 && ramp!.insights.length === 2, 10000, 'two messages and two acks');
    expect(got.texts).to.deep.equal(['{"n":1}', '"two"']);
    expect(got.msgs.map((m) => m.reply)).to.deep.equal(['replies.here', 'replies.here']);
    expect(headersOf(got, 0)).to.deep.equal({ 'X-Source': ['eddy'], Multi: ['a', 'b'] });
    expect(kinds(ramp.insights)).to.deep.equal(['ack', 'ack']);
    expect(ramp.insights[0].meta).to.have.property('time').that.is.a('number');
    expect(ramp.offramp.counters).to.include({ in: 2, out: 2, error: 0 });
  });

  it('meta nats.subject, nats.reply and nats.headers override the config per event; a batch is one message per member', async () => {
    const subject = unique('eddy.test.out');
    const other = unique('eddy.test.other');
    const main = new Collector(nc, subject);
    const elsewhere = new Collector(nc, other);
    await nc.flush();
    ramp = await directOfframp({ hosts: [serviceHost()], subject, headers: { Keep: 'k', Over: 'config' } });
    ramp.send(event({ to: 'other' }, { nats: { subject: other, reply: 'r.1', headers: { Over: ['meta', 'more'] } } }));
    const batch: EddyEvent = {
      ...event(null),
      isBatch: true,
      data: [{ data: { value: { m: 1 }, meta: {}, ingest_ns: 1n } }, { data: { value: { m: 2 }, meta: {}, ingest_ns: 1n } }],
    };
    ramp.send(batch);
    await eventually(() => elsewhere.msgs.length === 1 && main.msgs.length === 2 && ramp!.insights.length === 2, 10000, 'all messages and acks');
    expect(elsewhere.texts).to.deep.equal(['{"to":"other"}']);
    expect(elsewhere.msgs[0].reply).to.equal('r.1');
    expect(headersOf(elsewhere, 0)).to.deep.equal({ Keep: ['k'], Over: ['meta', 'more'] });
    expect(main.texts).to.deep.equal(['{"m":1}', '{"m":2}']);
    expect(kinds(ramp.insights)).to.deep.equal(['ack', 'ack']);
  });

  it('fails an event whose meta it cannot use (a wildcard subject, a header that is not text) and sends nothing for it', async () => {
    const subject = unique('eddy.test.out');
    const got = new Collector(nc, subject);
    await nc.flush();
    ramp = await directOfframp({ hosts: [serviceHost()], subject });
    ramp.send(event({ bad: 1 }, { nats: { subject: 'a.*' } }));
    ramp.send(event({ bad: 2 }, { nats: { headers: { N: 5 } } }));
    ramp.send(event({ good: 3 }));
    await eventually(() => ramp!.insights.length === 3, 10000, 'three insights');
    expect(kinds(ramp.insights)).to.deep.equal(['fail', 'fail', 'ack']);
    expect(ramp.insights[0].meta?.error).to.match(/meta nats.subject must be a subject without spaces or wildcards/);
    expect(ramp.insights[1].meta?.error).to.match(/header 'N': values must be strings/);
    await eventually(() => got.msgs.length === 1, 5000, 'the good message');
    expect(got.texts).to.deep.equal(['{"good":3}']);
  });

  describe('jetstream: true', () => {
    it('acks an event once the stream stored it, and fails one no stream captures', async () => {
      const jsm = await jetstreamManager(nc);
      const stream = unique('EDDY_OUT');
      const subject = unique('eddy.test.jsout');
      await jsm.streams.add({ name: stream, subjects: [subject], storage: StorageType.Memory });
      try {
        ramp = await directOfframp({ hosts: [serviceHost()], subject, jetstream: true });
        ramp.send(event({ n: 1 }, { nats: { headers: { 'Nats-Msg-Id': 'one' } } }));
        ramp.send(event({ n: 1 }, { nats: { headers: { 'Nats-Msg-Id': 'one' } } })); // a duplicate the stream drops, yet acks
        ramp.send(event({ n: 2 }, { nats: { subject: unique('nobody.stores') } }));
        await eventually(() => ramp!.insights.length === 3, 15000, 'three insights');
        const byData = ramp.insights.map((i) => [i.kind, i.event!.data]);
        expect(byData).to.deep.include.members([
          ['ack', { n: 1 }],
          ['ack', { n: 1 }],
          ['fail', { n: 2 }],
        ]);
        expect(ramp.insights.find((i) => i.kind === 'fail')!.meta?.error).to.match(/JetStream publish to .* failed/);
        const info = await jsm.streams.info(stream);
        expect(info.state.messages).to.equal(1);
        const stored = await jsm.streams.getMessage(stream, { seq: 1 });
        expect(new TextDecoder().decode(stored!.data)).to.equal('{"n":1}');
      } finally {
        await jsm.streams.delete(stream).catch(() => undefined);
      }
    });
  });

  it('an unreachable server fails create() with an error naming it', async () => {
    const port = await freePort();
    const error = await directOfframp({ hosts: [`nats://127.0.0.1:${port}`], subject: 'x' }).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(error?.message).to.match(new RegExp(`cannot connect to NATS at nats://127\\.0\\.0\\.1:${port}`));
  });

  it('refuses reply together with jetstream (a JetStream publish uses the reply subject for its PubAck)', () => {
    const config = { hosts: ['h:1'], subject: 's', reply: 'r', headers: {}, options: { echo: true, max_reconnects: -1, tls: false }, jetstream: true };
    expect(() => natsOfframp.validate!(config)).to.throw(/reply and jetstream/);
  });

  describe('a server that goes away (a private nats-server, restarted on its port)', () => {
    let server: PrivateServer | undefined;
    afterEach(async () => {
      await ramp?.stop();
      ramp = undefined;
      await server?.stop();
      server = undefined;
    });

    it('triggers the breaker, fails sends while it is gone, restores the breaker and delivers once it is back', async () => {
      server = await PrivateServer.start();
      const subject = unique('eddy.test.restart');
      ramp = await directOfframp({ hosts: [server.host], subject });
      const peer = await client(server.host, { maxReconnectAttempts: -1, reconnectTimeWait: 100 });
      try {
        const got = new Collector(peer, subject);
        await peer.flush();
        ramp.send(event({ n: 1 }));
        await eventually(() => got.msgs.length === 1 && ramp!.insights.length === 1, 10000, 'the first message');

        await server.down();
        await eventually(() => kinds(ramp!.insights).includes('trigger'), 10000, 'the breaker to be triggered');
        ramp.send(event({ n: 2 }));
        await eventually(() => kinds(ramp!.insights).includes('fail'), 10000, 'the send while down to fail');
        expect(ramp.insights.find((i) => i.kind === 'fail')!.meta?.error).to.match(/not connected to NATS/);

        await server.up();
        await eventually(() => kinds(ramp!.insights).includes('restore'), 15000, 'the breaker to be restored');
        // the peer reconnects by itself too; its subscription is back once it has flushed after the reconnect
        await eventually(
          async () => {
            await peer.flush().catch(() => undefined);
            return (
              !peer.isClosed() &&
              (await peer.flush().then(
                () => true,
                () => false,
              ))
            );
          },
          15000,
          'the peer to be back',
        );
        ramp.send(event({ n: 3 }));
        await eventually(() => got.msgs.length === 2, 10000, 'the message after the restart');
        expect(got.texts).to.deep.equal(['{"n":1}', '{"n":3}']);
        await eventually(() => ramp!.insights.length === 5, 5000, 'the last ack');
        expect(kinds(ramp.insights)).to.deep.equal(['ack', 'trigger', 'fail', 'restore', 'ack']);
      } finally {
        await peer.close();
      }
    });

    it('options.max_reconnects: gives up after that many attempts; the breaker stays triggered and sends fail, naming why', async () => {
      server = await PrivateServer.start();
      ramp = await directOfframp({ hosts: [server.host], subject: 'x', options: { max_reconnects: 2 } });
      await server.down();
      await eventually(
        async () => {
          ramp!.send(event({ n: 1 }));
          await new Promise((r) => setTimeout(r, 50));
          return ramp!.insights.some((i) => String(i.meta?.error).includes('connection is closed'));
        },
        15000,
        'a send failing because the client gave up',
      );
      expect(kinds(ramp.insights)[0]).to.equal('trigger');
      expect(kinds(ramp.insights)).to.not.include('restore');
    });
  });
});
