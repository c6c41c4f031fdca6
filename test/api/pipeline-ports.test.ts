import { expect } from 'chai';
import { call, startRuntime, type Started } from '../helpers/runtime';

/** A link from a node port the node does not have is refused at publish: events there would go nowhere. */
describe('publishing a pipeline: links from node ports', () => {
  let rt: Started;
  before(async () => (rt = await startRuntime()));
  after(() => rt.stop());

  const pipeline = (id: string, node: object, port: string) => ({
    id,
    interface: { inputs: ['in'], outputs: ['out'] },
    nodes: [{ id: 'n', ...node }],
    links: { in: ['n'], n: ['out'], [`n/${port}`]: ['out'] },
  });

  for (const [node, port, ports] of [
    [{ type: 'generic::dedupe', config: { key: 'event.id' } }, 'dupes', 'out, duplicate, err'],
    [{ type: 'passthrough' }, 'err', 'out'],
    [{ type: 'window::aggregate', config: { window: { size: 10 }, aggregate: { n: 'count()' } } }, 'lates', 'out, late, overflow, err'],
    [
      { type: 'enrich::lookup', config: { table: { file: '/dev/null', key: 'host' }, key: 'event.host', into: 'meta.owner', on_miss: 'port' } },
      'misses',
      'out, miss, err',
    ],
    [{ type: 'enrich::lookup', config: { table: { file: '/dev/null', key: 'host' }, key: 'event.host', into: 'meta.owner' } }, 'miss', 'out, err'],
    [{ type: 'runtime::cel', config: { route: 'event.level == "error" ? "alerts" : "out"' } }, 'alert', 'out, err, alerts'],
    [{ type: 'qos::roundrobin', config: { outputs: ['a', 'b'] } }, 'c', 'out, a, b, overflow'],
  ] as const) {
    it(`${node.type}: a link from '${port}' is a 400 naming the node, the port and its ports (${ports})`, async () => {
      const reply = await call(rt.base, 'POST', '/pipeline', { body: pipeline(`p${port}`, node, port), accept: 'application/json' });
      if (reply.status === 400 && !(reply.body as { error: string }).error.includes('has no output port')) {
        // a config this test got wrong would pass for the wrong reason
        expect.fail(`refused for another reason: ${reply.text}`);
      }
      expect(reply.status, reply.text).to.equal(400);
      expect((reply.body as { error: string }).error).to.equal(`links.n/${port}: node 'n' (${node.type}) has no output port '${port}' (ports: ${ports})`);
    });
  }

  it('accepts the ports a node has, and any port of a route computed from the event', async () => {
    for (const [id, node, port] of [
      ['dd', { type: 'generic::dedupe', config: { key: 'event.id' } }, 'duplicate'],
      ['rr', { type: 'qos::roundrobin', config: { outputs: ['a', 'b'] } }, 'b'],
      ['routed', { type: 'runtime::cel', config: { route: 'event.target' } }, 'anything'],
      ['alerts', { type: 'runtime::cel', config: { route: 'event.level == "error" ? "alerts" : "out"' } }, 'alerts'],
    ] as const) {
      const reply = await call(rt.base, 'POST', '/pipeline', { body: pipeline(id, node, port) });
      expect(reply.status, `${id}: ${reply.text}`).to.equal(201);
    }
  });
});
