import { expect } from 'chai';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { call, eventually, startRuntime, type Started } from '../../helpers/runtime';
import { Client, Server, freePort } from './helpers';

const passthrough = {
  id: 'relay',
  interface: { inputs: ['in'], outputs: ['out'] },
  nodes: [{ id: 'pass', type: 'passthrough' }],
  links: { in: ['pass'], pass: ['out'] },
};

const binding = (id: string, onramp: string, offramp: string) => ({
  id,
  links: {
    [`/onramp/${onramp}/{instance}/out`]: ['/pipeline/relay/{instance}/in'],
    '/pipeline/relay/{instance}/out': [`/offramp/${offramp}/{instance}/in`],
  },
});

describe('ws end to end over REST', () => {
  let rt: Started;
  let dir: string;
  const clients: Client[] = [];
  const servers: Server[] = [];
  beforeEach(async () => {
    rt = await startRuntime();
    dir = mkdtempSync(join(tmpdir(), 'eddy-ws-'));
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
    await rt.stop();
    await Promise.all(servers.splice(0).map((s) => s.stop()));
    rmSync(dir, { recursive: true, force: true });
  });

  const publish = async (kind: string, body: unknown) => expect((await call(rt.base, 'POST', `/${kind}`, { body })).status, kind).to.equal(201);

  it('ws client -> ws onramp -> pipeline -> file offramp; a second binding on the same port answers 400', async () => {
    const port = await freePort();
    const target = join(dir, 'out.json');
    await publish('onramp', { id: 'sock', type: 'ws', config: { host: '127.0.0.1', port } });
    await publish('pipeline', passthrough);
    await publish('offramp', { id: 'disk', type: 'file', config: { file: target } });
    await publish('binding', binding('ingest', 'sock', 'disk'));
    expect((await call(rt.base, 'POST', '/binding/ingest/one')).status).to.equal(201);

    const c = await Client.open(`ws://127.0.0.1:${port}/`);
    clients.push(c);
    await c.send('{"n":1}');
    await c.send(Buffer.from('{"n":2}'));
    await c.send('{"n":3}');
    const lines = () => readFileSync(target, 'utf8').split('\n').filter(Boolean);
    await eventually(() => lines().length === 3, 5000, 'three lines in the file');
    expect(lines()).to.deep.equal(['{"n":1}', '{"n":2}', '{"n":3}']);

    await publish('onramp', { id: 'clash', type: 'ws', config: { host: '127.0.0.1', port } });
    await publish('binding', binding('clash', 'clash', 'disk'));
    const clash = await call(rt.base, 'POST', '/binding/clash/two');
    expect(clash.status).to.equal(400);
    expect(clash.text).to.match(/onramp 'clash' \(ws\) cannot start: cannot listen on 127\.0\.0\.1:\d+/);
  });

  it('ws onramp -> ws offramp: a server restart pauses the onramp (breaker), and what clients send meanwhile arrives after the reconnect', async () => {
    const inPort = await freePort();
    const first = await Server.start();
    servers.push(first);
    await publish('onramp', { id: 'sock', type: 'ws', config: { host: '127.0.0.1', port: inPort } });
    await publish('pipeline', passthrough);
    await publish('offramp', { id: 'out', type: 'ws', config: { url: first.url } });
    await publish('binding', binding('relay', 'sock', 'out'));
    expect((await call(rt.base, 'POST', '/binding/relay/one')).status).to.equal(201);

    const c = await Client.open(`ws://127.0.0.1:${inPort}/`);
    clients.push(c);
    await c.send('{"n":1}');
    await eventually(() => first.received.length === 1, 5000, 'the first message relayed');

    const breaker = rt.runtime.onramp('/onramp/sock/one')!.runtime.breaker;
    await first.stop();
    servers.splice(0);
    await eventually(() => !breaker.isOpen, 5000, 'the onramp to be paused');
    expect(breaker.holders()).to.deep.equal(['/offramp/out/one']);
    for (let n = 2; n <= 20; n++) await c.send(`{"n":${n}}`);

    const second = await Server.start(first.port);
    servers.push(second);
    await eventually(() => second.received.length === 19, 8000, 'the messages sent while the server was down');
    expect(second.received.map((r) => JSON.parse(r.text).n)).to.deep.equal(Array.from({ length: 19 }, (_, i) => i + 2));
    expect(breaker.isOpen).to.equal(true);
  });
});
