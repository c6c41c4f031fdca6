import { expect } from 'chai';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Runtime } from '../../src/runtime/runtime';
import { createLogger } from '../../src/core/logger';
import { loadConfigFiles } from '../../src/config/load';
import { ConfigReloader, planReload, type Declared } from '../../src/config/reload';
import { addDeclarations, emptyDeclared, type ConfigFile } from '../../src/config/declared';
import { eventually } from '../helpers/runtime';

const flow = (id: string, onramp: string, offramp: string) => ({
  id,
  links: {
    [`/onramp/${onramp}/{instance}/out`]: ['/pipeline/system::passthrough/{instance}/in'],
    '/pipeline/system::passthrough/{instance}/out': [`/offramp/${offramp}/{instance}/in`],
  },
});

/** Two flows: `a` (ticks -> a_out) and `b` (beats -> b_out), each a metronome into a file. */
function twoFlows(dir: string, bInterval = 5, extra: Partial<ConfigFile> = {}): ConfigFile {
  return {
    onramp: [
      { id: 'ticks', type: 'metronome', config: { interval: 1 } },
      { id: 'beats', type: 'metronome', config: { interval: bInterval } },
    ],
    offramp: [
      { id: 'a_out', type: 'file', config: { file: join(dir, 'a.json') } },
      { id: 'b_out', type: 'file', config: { file: join(dir, 'b.json') } },
    ],
    binding: [flow('a', 'ticks', 'a_out'), flow('b', 'beats', 'b_out')],
    mapping: { '/binding/a/a': {}, '/binding/b/b': {} },
    ...extra,
  };
}

function declared(config: ConfigFile): Declared {
  const d = emptyDeclared();
  addDeclarations(d, 'flows.yaml', config);
  return d;
}

describe('config files: reload', () => {
  describe('planReload', () => {
    const dir = '/tmp/x';
    it('leaves everything as it is when nothing changed (key order aside)', () => {
      const before = declared(twoFlows(dir));
      const reordered = twoFlows(dir);
      reordered.onramp = [{ config: { interval: 1 }, type: 'metronome', id: 'ticks' }, reordered.onramp![1]];
      const plan = planReload(before, declared(reordered));
      expect(plan).to.deep.include({ deactivate: [], unpublish: [], publish: [], activate: [], unchanged: 8 });
    });

    it('restarts only the mapping that uses a changed artefact, republishing the artefact', () => {
      const plan = planReload(declared(twoFlows(dir)), declared(twoFlows(dir, 7)));
      expect(plan.deactivate).to.deep.equal(['/binding/b/b']);
      expect(plan.unpublish.map((d) => `${d.kind}/${d.id}`)).to.deep.equal(['onramp/beats']);
      expect(plan.publish.map((d) => `${d.kind}/${d.id}`)).to.deep.equal(['onramp/beats']);
      expect(plan.activate.map((m) => m.key)).to.deep.equal(['/binding/b/b']);
      expect(plan.unchanged).to.equal(6);
    });

    it('stops a removed mapping and unpublishes removed artefacts, bindings before their parts; publishes new ones parts first', () => {
      const before = declared(twoFlows(dir));
      const after = twoFlows(dir);
      after.binding = [flow('a', 'ticks', 'a_out'), flow('c', 'beats', 'c_out')];
      after.offramp = [after.offramp![0], { id: 'c_out', type: 'stdout' }];
      after.mapping = { '/binding/a/a': {}, '/binding/c/main': { x: '1' } };
      const plan = planReload(before, declared(after));
      expect(plan.deactivate).to.deep.equal(['/binding/b/b']);
      expect(plan.unpublish.map((d) => `${d.kind}/${d.id}`)).to.deep.equal(['binding/b', 'offramp/b_out']);
      expect(plan.publish.map((d) => `${d.kind}/${d.id}`)).to.deep.equal(['offramp/c_out', 'binding/c']);
      expect(plan.activate.map((m) => [m.key, m.params])).to.deep.equal([['/binding/c/main', { x: '1' }]]);
    });

    it('restarts a mapping whose values changed', () => {
      const before = declared({ ...twoFlows(dir), mapping: { '/binding/a/a': { v: '1' } } });
      const plan = planReload(before, declared({ ...twoFlows(dir), mapping: { '/binding/a/a': { v: '2' } } }));
      expect(plan.deactivate).to.deep.equal(['/binding/a/a']);
      expect(plan.activate.map((m) => m.params)).to.deep.equal([{ v: '2' }]);
      expect(plan.publish).to.deep.equal([]);
    });
  });

  describe('a running runtime', function () {
    this.timeout(30000);
    let dir: string;
    let runtime: Runtime;
    const file = () => join(dir, 'flows.json');
    const write = (config: ConfigFile) => writeFileSync(file(), JSON.stringify(config));
    const lines = (name: string) =>
      existsSync(join(dir, name))
        ? readFileSync(join(dir, name), 'utf8')
            .split('\n')
            .filter((l) => l !== '')
        : [];
    const ids = (name: string) => lines(name).map((l) => (JSON.parse(l) as { id: number }).id);

    beforeEach(async () => {
      dir = mkdtempSync(join(tmpdir(), 'eddy-reload-'));
      runtime = await new Runtime({ logger: createLogger('silent') }).start();
    });
    afterEach(async () => {
      await runtime.shutdown();
      rmSync(dir, { recursive: true, force: true });
    });

    it('reloads a changed flow while an unrelated one runs on: not one of its events lost or repeated', async () => {
      write(twoFlows(dir));
      const reloader = new ConfigReloader(runtime, [file()], await loadConfigFiles(runtime, [file()]), createLogger('silent'));
      await eventually(() => lines('a.json').length >= 50 && lines('b.json').length >= 2, 10000, 'both flows to write');
      for (let round = 1; round <= 5; round++) {
        write(twoFlows(dir, 5 + round));
        const seen = lines('a.json').length;
        const result = await reloader.reload();
        expect(result.errors).to.deep.equal([]);
        expect(result.plan.deactivate).to.deep.equal(['/binding/b/b']);
        expect((runtime.describe('onramp', 'beats').artefact as unknown as { config: { interval: number } }).config.interval).to.equal(5 + round);
        // flow a goes on: a later tick than any before the reload
        await eventually(() => lines('a.json').length > seen + 20, 10000, 'flow a to go on');
      }
      await eventually(() => lines('b.json').length >= 1, 10000, 'flow b to run again');
      await runtime.deactivate('binding', 'a', 'a');
      const got = ids('a.json');
      expect(got.length).to.be.greaterThan(100);
      expect(got, 'the ticks of flow a, every one once and in order').to.deep.equal(got.map((_, i) => got[0] + i));
    });

    it('changes nothing when a file does not validate, naming the file, the artefact and the field', async () => {
      write(twoFlows(dir));
      const reloader = new ConfigReloader(runtime, [file()], await loadConfigFiles(runtime, [file()]), createLogger('silent'));
      const broken = twoFlows(dir, 9);
      (broken.offramp as { config: Record<string, unknown> }[])[0].config = { file: join(dir, 'a2.json'), append: 'yes' };
      write(broken);
      const error = await reloader.reload().then(
        () => undefined,
        (err: unknown) => err as Error,
      );
      expect(error?.message).to.match(new RegExp(`^${file()}: offramp 'a_out': .*append.*boolean`));
      expect((runtime.describe('onramp', 'beats').artefact as unknown as { config: { interval: number } }).config.interval, 'b untouched too').to.equal(5);
      expect(runtime.instancesOf('binding', 'b')).to.deep.equal(['b']);
      // an unreadable file too
      writeFileSync(file(), '{ not json');
      expect(
        (
          await reloader.reload().then(
            () => undefined,
            (err: unknown) => err as Error,
          )
        )?.message,
      ).to.contain(`${file()}: not valid YAML or JSON`);
      // and a fixed file is applied against what last loaded
      write(twoFlows(dir, 9));
      expect((await reloader.reload()).plan.deactivate).to.deep.equal(['/binding/b/b']);
    });

    it('refuses to replace an artefact that an instance activated over the API runs, and changes nothing', async () => {
      write(twoFlows(dir));
      const reloader = new ConfigReloader(runtime, [file()], await loadConfigFiles(runtime, [file()]), createLogger('silent'));
      runtime.publish('binding', flow('api', 'beats', 'b_out'));
      await runtime.activate('binding', 'api', 'other');
      write(twoFlows(dir, 9));
      const error = await reloader.reload().then(
        () => undefined,
        (err: unknown) => err as Error,
      );
      expect(error?.message).to.equal(
        `${file()}: onramp 'beats' changed, but /onramp/beats/other runs it and is not one of the files' mappings: deactivate it first`,
      );
      expect(runtime.instancesOf('binding', 'b')).to.deep.equal(['b']);
    });

    it('activates on the next reload a mapping an earlier reload could not (a fixed cause is picked up)', async () => {
      write(twoFlows(dir));
      const reloader = new ConfigReloader(runtime, [file()], await loadConfigFiles(runtime, [file()]), createLogger('silent'));
      await runtime.deactivate('binding', 'b', 'b');
      const result = await reloader.reload();
      expect(result.plan.activate.map((m) => m.key)).to.deep.equal(['/binding/b/b']);
      expect(runtime.instancesOf('binding', 'b')).to.deep.equal(['b']);
    });
  });
});
