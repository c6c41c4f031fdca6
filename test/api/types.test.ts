import { expect } from 'chai';
import { call, startRuntime, type Started } from '../helpers/runtime';

interface TypeEntry {
  kind: string;
  type: string;
  description: string;
  schema: { properties?: object } | null;
  reference: string | null;
  inputs: string[];
  outputs: string[] | null;
}

/** GET /types and POST /types/{kind}/{type}/check: what the console's flow editor reads of the registries. */
describe('GET /types and the config check', () => {
  let rt: Started;
  before(async () => (rt = await startRuntime()));
  after(() => rt.stop());

  it('lists every onramp, operator and offramp type with its description, schema, reference and ports', async () => {
    const reply = await call(rt.base, 'GET', '/types', { accept: 'application/json' });
    expect(reply.status).to.equal(200);
    const types = reply.body as TypeEntry[];
    expect(new Set(types.map((t) => t.kind))).to.deep.equal(new Set(['onramp', 'operator', 'offramp']));
    const file = types.find((t) => t.kind === 'onramp' && t.type === 'file')!;
    expect(file.description).to.include('Reads a file');
    expect(file.schema!.properties).to.have.property('source');
    expect(file).to.include({ reference: 'docs/connectors/file.md' });
    expect(file.outputs).to.deep.equal(['out', 'err']);
    const window = types.find((t) => t.type === 'window::aggregate')!;
    expect(window).to.deep.include({ inputs: ['in'], outputs: null, reference: 'docs/reference.md#operator-windowaggregate' });
    expect(types.find((t) => t.kind === 'offramp' && t.type === 'file')).to.deep.include({ inputs: ['in'], outputs: [] });
  });

  it('answers the ports a config gives an operator, and the field a publish would refuse, storing nothing', async () => {
    const check = (type: string, config: object) => call(rt.base, 'POST', `/types/operator/${type}/check`, { body: config, accept: 'application/json' });
    const dedupe = await check('generic::dedupe', { key: 'event.id' });
    expect(dedupe.body).to.deep.equal({ config: { key: 'event.id' }, error: null, outputs: ['out', 'duplicate', 'err'] });
    expect((await check('runtime::cel', { route: 'event.target' })).body).to.deep.include({ outputs: null });
    const duration = await check('window::aggregate', { window: { size: '5x' }, aggregate: { n: 'count()' } });
    expect(duration.status).to.equal(200);
    expect((duration.body as { error: string }).error).to.match(/^config\.window\.size: '5x' is not a duration/);
    expect(duration.body).not.to.have.property('outputs');
    const cel = await check('window::aggregate', { window: { size: '5s' }, aggregate: { n: 'count()' }, where: 'event.x ==' });
    expect((cel.body as { error: string }).error).to.match(/^config\.where: 1:\d+: /);
    expect((await call(rt.base, 'GET', '/pipeline', { accept: 'application/json' })).body).not.to.include('check');
  });

  it('checks a ramp config with the messages of a publish, and names an unknown type', async () => {
    const bad = await call(rt.base, 'POST', '/types/onramp/metronome/check', { body: { interval: 'soon' }, accept: 'application/json' });
    expect(bad.body).to.deep.equal({
      config: { interval: 'soon' },
      error:
        "config.interval: 'soon' is not a duration; a duration is a positive number of milliseconds, or a number with a unit: 500ms, 10s, 1m, 2h, 1d, or combined: 1h30m",
    });
    const yaml = await call(rt.base, 'POST', '/types/offramp/file/check', { body: { file: '/tmp/out.jsonl' }, yaml: true, accept: 'application/json' });
    expect(yaml.body).to.deep.equal({ config: { file: '/tmp/out.jsonl' }, error: null, outputs: [] });
    const unknown = await call(rt.base, 'POST', '/types/onramp/nope/check', { body: {}, accept: 'application/json' });
    expect(unknown.status).to.equal(404);
    expect(unknown.body).to.deep.equal({ error: "no onramp type 'nope'" });
  });
});
