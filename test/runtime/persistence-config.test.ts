/**
 * `--data-dir` with config files (-f): a file's artefacts and mappings are
 * stored like the API's; a file that declares again what is stored, the
 * same, starts; one that declares it differently is refused, naming the
 * file and the id, and nothing is replaced.
 */
import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger } from '../../src/core/logger';
import { loadConfigFiles } from '../../src/config/load';
import { Runtime } from '../../src/runtime/runtime';
import { LevelStore } from '../../src/runtime/store';
import { runEddy } from '../helpers/cli';
import { call } from '../helpers/runtime';
import { FLOW, killAll, startServer } from './persistence-server';

const config = (interval: number, mapping: string) => `
onramp:
  - { id: tick, type: metronome, config: { interval: ${interval} } }
offramp:
  - { id: out, type: stdout, codec: json }
pipeline:
  # stored with the chain it stands for (links, interface): the same file again is still the same
  - { id: chained, nodes: [{ id: pass, type: passthrough }] }
binding:
  - ${JSON.stringify(FLOW)}
mapping:
  /binding/flow/main: ${mapping}
`;

describe('persistence: --data-dir with config files', function () {
  this.timeout(30000);
  let dir: string;
  let data: string;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'eddy-persist-config-'));
    data = join(dir, 'data');
  });
  afterEach(async () => {
    await killAll();
    rmSync(dir, { recursive: true, force: true });
  });

  it('stores what a file publishes; the same file again is accepted; a differing artefact or mapping is refused naming it', async () => {
    const same = join(dir, 'flow.yaml');
    writeFileSync(same, config(50, '{}'));
    const first = await startServer(['--data-dir', data, '-f', same]);
    expect((await call(first.base, 'GET', '/binding/flow')).body).to.deep.include({ instances: ['main'] });
    expect(await first.stop('SIGTERM')).to.equal(0);

    // with the same file: identical artefacts and the same mapping are what runs already
    const second = await startServer(['--data-dir', data, '-f', same]);
    expect((await call(second.base, 'GET', '/binding/flow')).body).to.deep.include({ instances: ['main'] });
    expect(await second.stop('SIGKILL')).to.equal(null);

    const changed = join(dir, 'changed.yaml');
    writeFileSync(changed, config(60, '{}'));
    const refused = await runEddy(['server', 'run', '--no-api', '--data-dir', data, '-f', changed]);
    expect(refused.code).to.equal(1);
    expect(refused.stderr).to.contain(
      `error: ${changed}: onramp 'tick': differs from the onramp 'tick' that exists already (kept in the data dir or declared earlier); delete it first (DELETE /onramp/tick)`,
    );

    const remapped = join(dir, 'remapped.yaml');
    writeFileSync(remapped, config(50, '{ other: "x" }'));
    const refusedMapping = await runEddy(['server', 'run', '--no-api', '--data-dir', data, '-f', remapped]);
    expect(refusedMapping.code).to.equal(1);
    expect(refusedMapping.stderr).to.contain(
      `error: ${remapped}: mapping '/binding/flow/main': already running with other parameters {} (kept in the data dir)`,
    );

    // without the file: what it published and activated was kept, and neither refusal replaced anything
    const last = await startServer(['--data-dir', data]);
    expect((await call(last.base, 'GET', '/onramp/tick')).body).to.deep.equal({
      artefact: { id: 'tick', type: 'metronome', config: { interval: 50 } },
      instances: ['main'],
    });
  });

  it('takes back what the files of a failed start published and activated: the store is as it was, and the corrected file loads', async () => {
    const open = async () => {
      const runtime = new Runtime({ logger: createLogger('silent'), store: await LevelStore.open(data) });
      await runtime.start();
      return runtime;
    };
    const kept = join(dir, 'kept.yaml');
    writeFileSync(kept, 'pipeline:\n  - { id: kept, interface: { inputs: [in], outputs: [out] }, nodes: [], links: { in: [out] } }\n');
    const input = join(dir, 'in.json');
    const flow = (source: string) => `
onramp:
  - { id: reader, type: file, config: { source: "${source}" } }
binding:
  - { id: read, links: { "/onramp/reader/{instance}/out": ["/pipeline/kept/{instance}/in"] } }
mapping:
  /binding/read/main: {}
`;
    const broken = join(dir, 'broken.yaml');
    writeFileSync(broken, flow(join(dir, 'missing.json')));
    let runtime = await open();
    await loadConfigFiles(runtime, [kept]);
    let failure: Error | undefined;
    await loadConfigFiles(runtime, [broken]).catch((err: unknown) => (failure = err as Error));
    expect(failure?.message).to.match(/broken\.yaml: mapping '\/binding\/read\/main': .*missing\.json/);
    await runtime.shutdown();

    runtime = await open();
    try {
      expect(runtime.list('onramp')).to.deep.equal([]);
      expect(runtime.list('binding')).to.deep.equal([]);
      expect(runtime.list('pipeline')).to.include('kept');
      writeFileSync(input, '{"n":1}\n');
      const fixed = join(dir, 'fixed.yaml');
      writeFileSync(fixed, flow(input));
      await loadConfigFiles(runtime, [kept, fixed]);
      expect(runtime.describe('binding', 'read').instances).to.deep.equal(['main']);
    } finally {
      await runtime.shutdown();
    }
  });
});
