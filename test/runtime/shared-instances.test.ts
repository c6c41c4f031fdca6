import { expect } from 'chai';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Subscriber } from 'rxjs';
import type { Frame } from '../../src/connectors/connector';
import { createLogger } from '../../src/core/logger';
import { Runtime } from '../../src/runtime/runtime';
import { pushOnramp } from '../helpers/push-onramp';
import { call, eventually, startRuntime, type Started } from '../helpers/runtime';

const RELAY = {
  id: 'relay',
  interface: { inputs: ['in'], outputs: ['out'] },
  nodes: [{ id: 'pass', type: 'passthrough' }],
  links: { in: ['pass'], pass: ['out'] },
};

const linesOf = (file: string): string[] => (existsSync(file) ? readFileSync(file, 'utf8').split('\n').slice(0, -1) : []);

/**
 * Two bindings share an instance: deactivating one must keep the shared
 * instance running and wired to the other; deactivating both releases it.
 * (The release check is `users.size > 0`; with `> 1` the shared instance
 * went with the first binding.)
 */
describe('instances shared by two bindings', () => {
  let rt: Started;
  let dir: string;
  const feeds = new Map<string, Subscriber<Frame>>();
  const push = (onramp: string, id: number) => {
    const feed = feeds.get(onramp);
    if (!feed) throw new Error(`${onramp} is not running`);
    feed.next({ stream: 0, value: { id }, originUri: 'svc-push://test' });
  };
  const instancesOf = async (kind: string, id: string) =>
    ((await call(rt.base, 'GET', `/${kind}/${id}`, { accept: 'application/json' })).body as { instances: string[] }).instances;
  const deactivate = async (binding: string, instance: string) =>
    expect((await call(rt.base, 'DELETE', `/binding/${binding}/${instance}`)).status).to.equal(200);

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'eddy-shared-'));
    rt = await startRuntime(new Runtime({ logger: createLogger('silent') }).registerOnramp(pushOnramp(feeds)));
    for (const [kind, body] of [
      ['onramp', { id: 'push', type: 'push' }],
      ['pipeline', RELAY],
      ['offramp', { id: 'out', type: 'file', config: { file: join(dir, 'out.json') } }],
      ['offramp', { id: 'a', type: 'file', config: { file: join(dir, 'a.json') } }],
      ['offramp', { id: 'b', type: 'file', config: { file: join(dir, 'b.json') } }],
    ] as const) {
      expect((await call(rt.base, 'POST', `/${kind}`, { body })).status).to.equal(201);
    }
  });
  afterEach(async () => {
    await rt.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  async function bind(id: string, links: Record<string, string[]>, instance: string): Promise<void> {
    expect((await call(rt.base, 'POST', '/binding', { body: { id, links } })).status).to.equal(201);
    const reply = await call(rt.base, 'POST', `/binding/${id}/${instance}`);
    expect(reply.status, reply.text).to.equal(201);
  }

  it('an offramp instance: the first deactivation keeps it writing what the other binding sends; the second releases it', async () => {
    // each binding its own onramp and pipeline instance, both into /offramp/out/shared
    const links = (i: string) => ({ [`/onramp/push/${i}/out`]: [`/pipeline/relay/${i}/in`], [`/pipeline/relay/${i}/out`]: ['/offramp/out/shared/in'] });
    await bind('left', links('a'), 'one');
    await bind('right', links('b'), 'one');
    const file = join(dir, 'out.json');
    push('/onramp/push/a', 1);
    push('/onramp/push/b', 2);
    await eventually(() => linesOf(file).length === 2, 5000, 'both events');

    await deactivate('left', 'one');
    expect(await instancesOf('offramp', 'out')).to.deep.equal(['shared']);
    expect(await instancesOf('onramp', 'push')).to.deep.equal(['b']);
    expect(rt.runtime.health().instances.find((i) => i.url === '/offramp/out/shared')).to.deep.equal({ url: '/offramp/out/shared', state: 'running' });
    push('/onramp/push/b', 3);
    await eventually(() => linesOf(file).length === 3, 5000, 'the event sent through the remaining binding');
    expect(linesOf(file)).to.deep.equal(['{"id":1}', '{"id":2}', '{"id":3}']);

    await deactivate('right', 'one');
    expect(await instancesOf('offramp', 'out')).to.deep.equal([]);
    expect(await instancesOf('pipeline', 'relay')).to.deep.equal([]);
    expect(rt.runtime.offramp('/offramp/out/shared')).to.equal(undefined);
    // released means closed: nothing holds the artefact any more, so it can be deleted
    expect((await call(rt.base, 'DELETE', '/offramp/out')).status).to.equal(200);
  });

  /**
   * The README's quick start: a binding declares a link another binding
   * already holds. One connection, counted: wired twice, every event on that
   * port went out twice (and kept doing so after one binding was gone).
   */
  it('a link both bindings declare is one connection: each event once, kept until the last binding goes', async () => {
    const shared = '/pipeline/relay/shared/out';
    const links = (i: string) => ({ [`/onramp/push/${i}/out`]: ['/pipeline/relay/shared/in'], [shared]: ['/offramp/out/shared/in'] });
    await bind('left', links('a'), 'one');
    await bind('right', links('b'), 'one');
    const file = join(dir, 'out.json');
    const port = { kind: 'pipeline', artefact: 'relay', instance: 'shared', port: 'out' } as const;
    const sink = { kind: 'offramp', artefact: 'out', instance: 'shared', port: 'in' } as const;
    expect(rt.runtime.linkUses(port, sink)).to.equal(2);
    // the last event is the marker: the file offramp writes in order, so once it is there every copy of the others is too
    push('/onramp/push/a', 1);
    push('/onramp/push/b', 2);
    push('/onramp/push/a', 99);
    await eventually(() => linesOf(file).includes('{"id":99}'), 5000, 'the marker event');
    expect(linesOf(file)).to.deep.equal(['{"id":1}', '{"id":2}', '{"id":99}']);

    await deactivate('left', 'one');
    expect(rt.runtime.linkUses(port, sink)).to.equal(1);
    push('/onramp/push/b', 3);
    push('/onramp/push/b', 98);
    await eventually(() => linesOf(file).includes('{"id":98}'), 5000, 'the marker event through the remaining binding');
    expect(linesOf(file)).to.deep.equal(['{"id":1}', '{"id":2}', '{"id":99}', '{"id":3}', '{"id":98}']);

    await deactivate('right', 'one');
    expect(rt.runtime.linkUses(port, sink)).to.equal(0);
    expect(rt.runtime.pipeline('/pipeline/relay/shared')).to.equal(undefined);
  });

  it('a destination listed twice in one binding is one connection too', async () => {
    await bind('twice', { '/onramp/push/a/out': ['/pipeline/relay/one/in'], '/pipeline/relay/one/out': ['/offramp/out/one/in', '/offramp/out/one/in'] }, 'one');
    const file = join(dir, 'out.json');
    push('/onramp/push/a', 1);
    push('/onramp/push/a', 99);
    await eventually(() => linesOf(file).includes('{"id":99}'), 5000, 'the marker event');
    expect(linesOf(file)).to.deep.equal(['{"id":1}', '{"id":99}']);
    await deactivate('twice', 'one');
    expect(await instancesOf('offramp', 'out')).to.deep.equal([]);
  });

  it('refuses a link between two ramps, saying a pipeline goes between them', async () => {
    expect((await call(rt.base, 'POST', '/binding', { body: { id: 'direct', links: { '/onramp/push/a/out': ['/offramp/out/one/in'] } } })).status).to.equal(
      201,
    );
    const reply = await call(rt.base, 'POST', '/binding/direct/one');
    expect(reply.status).to.equal(400);
    expect(reply.text).to.include('an onramp cannot be linked to an offramp: a pipeline goes between them');
    // nothing it opened stays running
    expect(await instancesOf('offramp', 'out')).to.deep.equal([]);
    expect(await instancesOf('onramp', 'push')).to.deep.equal([]);
  });

  it('a pipeline instance: the first deactivation keeps it running and wired to the other binding; the second releases it', async () => {
    // each binding its own onramp and offramp instance, both through /pipeline/relay/shared
    const links = (i: string) => ({ [`/onramp/push/${i}/out`]: ['/pipeline/relay/shared/in'], '/pipeline/relay/shared/out': [`/offramp/${i}/one/in`] });
    await bind('left', links('a'), 'one');
    await bind('right', links('b'), 'one');
    const [a, b] = [join(dir, 'a.json'), join(dir, 'b.json')];
    push('/onramp/push/a', 1);
    // the shared pipeline feeds both bindings' offramps
    await eventually(() => linesOf(a).length === 1 && linesOf(b).length === 1, 5000, 'the event through both offramps');

    await deactivate('left', 'one');
    expect(await instancesOf('pipeline', 'relay')).to.deep.equal(['shared']);
    expect(await instancesOf('offramp', 'a')).to.deep.equal([]);
    expect(await instancesOf('offramp', 'b')).to.deep.equal(['one']);
    push('/onramp/push/b', 2);
    await eventually(() => linesOf(b).length === 2, 5000, 'the event through the remaining binding');
    expect(linesOf(b)).to.deep.equal(['{"id":1}', '{"id":2}']);
    expect(linesOf(a)).to.deep.equal(['{"id":1}']);

    await deactivate('right', 'one');
    expect(await instancesOf('pipeline', 'relay')).to.deep.equal([]);
    expect(rt.runtime.pipeline('/pipeline/relay/shared')).to.equal(undefined);
    expect((await call(rt.base, 'DELETE', '/pipeline/relay')).status).to.equal(200);
  });
});
