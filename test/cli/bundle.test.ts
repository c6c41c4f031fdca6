import { expect } from 'chai';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cliModule, codeCacheOf, loadBundle } from '../../src/cli-entry';
import { EDDY } from '../helpers/cli';
import { FirstEventProbe } from '../helpers/first-event';

const DIST_SRC = join(__dirname, '../../src');

describe('the bundled CLI (scripts/bundle.js)', () => {
  let probe: FirstEventProbe;
  before(() => (probe = new FirstEventProbe()));
  after(() => probe.remove());

  it('eddy server run starts from the bundle: no eddy module, rxjs or yaml file is loaded on its own', async () => {
    const files = await probe.modulesAtFirstEvent([EDDY, 'server', 'run', '-f', probe.config, '--no-api']);
    const inDist = files.filter((f) => f.startsWith(DIST_SRC)).map((f) => f.slice(DIST_SRC.length + 1));
    // the bundle itself is compiled from its text and code cache (loadBundle), not required
    expect(inDist.filter((f) => !f.startsWith('schema/precompiled/'))).to.deep.equal(['cli-entry.js']);
    expect(files.filter((f) => /\/node_modules\/(rxjs|yaml)\//.test(f))).to.deep.equal([]);
    // the validators generated at build time are found from the bundle (its __dirname rewritten), so ajv compiles nothing
    expect(inDist.some((f) => f.startsWith('schema/precompiled/'))).to.equal(true);
    expect(files.filter((f) => f.endsWith('/node_modules/ajv/dist/ajv.js'))).to.deep.equal([]);
  });

  it('holds the rxjs modules eddy uses, not the rxjs index', () => {
    const bundle = readFileSync(join(DIST_SRC, 'cli.bundle.js'), 'utf8');
    expect(bundle).to.include('// node_modules/rxjs/dist/cjs/internal/Observable.js');
    expect(bundle).to.not.include('// node_modules/rxjs/dist/cjs/index.js');
  });

  it("the build's code cache is accepted by this node", () => {
    const { exports, script } = loadBundle(join(DIST_SRC, 'cli.bundle.js'));
    expect(script.cachedDataRejected).to.equal(false);
    expect(exports.main).to.be.a('function');
  });

  describe('a code cache', () => {
    let dir: string;
    let bundle: string;
    beforeEach(() => {
      dir = mkdtempSync(join(tmpdir(), 'eddy-cache-'));
      bundle = join(dir, 'x.bundle.js');
      writeFileSync(bundle, 'exports.main = () => Promise.resolve(__filename.length + require("node:path").sep.length);');
      writeFileSync(codeCacheOf(bundle), loadBundle(bundle, false).script.createCachedData());
    });
    afterEach(() => rmSync(dir, { recursive: true, force: true }));

    it('is used when it is at least as young as its bundle, and runs the bundle as a CommonJS module', async () => {
      utimesSync(bundle, 1000, 1000);
      utimesSync(codeCacheOf(bundle), 1000, 1000);
      const { exports, script } = loadBundle(bundle);
      expect(script.cachedDataRejected).to.equal(false);
      expect(await exports.main([])).to.equal(bundle.length + 1);
    });

    it('is left alone when the bundle is younger (V8 would take a stale cache of the same length)', () => {
      utimesSync(codeCacheOf(bundle), 1000, 1000);
      utimesSync(bundle, 2000, 2000);
      expect(loadBundle(bundle).script.cachedDataRejected).to.equal(undefined);
    });
  });

  describe('which build a command runs (src/cli-entry.ts)', () => {
    let dist: string;
    const at = (file: string, seconds: number) => {
      writeFileSync(file, '');
      utimesSync(file, seconds, seconds);
    };
    beforeEach(() => (dist = mkdtempSync(join(tmpdir(), 'eddy-dist-'))));
    afterEach(() => rmSync(dist, { recursive: true, force: true }));

    it('server run takes the bundle when tsc has not compiled since it was made, or when there is no .tsbuildinfo', () => {
      const src = join(dist, 'src');
      mkdirSync(src);
      at(join(src, 'cli.bundle.js'), 2000);
      expect(cliModule(['server', 'run', '-f', 'x.yaml'], src)).to.equal(join(src, 'cli.bundle.js'));
      at(join(dist, '.tsbuildinfo'), 1000);
      expect(cliModule(['server', 'run'], src)).to.equal(join(src, 'cli.bundle.js'));
      at(join(dist, '.tsbuildinfo'), 3000);
      expect(cliModule(['server', 'run'], src)).to.equal(join(src, 'cli.js'));
    });

    it("npm start's build (tsconfig.app.json, its own .tsbuildinfo-app) after the bundle makes it stale too", () => {
      const src = join(dist, 'src');
      mkdirSync(src);
      at(join(src, 'cli.bundle.js'), 2000);
      at(join(dist, '.tsbuildinfo'), 1000);
      at(join(dist, '.tsbuildinfo-app'), 1500);
      expect(cliModule(['server', 'run'], src)).to.equal(join(src, 'cli.bundle.js'));
      at(join(dist, '.tsbuildinfo-app'), 3000);
      expect(cliModule(['server', 'run'], src)).to.equal(join(src, 'cli.js'));
    });

    it('server run takes the plain modules without a bundle; every other command always does', () => {
      const src = join(dist, 'src');
      mkdirSync(src);
      expect(cliModule(['server', 'run'], src)).to.equal(join(src, 'cli.js'));
      at(join(src, 'cli.bundle.js'), 2000);
      for (const argv of [['test', 'cases.yaml', '--require', 'types.js'], ['tap'], ['status'], ['--version'], []]) {
        expect(cliModule(argv, src), argv.join(' ')).to.equal(join(src, 'cli.js'));
      }
    });
  });
});
