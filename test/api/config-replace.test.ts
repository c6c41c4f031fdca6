import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { completeLines } from '../helpers/lines';
import { call, eventually, startRuntime, type Reply, type Started } from '../helpers/runtime';

/**
 * POST /config?replace=true: a changed running flow replaced by the reload
 * rules, a changed pipeline swapped in place while its onramp runs on
 * (docs/rest-api.md, "Replacing a running flow").
 */
describe('POST /config?replace=true: changing a running flow', function () {
  this.timeout(30000);
  let dir: string;
  let api: Started;
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'eddy-config-replace-'));
    api = await startRuntime();
  });
  afterEach(async () => {
    await api?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const output = () => join(dir, 'windows.json');
  /** A metronome counting its ticks (`id`: 0, 1, 2 …) into count windows of `count`, each written as the ids of its ticks. */
  const flow = (count: number, interval = 1) => ({
    onramp: [{ id: 'ticks', type: 'metronome', config: { interval } }],
    offramp: [{ id: 'windows_file', type: 'file', config: { file: output() } }],
    pipeline: [
      { id: 'windows', nodes: [{ id: 'w', type: 'window::aggregate', config: { window: { count }, aggregate: { ids: 'collect(event.id, 1000)' } } }] },
    ],
    flow: [{ id: 'ticks', from: 'ticks', via: 'windows', to: 'windows_file' }],
  });
  const apply = (doc: unknown, query = ''): Promise<Reply> =>
    call(api.base, 'POST', `/config${query}`, { raw: stringify(doc), contentType: 'application/yaml' });
  const error = (reply: Reply) => (reply.body as { error: string }).error;
  const written = () => completeLines(output()).map((l) => (JSON.parse(l) as { ids: number[] }).ids);
  const windowCount = () =>
    (api.runtime.describe('pipeline', 'windows').artefact as unknown as { nodes: { config: { window: { count: number } } }[] }).nodes[0].config.window.count;
  /** The live instances of the flow: a change that did not happen leaves every one of them the very same object. */
  const live = () => ({
    onramp: api.runtime.onramp('/onramp/ticks/main'),
    pipeline: api.runtime.pipeline('/pipeline/windows/main'),
    offramp: api.runtime.offramp('/offramp/windows_file/main'),
  });
  /** The answer of a replace that swaps the pipeline, the rest unchanged. */
  const swapAnswer = (dryRun: boolean) => ({
    dry_run: dryRun,
    published: [],
    activated: [],
    unchanged: [
      { kind: 'offramp', id: 'windows_file' },
      { kind: 'onramp', id: 'ticks' },
      { kind: 'binding', id: 'ticks' },
    ],
    running: ['/binding/ticks/main'],
    replaced: [{ kind: 'pipeline', id: 'windows' }],
    restarted: [],
    swapped: ['/pipeline/windows/main'],
  });

  async function running(count = 3): Promise<void> {
    const first = await apply(flow(count));
    expect(first.status, first.text).to.equal(201);
    await eventually(() => written().length >= 3, 10000, 'the first windows');
  }

  it('with dry_run=true answers the plan (the pipeline swapped in place, nothing restarted) and changes nothing', async () => {
    await running();
    const before = live();
    const dry = await apply(flow(5), '?replace=true&dry_run=true');
    expect(dry.status, dry.text).to.equal(200);
    expect(dry.body).to.deep.equal(swapAnswer(true));
    expect(windowCount()).to.equal(3);
    expect(live()).to.deep.equal(before);
    expect(live().pipeline).to.equal(before.pipeline);
    // an onramp changed: its mapping would be restarted, the onramp replaced
    const restart = await apply(flow(3, 2), '?dry_run=true&replace=true');
    expect(restart.status, restart.text).to.equal(200);
    expect(restart.body).to.deep.include({ replaced: [{ kind: 'onramp', id: 'ticks' }], restarted: ['/binding/ticks/main'], swapped: [], running: [] });
    expect(live().onramp).to.equal(before.onramp);
  });

  it('swaps the changed pipeline in place: the onramp runs on (its counter goes on), every tick is in exactly one window', async () => {
    await running();
    const before = live();
    const status = async () => {
      const all = (await call(api.base, 'GET', '/status')).body as { instances: { url: string; state: string; ports: { port: string; events: number }[] }[] };
      const onramp = all.instances.find((i) => i.url === '/onramp/ticks/main')!;
      return { state: onramp.state, out: onramp.ports.find((p) => p.port === 'out')!.events };
    };
    const outBefore = (await status()).out;
    const reply = await apply(flow(5), '?replace=true');
    expect(reply.status, reply.text).to.equal(201);
    expect(reply.body).to.deep.equal(swapAnswer(false));
    expect(windowCount()).to.equal(5);
    // the same onramp and offramp instances; the pipeline instance is a new one
    expect(live().onramp).to.equal(before.onramp);
    expect(live().offramp).to.equal(before.offramp);
    expect(live().pipeline).not.to.equal(before.pipeline);
    // running, its counters going on from where they were (a restarted onramp counts from 0 again)
    const after = await status();
    expect(after.state).to.equal('running');
    expect(after.out).to.be.at.least(outBefore);
    await eventually(() => written().filter((ids) => ids.length === 5).length >= 3, 10000, 'windows of 5');
    // the same document again: nothing to do
    const again = await apply(flow(5), '?replace=true');
    expect(again.status, again.text).to.equal(200);
    expect(again.body).to.deep.include({ replaced: [], restarted: [], swapped: [], running: ['/binding/ticks/main'] });
    const out = (await call(api.base, 'DELETE', '/binding/ticks/main')).status;
    expect(out).to.equal(200);
    const windows = written();
    const sizes = windows.map((ids) => ids.length);
    const firstOfFive = sizes.indexOf(5);
    // windows of 3, then the window open at the swap flushed (1 or 2 ticks, or none), then windows of 5 (the last one flushed at the DELETE)
    expect(sizes.slice(0, firstOfFive).filter((n) => n !== 3).length, sizes.join(',')).to.be.at.most(1);
    expect(
      sizes.slice(firstOfFive, -1).every((n) => n === 5),
      sizes.join(','),
    ).to.equal(true);
    const ids = windows.flat();
    expect(ids.length).to.be.greaterThan(20);
    expect(ids, 'every tick once, in order, counted on from 0 by the one metronome').to.deep.equal(ids.map((_, i) => i));
  });

  it('restarts a mapping whose onramp changed, and says so', async () => {
    await running();
    const before = live();
    const reply = await apply(flow(3, 2), '?replace=true');
    expect(reply.status, reply.text).to.equal(201);
    expect(reply.body).to.deep.equal({
      dry_run: false,
      published: [],
      activated: [],
      unchanged: [
        { kind: 'pipeline', id: 'windows' },
        { kind: 'offramp', id: 'windows_file' },
        { kind: 'binding', id: 'ticks' },
      ],
      running: [],
      replaced: [{ kind: 'onramp', id: 'ticks' }],
      restarted: ['/binding/ticks/main'],
      swapped: [],
    });
    expect(live().onramp).not.to.equal(before.onramp);
    expect((api.runtime.describe('onramp', 'ticks').artefact as unknown as { config: { interval: number } }).config.interval).to.equal(2);
  });

  it('changes nothing when one field is bad, naming the artefact and the field', async () => {
    await running();
    const before = live();
    const doc = flow(5, 2);
    doc.offramp[0].config = { file: output(), append: 'yes' } as never;
    const reply = await apply(doc, '?replace=true');
    expect(reply.status, reply.text).to.equal(400);
    expect(error(reply)).to.equal("offramp 'windows_file': config.append: must be boolean");
    expect(windowCount()).to.equal(3);
    expect((api.runtime.describe('onramp', 'ticks').artefact as unknown as { config: { interval: number } }).config.interval).to.equal(1);
    expect(live().onramp).to.equal(before.onramp);
    expect(live().pipeline).to.equal(before.pipeline);
    expect(live().offramp).to.equal(before.offramp);
  });

  it('takes it all back when a step fails while applying (an onramp that cannot open): the old declarations run again', async () => {
    await running();
    const doc = { ...flow(3), onramp: [{ id: 'ticks', type: 'file', config: { source: join(dir, 'missing.json') } }] };
    const reply = await apply(doc, '?replace=true');
    expect(reply.status, reply.text).to.equal(400);
    expect(error(reply)).to.match(/^mapping '\/binding\/ticks\/main': onramp 'ticks' \(file\) cannot start: .*ENOENT/);
    expect(api.runtime.describe('onramp', 'ticks').artefact).to.deep.include({ type: 'metronome' });
    // stopped to be restarted, and activated again as it was
    expect(api.runtime.instancesOf('binding', 'ticks')).to.deep.equal(['main']);
    const seen = written().length;
    await eventually(() => written().length > seen, 10000, 'the flow to write again');
  });

  it('without replace=true, a changed pipeline is still refused (409) and nothing changes', async () => {
    await running();
    const before = live();
    const reply = await apply(flow(5));
    expect(reply.status, reply.text).to.equal(409);
    expect(error(reply)).to.match(/^pipeline 'windows': differs from the pipeline 'windows' that exists already/);
    expect(windowCount()).to.equal(3);
    expect(live().pipeline).to.equal(before.pipeline);
  });

  it('refuses a changed pipeline that an instance outside the document runs (409, naming it), and changes nothing', async () => {
    await running();
    const before = live();
    expect((await call(api.base, 'POST', '/onramp', { body: { id: 'slow', type: 'metronome', config: { interval: 3600000 } } })).status).to.equal(201);
    const other = {
      id: 'other',
      links: {
        '/onramp/slow/{instance}/out': ['/pipeline/windows/{instance}/in'],
        '/pipeline/windows/{instance}/out': ['/offramp/system::stdout/system/in'],
      },
    };
    expect((await call(api.base, 'POST', '/binding', { body: other })).status).to.equal(201);
    expect((await call(api.base, 'POST', '/binding/other/side', { body: {} })).status).to.equal(201);
    const reply = await apply(flow(5), '?replace=true');
    expect(reply.status, reply.text).to.equal(409);
    expect(error(reply)).to.equal(
      "pipeline 'windows' changed, but /pipeline/windows/side runs it and is not one of the document's mappings: deactivate it first",
    );
    expect(windowCount()).to.equal(3);
    expect(live().pipeline).to.equal(before.pipeline);
    expect(api.runtime.instancesOf('binding', 'ticks')).to.deep.equal(['main']);
  });
});
