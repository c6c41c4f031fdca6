import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NatsConnection } from '@nats-io/nats-core';
import { jetstream, jetstreamManager, StorageType, type JetStreamManager } from '@nats-io/jetstream';
import { stringify } from 'yaml';
import { eventually } from '../../helpers/runtime';
import { requireService } from '../../helpers/services';
import { runExample, type EddyProcess } from '../example-runner';
import { Collector, client, monitorBase, serviceHost, unique, waitForSubscribers } from './helpers';

const text = (s: string) => new TextEncoder().encode(s);
const ids = (events: unknown[]) => events.map((e) => (e as { i: number }).i);
const range = (n: number) => Array.from({ length: n }, (_, i) => i);

/** An eddy config file: one nats onramp through the system passthrough pipeline to `offramp`. */
function configFile(dir: string, onramp: Record<string, unknown>, offramp: string, extraOfframps: unknown[] = []): string {
  const file = join(dir, 'eddy.yaml');
  writeFileSync(
    file,
    stringify({
      onramp: [{ id: 'work', type: 'nats', config: onramp }],
      offramp: extraOfframps,
      binding: [
        {
          id: 'flow',
          links: {
            '/onramp/work/{instance}/out': ['/pipeline/system::passthrough/{instance}/in'],
            '/pipeline/system::passthrough/{instance}/out': [offramp],
          },
        },
      ],
      mapping: { '/binding/flow/main': { instance: 'main' } },
    }),
  );
  return file;
}

describe('nats with several eddy processes (bin/eddy server run, one config)', function () {
  this.timeout(60000);
  let nc: NatsConnection;
  let dir: string;
  const procs: EddyProcess[] = [];

  before(async function () {
    await requireService(this, 'nats');
    nc = await client();
  });
  after(async () => nc?.close());
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'eddy-nats-procs-'));
  });
  afterEach(async () => {
    await Promise.all(procs.splice(0).map((p) => p.stop()));
    rmSync(dir, { recursive: true, force: true });
  });
  const start = (file: string) => {
    const p = runExample(file);
    procs.push(p);
    return p;
  };

  it('scale-out: two processes in one queue group share the messages, each message printed by exactly one of them', async () => {
    const subject = unique('eddy.scale');
    const file = configFile(dir, { hosts: [serviceHost()], subject, queue: unique('workers') }, '/offramp/system::stdout/system/in');
    const [a, b] = [start(file), start(file)];
    await waitForSubscribers(monitorBase(), subject, 2, 30000);
    const n = 400;
    for (let i = 0; i < n; i++) nc.publish(subject, text(JSON.stringify({ i })));
    await nc.flush();
    await eventually(() => a.events().length + b.events().length === n, 30000, `${n} events printed across both processes`);
    const both = [...ids(a.events()), ...ids(b.events())].sort((x, y) => x - y);
    expect(both, 'each message exactly once').to.deep.equal(range(n));
    expect(a.events().length, 'process a got a share').to.be.greaterThan(0);
    expect(b.events().length, 'process b got a share').to.be.greaterThan(0);
    expect(await a.stop(), a.stderr()).to.equal(0);
    expect(await b.stop(), b.stderr()).to.equal(0);
  });

  describe('JetStream', () => {
    let jsm: JetStreamManager;
    let stream: string;
    before(async () => {
      jsm = await jetstreamManager(nc);
    });
    afterEach(async () => jsm.streams.delete(stream).catch(() => undefined));

    it('at least once: the consuming process is SIGKILLed mid-stream, a new one with the same durable consumer delivers every message', async () => {
      stream = unique('EDDY_KILL');
      const subject = unique('eddy.kill.in');
      const out = unique('eddy.kill.out');
      await jsm.streams.add({ name: stream, subjects: [subject], storage: StorageType.Memory });
      const n = 3000;
      const js = jetstream(nc);
      for (let from = 0; from < n; from += 500) {
        await Promise.all(range(500).map((k) => js.publish(subject, text(JSON.stringify({ i: from + k })))));
      }
      const got = new Collector(nc, out);
      await nc.flush();
      const file = configFile(
        dir,
        { hosts: [serviceHost()], subject, jetstream: { stream, durable: unique('eddy'), batch: 50, ack_wait_ms: 2000 } },
        '/offramp/relay/{instance}/in',
        [{ id: 'relay', type: 'nats', config: { hosts: [serviceHost()], subject: out } }],
      );

      const first = start(file);
      await eventually(() => got.msgs.length >= 300, 30000, 'the first process to relay 300 messages');
      first.child.kill('SIGKILL');
      await first.stop();
      const beforeKill = got.msgs.length;
      expect(beforeKill, 'the first process was stopped in the middle').to.be.lessThan(n);

      start(file);
      const unique_ = () => new Set(got.texts.map((t) => (JSON.parse(t) as { i: number }).i));
      await eventually(() => unique_().size === n, 40000, `all ${n} messages relayed`);
      expect([...unique_()].sort((x, y) => x - y)).to.deep.equal(range(n));
      const duplicates = got.msgs.length - n;
      console.log(`      (killed after ${beforeKill} relayed; ${duplicates} duplicates, none lost)`);
    });
  });
});
