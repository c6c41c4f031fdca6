import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger } from '../../../src/core/logger';
import { Runtime } from '../../../src/runtime/runtime';
import { eventually } from '../../helpers/runtime';
import { KvProbe, batchOf } from './helpers';

const b = (s: string) => Buffer.from(s, 'utf8');

describe('kv offramp: commands', () => {
  let dir: string;
  let runtime: Runtime;
  let kv: KvProbe;
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'eddy-kv-'));
    runtime = await new Runtime({ logger: createLogger('silent') }).start();
    kv = await KvProbe.open(runtime, join(dir, 'store'));
  });
  afterEach(async () => {
    kv.close();
    await runtime.shutdown();
    rmSync(dir, { recursive: true, force: true });
  });

  it('get answers null for a missing key and {ok: value} for a present one; put answers the old value', async () => {
    expect(await kv.ask({ get: { key: 'snot' } })).to.equal(null);
    expect(await kv.ask({ put: { key: 'snot', value: { name: 'badger', legs: 4 } } })).to.equal(null);
    expect(await kv.ask({ get: { key: 'snot' } })).to.deep.equal({ ok: { name: 'badger', legs: 4 } });
    expect(await kv.ask({ put: { key: 'snot', value: 'ferret' } })).to.deep.equal({ ok: { name: 'badger', legs: 4 } });
    expect(await kv.ask({ get: { key: 'snot' } })).to.deep.equal({ ok: 'ferret' });
    // null is a value like any other
    expect(await kv.ask({ put: { key: 'nothing', value: null } })).to.equal(null);
    expect(await kv.ask({ get: { key: 'nothing' } })).to.deep.equal({ ok: null });
  });

  it('delete answers the old value and removes the key; deleting a missing key answers null', async () => {
    await kv.run({ put: { key: 'a', value: [1, 2, 3] } });
    expect(await kv.ask({ delete: { key: 'a' } })).to.deep.equal({ ok: [1, 2, 3] });
    expect(await kv.ask({ get: { key: 'a' } })).to.equal(null);
    expect(await kv.ask({ delete: { key: 'a' } })).to.equal(null);
  });

  it('every reply carries meta kv.op and the request correlation', async () => {
    kv.send({ put: { key: 'k', value: 1 } }, { correlation: 'first' });
    kv.send({ get: { key: 'k' } }, { correlation: { n: 2 } });
    kv.send({ scan: {} });
    await eventually(() => kv.replies.length === 3);
    expect(kv.replies.map((r) => [r.port, r.meta])).to.deep.equal([
      ['out', { kv: { op: 'put' }, correlation: 'first' }],
      ['out', { kv: { op: 'get' }, correlation: { n: 2 } }],
      ['out', { kv: { op: 'scan' } }],
    ]);
  });

  it('binary keys and string keys name the same bytes; binary keys work in every command', async () => {
    const key = Buffer.from([0x00, 0xff, 0x10]);
    expect(await kv.ask({ put: { key, value: 'bin' } })).to.equal(null);
    expect(await kv.ask({ get: { key: new Uint8Array([0x00, 0xff, 0x10]) } })).to.deep.equal({ ok: 'bin' });
    expect(await kv.ask({ put: { key: b('text'), value: 't' } })).to.equal(null);
    expect(await kv.ask({ get: { key: 'text' } })).to.deep.equal({ ok: 't' });
    expect(await kv.ask({ cas: { key, old: 'bin', new: 'bin2' } })).to.deep.equal({ ok: null });
    expect(await kv.ask({ delete: { key } })).to.deep.equal({ ok: 'bin2' });
  });

  it('scan returns keys as binary in key order, start inclusive, end exclusive, open ends', async () => {
    for (const k of ['d', 'a', 'c', 'b', 'e']) await kv.run({ put: { key: k, value: k.toUpperCase() } });
    const scan = async (range: Record<string, unknown>) => {
      const data = (await kv.ask({ scan: range })) as { ok: { key: Buffer; value: unknown }[] };
      for (const entry of data.ok) expect(Buffer.isBuffer(entry.key), 'keys are binary').to.equal(true);
      return data.ok.map((e) => `${e.key.toString()}=${String(e.value)}`);
    };
    expect(await scan({})).to.deep.equal(['a=A', 'b=B', 'c=C', 'd=D', 'e=E']);
    expect(await scan({ start: 'b', end: 'd' })).to.deep.equal(['b=B', 'c=C']);
    expect(await scan({ start: 'c' })).to.deep.equal(['c=C', 'd=D', 'e=E']);
    expect(await scan({ end: 'c' })).to.deep.equal(['a=A', 'b=B']);
    expect(await scan({ start: b('bb'), end: b('dd') })).to.deep.equal(['c=C', 'd=D']);
    expect(await scan({ start: 'x' })).to.deep.equal([]);
    expect(await scan({ start: 'd', end: 'b' })).to.deep.equal([]);
  });

  it('cas: swaps when old matches, fails on out with current and proposed otherwise', async () => {
    await kv.run({ put: { key: 'k', value: { v: 1 } } });
    expect(await kv.ask({ cas: { key: 'k', old: { v: 1 }, new: { v: 2 } } })).to.deep.equal({ ok: null });
    expect(await kv.ask({ get: { key: 'k' } })).to.deep.equal({ ok: { v: 2 } });
    const [failed] = await kv.run({ cas: { key: 'k', old: { v: 1 }, new: { v: 3 } } });
    expect(failed.port).to.equal('out');
    expect(failed.data).to.deep.equal({ error: { current: { v: 2 }, proposed: { v: 3 } } });
    expect(failed.meta).to.deep.equal({ kv: { op: 'cas' } });
    expect(await kv.ask({ get: { key: 'k' } })).to.deep.equal({ ok: { v: 2 } });
  });

  it('cas without old requires the key to be absent; without new it deletes', async () => {
    expect(await kv.ask({ cas: { key: 'k', new: 'first' } })).to.deep.equal({ ok: null });
    expect(await kv.ask({ cas: { key: 'k', new: 'second' } })).to.deep.equal({ error: { current: 'first', proposed: 'second' } });
    expect(await kv.ask({ cas: { key: 'k', old: 'first' } })).to.deep.equal({ ok: null });
    expect(await kv.ask({ get: { key: 'k' } })).to.equal(null);
    // old given but the key is absent: current null; neither given on an absent key: nothing to do, success
    expect(await kv.ask({ cas: { key: 'k', old: 'first' } })).to.deep.equal({ error: { current: null, proposed: null } });
    expect(await kv.ask({ cas: { key: 'k' } })).to.deep.equal({ ok: null });
    expect(await kv.ask({ get: { key: 'k' } })).to.equal(null);
  });

  it('invalid commands go to err with the reason, and the send fails (a transactional event gets a fail)', async () => {
    const cases: [unknown, RegExp][] = [
      [{ frobnicate: { key: 'k' } }, /unknown command 'frobnicate'/],
      [{ get: {} }, /get needs a key/],
      [{ put: { key: 'k' } }, /put needs a value/],
      [{ get: { key: 42 } }, /get\.key must be a string or binary, got a number/],
      [{ scan: { start: 'a', stop: 'c' } }, /unknown field 'stop' in scan/],
      [{ get: { key: 'a' }, put: { key: 'a', value: 1 } }, /exactly one key/],
      [{ delete: 'k' }, /delete takes a map/],
      ['get k', /a command is a map/],
    ];
    for (const [command, reason] of cases) {
      const before = kv.insights.length;
      kv.send(command, { correlation: 'c' }, { transactional: true });
      await eventually(() => kv.insights.length > before, 3000, 'a fail');
      const reply = kv.replies[kv.replies.length - 1];
      expect(reply.port, JSON.stringify(command)).to.equal('err');
      const data = reply.data as { key: unknown; error: string };
      expect(data.key).to.equal(null);
      expect(data.error)
        .to.match(/^Invalid KV command: /)
        .and.match(reason);
      expect(reply.meta).to.deep.equal({ kv: { op: null }, error: data.error, correlation: 'c' });
      expect(kv.insights[kv.insights.length - 1]).to.equal('fail');
    }
    expect(kv.offramp.counters.error).to.equal(cases.length);
    // a valid transactional command is acked (kv acks every event it handled)
    kv.send({ get: { key: 'k' } }, {}, { transactional: true });
    await eventually(() => kv.insights.length === cases.length + 1);
    expect(kv.insights[cases.length]).to.equal('ack');
  });

  it('commands apply in arrival order, even when sent without waiting', async () => {
    const commands: unknown[] = [];
    for (let i = 0; i < 50; i++) commands.push({ put: { key: 'n', value: i } });
    const replies = await kv.run(...commands, { get: { key: 'n' } });
    expect(replies.slice(1, 50).map((r) => r.data)).to.deep.equal(Array.from({ length: 49 }, (_, i) => ({ ok: i })));
    expect(replies[50].data).to.deep.equal({ ok: 49 });
  });

  it('a batch event runs each member as a command, with a reply per member carrying its own correlation', async () => {
    kv.send(
      batchOf([
        { value: { put: { key: 'x', value: 1 } }, meta: { correlation: 'm1' } },
        { value: { bogus: {} }, meta: { correlation: 'm2' } },
        { value: { get: { key: 'x' } }, meta: { correlation: 'm3' } },
      ]),
      {},
      { isBatch: true, transactional: true },
    );
    await eventually(() => kv.replies.length === 3 && kv.insights.length === 1);
    expect(kv.replies.map((r) => [r.port, r.meta.correlation])).to.deep.equal([
      ['out', 'm1'],
      ['err', 'm2'],
      ['out', 'm3'],
    ]);
    expect(kv.replies[2].data).to.deep.equal({ ok: 1 });
    // one member was invalid: the batch as a whole failed
    expect(kv.insights).to.deep.equal(['fail']);
  });
});

describe('kv offramp: storage', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'eddy-kv-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('keeps the data across a restart of the runtime on the same dir', async () => {
    const store = join(dir, 'nested', 'store');
    let runtime = await new Runtime({ logger: createLogger('silent') }).start();
    let kv = await KvProbe.open(runtime, store);
    await kv.run({ put: { key: 'kept', value: { n: 1 } } }, { put: { key: 'gone', value: 2 } }, { delete: { key: 'gone' } });
    kv.close();
    await runtime.shutdown();

    runtime = await new Runtime({ logger: createLogger('silent') }).start();
    try {
      kv = await KvProbe.open(runtime, store);
      expect(await kv.ask({ get: { key: 'kept' } })).to.deep.equal({ ok: { n: 1 } });
      expect(await kv.ask({ get: { key: 'gone' } })).to.equal(null);
      kv.close();
    } finally {
      await runtime.shutdown();
    }
  });

  it('stores values with the ramp codec: msgpack keeps binary values and keys', async () => {
    const runtime = await new Runtime({ logger: createLogger('silent') }).start();
    try {
      const kv = await KvProbe.open(runtime, join(dir, 'store'), 'msgpack');
      const value = { blob: Buffer.from([1, 2, 3]), n: 7 };
      await kv.run({ put: { key: Buffer.from([9]), value } });
      expect(await kv.ask({ get: { key: Buffer.from([9]) } })).to.deep.equal({ ok: value });
      expect(await kv.ask({ scan: {} })).to.deep.equal({ ok: [{ key: Buffer.from([9]), value }] });
      kv.close();
    } finally {
      await runtime.shutdown();
    }
  });

  it('a dir that cannot be opened (a file, or one held by another instance) fails the activation (invalid: 400 over REST)', async () => {
    const runtime = await new Runtime({ logger: createLogger('silent') }).start();
    try {
      const file = join(dir, 'a-file');
      writeFileSync(file, 'x');
      runtime.publish('offramp', { id: 'bad', type: 'kv', linked: true, config: { dir: join(file, 'store') } });
      runtime.publish('binding', { id: 'badb', links: { '/offramp/bad/{instance}/out': ['/pipeline/system::passthrough/{instance}/in'] } });
      const failure = await runtime.activate('binding', 'badb', 'main', {}).then(
        () => undefined,
        (err: unknown) => err as Error & { code?: number },
      );
      expect(failure?.code).to.equal('invalid');
      expect(failure?.message).to.match(/offramp 'bad' \(kv\) cannot start: kv: cannot open/);

      // two instances of one dir: the second cannot take the lock
      const kv = await KvProbe.open(runtime, join(dir, 'store'));
      const second = await runtime.activate('binding', 'kvb', 'other', {}).then(
        () => undefined,
        (err: unknown) => err as Error & { code?: number },
      );
      expect(second?.code).to.equal('invalid');
      expect(second?.message).to.match(/cannot open .*(lock|LOCK)/);
      kv.close();
    } finally {
      await runtime.shutdown();
    }
  });
});
