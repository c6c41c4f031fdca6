import { expect } from 'chai';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NatsConnection } from '@nats-io/nats-core';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { call, eventually, startRuntime, type Started } from '../../helpers/runtime';
import { requireService } from '../../helpers/services';
import { Collector, PrivateServer, client, freePort, hdrs, monitorBase, serviceHost, unique, waitForSubscribers } from './helpers';

const passthrough = {
  id: 'relay',
  interface: { inputs: ['in'], outputs: ['out'] },
  nodes: [{ id: 'pass', type: 'passthrough' }],
  links: { in: ['pass'], pass: ['out'] },
};

const text = (s: string) => new TextEncoder().encode(s);
const lines = (file: string) => {
  try {
    return readFileSync(file, 'utf8').split('\n').filter(Boolean);
  } catch {
    return [];
  }
};

describe('nats end to end over REST', function () {
  let rt: Started;
  let dir: string;
  let nc: NatsConnection;

  before(async function () {
    await requireService(this, 'nats');
    nc = await client();
  });
  after(async () => nc?.close());
  beforeEach(async () => {
    rt = await startRuntime();
    dir = mkdtempSync(join(tmpdir(), 'eddy-nats-'));
  });
  afterEach(async () => {
    await rt.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const publish = async (kind: string, body: unknown) => expect((await call(rt.base, 'POST', `/${kind}`, { body })).status, `${kind} published`).to.equal(201);

  it('nats -> onramp -> pipeline -> offramp -> nats: payload, reply subject and headers make the round trip; an undecodable message goes to err and the next still passes', async () => {
    const inSubject = unique('eddy.e2e.in');
    const outSubject = unique('eddy.e2e.out');
    const errors = join(dir, 'errors.json');
    const got = new Collector(nc, outSubject);
    await nc.flush();
    await publish('onramp', { id: 'from_nats', type: 'nats', config: { hosts: [serviceHost()], subject: inSubject } });
    await publish('pipeline', passthrough);
    await publish('offramp', { id: 'to_nats', type: 'nats', config: { hosts: [serviceHost()], subject: outSubject } });
    await publish('offramp', { id: 'errors', type: 'file', config: { file: errors } });
    await publish('binding', {
      id: 'relay',
      links: {
        '/onramp/from_nats/{instance}/out': ['/pipeline/relay/{instance}/in'],
        '/pipeline/relay/{instance}/out': ['/offramp/to_nats/{instance}/in'],
        '/onramp/from_nats/{instance}/err': ['/pipeline/relay/{instance}_err/in'],
        '/pipeline/relay/{instance}_err/out': ['/offramp/errors/{instance}/in'],
      },
    });
    expect((await call(rt.base, 'POST', '/binding/relay/one')).status).to.equal(201);
    await waitForSubscribers(monitorBase(), inSubject, 1);

    nc.publish(inSubject, text('{"q":"hello"}'), { reply: 'caller.inbox.1', headers: hdrs({ 'X-Request-Id': 'r-1', Accept: ['json', 'yaml'] }) });
    nc.publish(inSubject, text('not json'));
    nc.publish(inSubject, text('{"q":"after"}'));
    await eventually(() => got.msgs.length === 2, 10000, 'two relayed messages');
    expect(got.texts).to.deep.equal(['{"q":"hello"}', '{"q":"after"}']);
    expect(got.msgs[0].reply).to.equal('caller.inbox.1');
    expect(Object.fromEntries([...got.msgs[0].headers!].map(([k, v]) => [k, [...v]]))).to.deep.equal({ 'X-Request-Id': ['r-1'], Accept: ['json', 'yaml'] });
    expect(got.msgs[1].reply, 'no reply subject').to.equal('');
    expect(got.msgs[1].headers).to.equal(undefined);
    await eventually(() => lines(errors).length === 1, 10000, 'the err event in the file');
    expect(JSON.parse(lines(errors)[0])).to.include({ raw: 'not json', source_id: '/onramp/from_nats/one' });
  });

  it('an unreachable server answers the activation with 400 naming the artefact and the cause', async () => {
    const port = await freePort();
    await publish('onramp', { id: 'gone', type: 'nats', config: { hosts: [`127.0.0.1:${port}`], subject: 'x' } });
    await publish('offramp', { id: 'out', type: 'file', config: { file: join(dir, 'out.json') } });
    await publish('pipeline', passthrough);
    await publish('binding', {
      id: 'b',
      links: { '/onramp/gone/{instance}/out': ['/pipeline/relay/{instance}/in'], '/pipeline/relay/{instance}/out': ['/offramp/out/{instance}/in'] },
    });
    const res = await call(rt.base, 'POST', '/binding/b/one');
    expect(res.status).to.equal(400);
    expect(res.text).to.match(new RegExp(`onramp 'gone' \\(nats\\) cannot start: cannot connect to NATS at 127\\.0\\.0\\.1:${port}`));
    // nothing was left running
    expect((await call(rt.base, 'GET', '/binding/b')).body).to.deep.include({ instances: [] });
  });

  it('JetStream in and out through a server restart: the breaker triggers and restores, and no message is lost', async function () {
    this.timeout(60000);
    const server = await PrivateServer.start();
    const admin = await client(server.host, { maxReconnectAttempts: -1, reconnectTimeWait: 100 });
    try {
      const jsm = await jetstreamManager(admin);
      await jsm.streams.add({ name: 'IN', subjects: ['work.in'] });
      await jsm.streams.add({ name: 'OUT', subjects: ['work.out'] });
      const js = jetstream(admin);
      const send = (from: number, n: number) => Promise.all(Array.from({ length: n }, (_, k) => js.publish('work.in', text(JSON.stringify({ i: from + k })))));
      await send(0, 300);

      await publish('onramp', {
        id: 'jin',
        type: 'nats',
        config: { hosts: [server.host], subject: 'work.in', jetstream: { stream: 'IN', durable: 'eddy', batch: 10, ack_wait_ms: 2000 } },
      });
      await publish('pipeline', passthrough);
      await publish('offramp', { id: 'jout', type: 'nats', config: { hosts: [server.host], subject: 'work.out', jetstream: true } });
      await publish('binding', {
        id: 'js',
        links: { '/onramp/jin/{instance}/out': ['/pipeline/relay/{instance}/in'], '/pipeline/relay/{instance}/out': ['/offramp/jout/{instance}/in'] },
      });
      expect((await call(rt.base, 'POST', '/binding/js/one')).status).to.equal(201);
      const stored = async () => (await jsm.streams.info('OUT')).state.messages;
      // the server goes while messages are flowing: some are in flight between IN and OUT
      await eventually(async () => (await stored()) >= 30, 20000, 'the first messages in OUT');
      const breaker = rt.runtime.onramp('/onramp/jin/one')!.runtime.breaker;
      await server.down();
      await eventually(() => !breaker.isOpen, 10000, 'the onramp paused by the breaker');
      expect(breaker.holders()).to.deep.equal(['/offramp/jout/one']);

      await server.up();
      await eventually(() => breaker.isOpen, 20000, 'the breaker restored');
      await eventually(
        async () =>
          await admin.flush().then(
            () => true,
            () => false,
          ),
        10000,
        'the admin connection back',
      );
      await send(300, 100);
      const all = 400;
      // every input arrives; duplicates (an ack lost with the connection) are allowed, losses are not.
      // Wait for every one, not for a count: duplicates can make up the count while a message whose
      // ack was lost is still waiting for its redelivery (ack_wait_ms after it was delivered)
      const seen = new Set<number>();
      let total = 0;
      const readNew = async () => {
        for (const upTo = await stored(); total < upTo; total++) {
          const m = await jsm.streams.getMessage('OUT', { seq: total + 1 });
          if (!m) throw new Error(`stream OUT has no message ${total + 1}`);
          seen.add((JSON.parse(new TextDecoder().decode(m.data)) as { i: number }).i);
        }
        return seen.size === all;
      };
      await eventually(readNew, 30000, `all ${all} in OUT`).catch(() => undefined); // the assertion below names what is missing
      expect([...seen].sort((a, b) => a - b)).to.deep.equal(Array.from({ length: all }, (_, i) => i));
      if (total > all) console.log(`      (${total - all} duplicates after the restart, none lost)`);
    } finally {
      await admin.close();
      await server.stop();
    }
  });
});
