import { expect } from 'chai';
import { join } from 'node:path';
import { TypeRegistry } from '../../src/core/registry';
import { codecCatalog } from '../../src/codecs/catalog';
import { offrampCatalog, onrampCatalog } from '../../src/connectors/catalog';
import { operatorCatalog } from '../../src/pipeline/operators/catalog';
import { postprocessorCatalog, preprocessorCatalog } from '../../src/processors/catalog';
import { runNode } from '../helpers/cli';

const DIST = join(__dirname, '../..');

/** Runs `script` in a fresh node (this process has every module loaded already) and returns its stdout. */
async function fresh(script: string): Promise<string> {
  const run = await runNode(['-e', script], { timeoutMs: 20_000 });
  expect(run.code, run.stderr).to.equal(0);
  return run.stdout.trim();
}

const loaded = (pkg: string) => `Object.keys(require.cache).some((k) => k.includes('/node_modules/${pkg}/'))`;

describe('builtin types load on first use', () => {
  it('every catalog entry loads the type of its own name', () => {
    for (const catalog of [codecCatalog, onrampCatalog, offrampCatalog, preprocessorCatalog, postprocessorCatalog, operatorCatalog]) {
      for (const entry of catalog) expect(entry.load().name, entry.name).to.equal(entry.name);
    }
  });

  it('a registry lists a lazy type by name, loads it once on get, and refuses the name twice', () => {
    const registry = new TypeRegistry<{ name: string }>('thing');
    let loads = 0;
    registry.registerLazy('slow', () => ({ name: `slow${++loads}` }));
    registry.register('plain', { name: 'plain' });
    expect(registry.names()).to.deep.equal(['plain', 'slow']);
    expect(registry.has('slow')).to.equal(true);
    expect(loads).to.equal(0);
    expect(registry.get('slow').name).to.equal('slow1');
    expect(registry.get('slow').name).to.equal('slow1');
    expect(() => registry.registerLazy('plain', () => ({ name: 'x' }))).to.throw("thing type 'plain' is already registered");
    expect(() => registry.register('slow', { name: 'x' })).to.throw("thing type 'slow' is already registered");
    expect(() => registry.get('nope')).to.throw("type: unknown thing 'nope' (known: plain, slow)");
  });

  it('a runtime with the builtins loads @platformatic/kafka (and msgpackr) only when an artefact uses them', async () => {
    const out = await fresh(`
      const { Runtime } = require(${JSON.stringify(join(DIST, 'src/runtime/runtime'))});
      const runtime = new Runtime();
      const before = ${loaded('@platformatic/kafka')} || ${loaded('pg')} || ${loaded('@grpc/grpc-js')} || ${loaded('msgpackr')};
      runtime.publish('onramp', { id: 'k', type: 'kafka', codec: 'msgpack', config: { group_id: 'g', topics: ['t'], brokers: ['127.0.0.1:1'] } });
      const published = ${loaded('@platformatic/kafka')};
      runtime.registries.codecs.get('msgpack');
      console.log(JSON.stringify({ before, published, msgpackr: ${loaded('msgpackr')}, pg: ${loaded('pg')} }));
    `);
    expect(JSON.parse(out)).to.deep.equal({ before: false, published: true, msgpackr: true, pg: false });
  });

  it('importing eddy loads no connector library; the exported records load a type when it is read', async () => {
    const out = await fresh(`
      const eddy = require(${JSON.stringify(join(DIST, 'src/index'))});
      const before = ${loaded('pg')};
      const names = Object.keys(eddy.offramps).includes('postgres');
      const type = eddy.offramps.postgres;
      console.log(JSON.stringify({ before, names, name: type.name, after: ${loaded('pg')}, same: eddy.offramps.postgres === type }));
    `);
    expect(JSON.parse(out)).to.deep.equal({ before: false, names: true, name: 'postgres', after: true, same: true });
  });
});
