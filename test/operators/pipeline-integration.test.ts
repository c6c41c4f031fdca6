import { expect } from 'chai';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { xz } from '@napi-rs/lzma';
import { call, eventually, startRuntime, type Started } from '../helpers/runtime';

const DATA = join(__dirname, '../../../test/fixtures/data/data.json.xz');
const sample = () =>
  Buffer.from(xz.decompressSync(readFileSync(DATA)))
    .toString('utf8')
    .split('\n')
    .filter((l) => l.length > 0)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
const lines = (file: string) =>
  existsSync(file)
    ? readFileSync(file, 'utf8')
        .split('\n')
        .filter((l) => l.length > 0)
    : [];

describe('operators inside a real pipeline instance', () => {
  let rt: Started;
  let dir: string;
  beforeEach(async () => {
    rt = await startRuntime();
    dir = mkdtempSync(join(tmpdir(), 'eddy-ops-'));
  });
  afterEach(async () => {
    await rt.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  async function publish(pipeline: unknown, outputs: string[]): Promise<void> {
    const post = async (kind: string, body: unknown) => expect((await call(rt.base, 'POST', `/${kind}`, { body })).status, kind).to.equal(201);
    await post('onramp', { id: 'reader', type: 'file', codec: 'json', config: { source: DATA } });
    await post('pipeline', pipeline);
    const links: Record<string, string[]> = { '/onramp/reader/{instance}/out': ['/pipeline/ops/{instance}/in'] };
    for (const out of outputs) {
      await post('offramp', { id: `w_${out}`, type: 'file', codec: 'json', config: { file: join(dir, `${out}.json`) } });
      links[`/pipeline/ops/{instance}/${out}`] = [`/offramp/w_${out}/{instance}/in`];
    }
    await post('binding', { id: 'flow', links });
    expect((await call(rt.base, 'POST', '/binding/flow/one')).status).to.equal(201);
  }

  it('routes with runtime::cel and batches with generic::batch', async () => {
    await publish(
      {
        id: 'ops',
        interface: { inputs: ['in'], outputs: ['out', 'alerts'] },
        nodes: [
          {
            id: 'classify',
            type: 'runtime::cel',
            config: { route: 'event.short_message == "ERROR" ? "alerts" : "out"', set: { seen: 'event.aint + 1' }, remove: ['about'] },
          },
          { id: 'group', type: 'generic::batch', config: { count: 1000, timeout: 50 } },
        ],
        links: { in: ['classify'], classify: ['group'], 'classify/alerts': ['alerts'], group: ['out'] },
      },
      ['out', 'alerts'],
    );
    const events = sample();
    const errors = events.filter((e) => e.short_message === 'ERROR');
    expect(errors.length).to.be.greaterThan(0);
    await eventually(() => lines(join(dir, 'alerts.json')).length === errors.length && lines(join(dir, 'out.json')).length > 0, 5000, 'routed events');
    const alerts = lines(join(dir, 'alerts.json')).map((l) => JSON.parse(l) as Record<string, unknown>);
    const { about: _a, ...firstError } = errors[0];
    expect(alerts[0]).to.deep.equal({ ...firstError, seen: (errors[0].aint as number) + 1 });
    // the file sink writes batch members one per line: every non-error event arrives after the timeout flush
    await eventually(() => lines(join(dir, 'out.json')).length === events.length - errors.length, 5000, 'batched events');
  });

  it('refuses to publish a pipeline whose CEL does not compile', async () => {
    const res = await call(rt.base, 'POST', '/pipeline', {
      body: {
        id: 'bad',
        interface: { inputs: ['in'], outputs: ['out'] },
        nodes: [{ id: 'c', type: 'runtime::cel', config: { filter: 'event.x ==' } }],
        links: { in: ['c'], c: ['out'] },
      },
    });
    expect(res.status).to.equal(400);
    expect(res.text).to.match(/runtime::cel node c: filter: 1:\d+/);
  });

  it('passes every event through qos::wal to the offramp', async () => {
    await publish(
      {
        id: 'ops',
        interface: { inputs: ['in'], outputs: ['out'] },
        nodes: [{ id: 'log', type: 'qos::wal', config: { read_count: 20, max_elements: 1000, dir: join(dir, 'wal') } }],
        links: { in: ['log'], log: ['out'] },
      },
      ['out'],
    );
    const expected = sample().map((e) => JSON.stringify(e));
    await eventually(() => lines(join(dir, 'out.json')).length >= expected.length, 5000, 'all events through the WAL');
    expect(lines(join(dir, 'out.json'))).to.deep.equal(expected);
  });
});
