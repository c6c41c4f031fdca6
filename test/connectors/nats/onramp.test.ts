import { expect } from 'chai';
import type { NatsConnection } from '@nats-io/nats-core';
import { AckPolicy, jetstream, jetstreamManager, StorageType, type JetStreamManager } from '@nats-io/jetstream';
import { createLogger } from '../../../src/core/logger';
import { closeConnection, natsConnect } from '../../../src/connectors/nats/connection';
import { natsOnramp } from '../../../src/connectors/nats/onramp';
import { call, eventually, startRuntime, type Started } from '../../helpers/runtime';
import { requireService } from '../../helpers/services';
import { client, directOnramp, freePort, hdrs, monitorBase, serviceHost, unique, waitForSubscribers, type DirectOnramp } from './helpers';

const text = (s: string) => new TextEncoder().encode(s);

describe('nats onramp (against the nats service)', function () {
  let nc: NatsConnection;
  let ramp: DirectOnramp | undefined;
  const ramps: DirectOnramp[] = [];
  const open = async (...args: Parameters<typeof directOnramp>) => {
    const r = await directOnramp(...args);
    ramps.push(r);
    return r;
  };

  before(async function () {
    await requireService(this, 'nats');
    nc = await client();
  });
  after(async () => nc?.close());
  afterEach(async () => {
    await Promise.all(ramps.splice(0).map((r) => r.stop()));
    ramp = undefined;
  });

  describe('core NATS', () => {
    it('turns each message into one event with meta nats.reply and nats.headers, and the spec origin URI', async () => {
      const subject = unique('eddy.test.in');
      ramp = await open({ hosts: [serviceHost()], subject });
      await waitForSubscribers(monitorBase(), subject, 1);
      nc.publish(subject, text('{"n":1}'), { reply: 'answer.here', headers: hdrs({ 'X-Trace': 'abc', Multi: ['one', 'two'] }) });
      nc.publish(subject, text('{"n":2}'));
      await eventually(() => ramp!.events.length === 2, 10000, 'two events');
      expect(ramp.events.map((e) => e.data)).to.deep.equal([{ n: 1 }, { n: 2 }]);
      expect(ramp.events[0].meta).to.deep.equal({ nats: { reply: 'answer.here', headers: { 'X-Trace': ['abc'], Multi: ['one', 'two'] } } });
      expect(ramp.events[1].meta).to.deep.equal({ nats: {} });
      expect(ramp.events[0].originUri).to.equal(`svc-nats://${serviceHost()}/${subject}`);
      expect(ramp.events[0].transactional).to.equal(false);
      expect(ramp.runtime.counters.bytes).to.equal(14);
    });

    it('keeps messages apart: preprocessors see one message at a time and are flushed after it', async () => {
      const subject = unique('eddy.test.lines');
      ramp = await open({ hosts: [serviceHost()], subject }, { preprocessors: ['lines'] });
      await waitForSubscribers(monitorBase(), subject, 1);
      nc.publish(subject, text('{"a":1}\n{"a":2}')); // two lines, the last without a newline
      nc.publish(subject, text('{"b":1}'));
      await eventually(() => ramp!.events.length === 3, 10000, 'three events');
      expect(ramp.events.map((e) => e.data)).to.deep.equal([{ a: 1 }, { a: 2 }, { b: 1 }]);
    });

    it('an undecodable message goes to err, and the next one still arrives', async () => {
      const subject = unique('eddy.test.bad');
      ramp = await open({ hosts: [serviceHost()], subject: `${subject}.*` });
      await waitForSubscribers(monitorBase(), `${subject}.*`, 1);
      nc.publish(`${subject}.x`, text('not json'));
      nc.publish(`${subject}.y`, text('{"ok":true}'));
      await eventually(() => ramp!.events.length === 1 && ramp!.errors.length === 1, 10000, 'one event and one error');
      expect(ramp.events[0].data).to.deep.equal({ ok: true });
      expect(ramp.errors[0].data).to.include({ raw: 'not json' });
      expect(ramp.runtime.counters.error).to.equal(1);
    });

    it('in a queue group, the members share the messages: each message reaches exactly one', async () => {
      const subject = unique('eddy.test.queue');
      const config = { hosts: [serviceHost()], subject, queue: unique('workers') };
      const [a, b] = [await open(config), await open(config)];
      await waitForSubscribers(monitorBase(), subject, 2);
      for (let i = 0; i < 100; i++) nc.publish(subject, text(JSON.stringify({ i })));
      await eventually(() => a.events.length + b.events.length === 100, 10000, '100 events across both');
      const seen = [...a.events, ...b.events].map((e) => (e.data as { i: number }).i).sort((x, y) => x - y);
      expect(seen).to.deep.equal(Array.from({ length: 100 }, (_, i) => i));
      expect(a.events.length, 'member a got some').to.be.greaterThan(0);
      expect(b.events.length, 'member b got some').to.be.greaterThan(0);
    });

    it('while the breaker is triggered, what arrives is held and delivered in order on restore', async () => {
      const subject = unique('eddy.test.held');
      ramp = await open({ hosts: [serviceHost()], subject });
      await waitForSubscribers(monitorBase(), subject, 1);
      ramp.breaker.trigger('/offramp/test');
      for (let i = 0; i < 5; i++) nc.publish(subject, text(JSON.stringify({ i })));
      await nc.flush();
      // all five arrived and are held: one delivered while triggered would not be among them
      await eventually(() => ramp!.runtime.held === 5, 10000, 'five messages held');
      expect(ramp.events).to.deep.equal([]);
      ramp.breaker.restore('/offramp/test');
      await eventually(() => ramp!.events.length === 5, 10000, 'the held events');
      expect(ramp.events.map((e) => e.data)).to.deep.equal([0, 1, 2, 3, 4].map((i) => ({ i })));
    });

    it('an unreachable server fails create() at once with an error naming the servers', async () => {
      const port = await freePort();
      let error: Error | undefined;
      await directOnramp({ hosts: [`127.0.0.1:${port}`], subject: 'x' }).catch((e: unknown) => (error = e as Error));
      expect(error?.message).to.match(new RegExp(`cannot connect to NATS at 127\\.0\\.0\\.1:${port}: .*(CONNECTION_REFUSED|refused)`, 'i'));
    });

    it('refuses queue together with jetstream, and half of a credential pair', () => {
      const base = { hosts: ['127.0.0.1:4222'], subject: 's', options: { echo: true, max_reconnects: -1, tls: false } };
      expect(() => natsOnramp.validate!({ ...base, queue: 'q', jetstream: { stream: 's', durable: 'd', batch: 1, ack_wait_ms: 1000 } })).to.throw(
        /queue and jetstream/,
      );
      expect(() => natsOnramp.validate!({ ...base, options: { ...base.options, username: 'u' } })).to.throw(/username and options.password/);
      expect(() => natsOnramp.validate!({ ...base, options: { ...base.options, cert_path: '/c' } })).to.throw(/cert_path and options.key_path/);
      expect(() => natsOnramp.validate!({ ...base, options: { ...base.options, token: 't', credentials_path: '/c' } })).to.throw(/one authentication method/);
    });
  });

  describe('options.echo and options.reconnect_buffer_size', () => {
    it('echo: false reaches the server: the connection does not get back what it published itself, only what others publish', async () => {
      const seen: Record<string, string[]> = {};
      for (const echo of [true, false]) {
        const subject = unique('eddy.test.echo');
        // natsConnect is how the onramp (and offramp) dial: the options go through the same clientOptions
        const own = await natsConnect([serviceHost()], { echo, max_reconnects: -1, tls: false }, 'eddy-test-echo');
        try {
          const got: string[] = [];
          own.nc.subscribe(subject, {
            callback: (err, msg) => {
              if (!err) got.push(new TextDecoder().decode(msg.data));
            },
          });
          own.nc.publish(subject, text('self'));
          // the server answered the flush after processing the publish: an echo of it has arrived before the PONG
          await own.nc.flush();
          nc.publish(subject, text('other'));
          await eventually(() => got.includes('other'), 10000, `the other connection's message (echo ${echo})`);
          seen[String(echo)] = got;
        } finally {
          await closeConnection(own.nc, createLogger('silent'), 'test');
        }
      }
      expect(seen).to.deep.equal({ true: ['self', 'other'], false: ['other'] });
    });

    it('an onramp with echo: false and a reconnect_buffer_size receives what other connections publish', async () => {
      const subject = unique('eddy.test.in');
      ramp = await open({ hosts: [serviceHost()], subject, options: { echo: false, reconnect_buffer_size: 8 * 1024 * 1024 } });
      await waitForSubscribers(monitorBase(), subject, 1);
      nc.publish(subject, text('{"n":1}'));
      await eventually(() => ramp!.events.length === 1, 10000, 'the event');
      expect(ramp.events[0].data).to.deep.equal({ n: 1 });
    });
  });

  describe('JetStream', () => {
    let jsm: JetStreamManager;
    let stream: string;
    let subject: string;
    before(async () => {
      jsm = await jetstreamManager(nc);
    });
    beforeEach(async () => {
      stream = unique('EDDY_TEST');
      subject = unique('eddy.test.js');
      await jsm.streams.add({ name: stream, subjects: [subject], storage: StorageType.Memory });
    });
    afterEach(async () => {
      await Promise.all(ramps.splice(0).map((r) => r.stop()));
      await jsm.streams.delete(stream).catch(() => undefined);
    });
    const publish = async (n: number, from = 0) => {
      const js = jetstream(nc);
      for (let i = from; i < from + n; i++) await js.publish(subject, text(JSON.stringify({ i })));
    };
    const pending = async (durable: string) => {
      const info = await jsm.consumers.info(stream, durable);
      return { ackPending: info.num_ack_pending, waiting: info.num_pending, ackFloor: info.ack_floor.stream_seq };
    };

    it('creates the durable consumer, marks events transactional, and acks each message once its event is acked', async () => {
      const durable = unique('d');
      await publish(3);
      ramp = await open({ hosts: [serviceHost()], subject, jetstream: { stream, durable } });
      await eventually(() => ramp!.events.length === 3, 10000, 'three events');
      expect(ramp.events.map((e) => e.data)).to.deep.equal([{ i: 0 }, { i: 1 }, { i: 2 }]);
      expect(ramp.events.every((e) => e.transactional)).to.equal(true);
      expect(ramp.events[0].meta).to.deep.equal({ nats: { jetstream: { stream, sequence: 1, delivered: 1 } } });
      expect((await pending(durable)).ackPending).to.equal(3);
      for (const e of ramp.events) ramp.insight('ack', e);
      await eventually(async () => (await pending(durable)).ackPending === 0, 10000, 'no ack pending');
      const info = await jsm.consumers.info(stream, durable);
      expect(info.config.ack_policy).to.equal('explicit');
      expect(info.config.filter_subject).to.equal(subject);
      expect(info.ack_floor.stream_seq).to.equal(3);
    });

    it('a failed event naks its message: it is delivered again at once', async () => {
      await publish(1);
      ramp = await open({ hosts: [serviceHost()], subject, jetstream: { stream, durable: unique('d') } });
      await eventually(() => ramp!.events.length === 1, 10000, 'the event');
      ramp.insight('fail', ramp.events[0]);
      await eventually(() => ramp!.events.length === 2, 10000, 'the redelivery');
      expect(ramp.events[1].data).to.deep.equal({ i: 0 });
      expect(ramp.events[1].meta.nats).to.deep.include({ jetstream: { stream, sequence: 1, delivered: 2 } });
    });

    it('a message split into several events is acked only when all of them are', async () => {
      const durable = unique('d');
      await jetstream(nc).publish(subject, text('{"a":1}\n{"a":2}\n'));
      await jetstream(nc).publish(subject, text('{"b":1}\n')); // the sentinel: one message, one event
      ramp = await open({ hosts: [serviceHost()], subject, jetstream: { stream, durable } }, { preprocessors: ['lines'] });
      await eventually(() => ramp!.events.length === 3, 10000, 'three events');
      ramp.insight('ack', ramp.events[0]);
      // the sentinel's ack goes out on the same connection after any ack the first event could have sent
      ramp.insight('ack', ramp.events[2]);
      await eventually(async () => (await pending(durable)).ackPending <= 1, 10000, "the sentinel's ack");
      expect((await pending(durable)).ackPending, 'the split message still unacked').to.equal(1);
      ramp.insight('ack', ramp.events[1]);
      await eventually(async () => (await pending(durable)).ackPending === 0, 10000, 'the ack');
    });

    it('an undecodable message goes to err and is terminated (not redelivered); the next arrives', async () => {
      const durable = unique('d');
      const js = jetstream(nc);
      await js.publish(subject, text('not json'));
      await js.publish(subject, text('{"ok":1}'));
      ramp = await open({ hosts: [serviceHost()], subject, jetstream: { stream, durable, ack_wait_ms: 1000 } });
      await eventually(() => ramp!.events.length === 1 && ramp!.errors.length === 1, 10000, 'one event, one error');
      ramp.insight('ack', ramp.events[0]);
      // both settled for good: the ack floor passes a message only once it is acked or terminated, never one left
      // unacked or nak'ed for redelivery
      await eventually(async () => (await pending(durable)).ackFloor === 2, 10000, 'the ack floor past both messages');
      expect((await pending(durable)).ackPending).to.equal(0);
      expect(ramp.errors.length).to.equal(1);
      expect(ramp.events.length).to.equal(1);
    });

    it('pulls no more while the breaker is triggered (one batch at most), and resumes on restore', async () => {
      const durable = unique('d');
      await publish(20);
      ramp = await open({ hosts: [serviceHost()], subject, jetstream: { stream, durable, batch: 5 } });
      ramp.breaker.trigger('/offramp/test');
      // the pull loop has stopped: it pulls again only on restore
      await eventually(() => ramp!.source.inputs!().reading === 0, 10000, 'the pull loop to stop');
      // what the server handed out (delivered, unacked) is at most the batch in flight when the breaker was triggered
      const paused = await pending(durable);
      expect(paused.ackPending).to.be.at.most(5);
      expect(paused.waiting).to.be.at.least(15);
      expect(ramp.events.length).to.be.at.most(5);
      ramp.breaker.restore('/offramp/test');
      await eventually(() => ramp!.events.length === 20, 10000, 'all 20 events');
      expect(ramp.events.map((e) => (e.data as { i: number }).i)).to.deep.equal(Array.from({ length: 20 }, (_, i) => i));
    });

    it('on close, unacked messages go back to the server: the next reader gets them without waiting for ack_wait', async () => {
      const durable = unique('d');
      await publish(4);
      const first = await directOnramp({ hosts: [serviceHost()], subject, jetstream: { stream, durable } });
      await eventually(() => first.events.length === 4, 10000, 'four events');
      first.insight('ack', first.events[0]);
      first.insight('ack', first.events[1]);
      await first.stop();
      ramp = await open({ hosts: [serviceHost()], subject, jetstream: { stream, durable } });
      await eventually(() => ramp!.events.length === 2, 5000, 'the two unacked messages again (ack_wait is 30 s)');
      expect(ramp.events.map((e) => e.data)).to.deep.equal([{ i: 2 }, { i: 3 }]);
    });

    it('refuses a missing stream, a push consumer and a consumer filtered on another subject, naming them', async () => {
      const fails = (config: Record<string, unknown>) =>
        directOnramp(config).then(
          () => expect.fail('created'),
          (e: unknown) => (e as Error).message,
        );
      expect(await fails({ hosts: [serviceHost()], subject, jetstream: { stream: unique('NOPE'), durable: 'd' } })).to.match(/stream 'NOPE_.*' not found/);
      await jsm.consumers.add(stream, { durable_name: 'pushy', deliver_subject: unique('push'), ack_policy: AckPolicy.Explicit });
      expect(await fails({ hosts: [serviceHost()], subject, jetstream: { stream, durable: 'pushy' } })).to.match(/pushy is a push consumer/);
      await jsm.streams.update(stream, { subjects: [subject, `${subject}.other`] });
      await jsm.consumers.add(stream, { durable_name: 'other', filter_subject: `${subject}.other`, ack_policy: AckPolicy.Explicit });
      expect(await fails({ hosts: [serviceHost()], subject, jetstream: { stream, durable: 'other' } })).to.match(/filters on '.*\.other', not on subject/);
    });
  });
});

describe('nats options over REST (publishing, no connection)', () => {
  let rt: Started;
  beforeEach(async () => (rt = await startRuntime()));
  afterEach(async () => rt.stop());
  const publish = (kind: 'onramp' | 'offramp', id: string, options: Record<string, unknown>) =>
    call(rt.base, 'POST', `/${kind}`, { body: { id, type: 'nats', config: { hosts: ['127.0.0.1:4222'], subject: 'eddy.in', options } } });
  const error = (reply: { body: unknown }) => (reply.body as { error: string }).error;

  it("accepts the spec's echo and reconnect_buffer_size on the onramp; the offramp refuses a reconnect buffer it cannot keep, saying why", async () => {
    expect((await publish('onramp', 'spec', { echo: false, reconnect_buffer_size: 8388608, max_reconnects: 10 })).status).to.equal(201);
    expect((await publish('onramp', 'echoing', { echo: true, reconnect_buffer_size: 0 })).status).to.equal(201);
    const notBool = await publish('onramp', 'notbool', { echo: 'no' });
    expect(notBool.status).to.equal(400);
    expect(error(notBool)).to.match(/config\.options\.echo: must be boolean/);
    const negative = await publish('onramp', 'negative', { reconnect_buffer_size: -1 });
    expect(negative.status).to.equal(400);
    expect(error(negative)).to.match(/config\.options\.reconnect_buffer_size: must be >= 0/);

    expect((await publish('offramp', 'quiet', { echo: false, reconnect_buffer_size: 0 })).status).to.equal(201);
    const buffered = await publish('offramp', 'buffered', { reconnect_buffer_size: 1024 });
    expect(buffered.status).to.equal(400);
    expect(error(buffered)).to.match(
      /config\.options\.reconnect_buffer_size: only 0 is possible here: nats\.js keeps no publishes for a reconnect, so the offramp fails a send while disconnected/,
    );
  });
});
