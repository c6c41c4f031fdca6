import { expect } from 'chai';
import { copyFileSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import Ajv from 'ajv';
import { AJV_OPTIONS, artefactSchemas, SchemaValidator } from '../../src/schema/artefacts';
import { precompile } from '../../tools/precompile';
import { precompiledValidator, schemaKey } from '../../src/schema/precompiled';
import type { JsonSchema } from '../../src/schema/json-schema';
import { onrampCatalog, offrampCatalog } from '../../src/connectors/catalog';
import { preprocessorCatalog } from '../../src/processors/catalog';
import { operatorCatalog } from '../../src/pipeline/operators/catalog';
import type { LazyType } from '../../src/core/registry';

function typeSchema(catalog: readonly LazyType<{ configSchema?: JsonSchema }>[], name: string): JsonSchema {
  return catalog.find((e) => e.name === name)!.load().configSchema!;
}

describe('precompiled schema validators', () => {
  let dir: string;
  const artefacts = artefactSchemas({ codecs: ['json', 'string'], preprocessors: ['lines'], postprocessors: ['lines'] });
  const schemas: JsonSchema[] = [
    ...Object.values(artefacts),
    typeSchema(onrampCatalog, 'blaster'),
    typeSchema(onrampCatalog, 'kafka'),
    typeSchema(offrampCatalog, 'blackhole'),
    typeSchema(preprocessorCatalog, 'lines'),
    typeSchema(operatorCatalog, 'generic::batch'),
  ];

  before(() => {
    // under dist/, like the build's own directory: the generated code requires ajv's runtime helpers from node_modules
    dir = mkdtempSync(join(__dirname, 'precompiled-'));
    precompile(schemas, dir);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('writes one module per schema, named by its hash', () => {
    expect(readdirSync(dir).sort()).to.deep.equal(schemas.map((s) => `${schemaKey(s)}.js`).sort());
  });

  it('validates, fills defaults and reports errors exactly as ajv compiling at run time', () => {
    const values: [JsonSchema, unknown][] = [
      [artefacts.onramp, { id: 'b', type: 'blaster', codec: 'json', config: { source: 'x' } }],
      [artefacts.onramp, { id: 'b', type: 'blaster', codec: 'yaml' }],
      [artefacts.onramp, { id: 'B', type: 'blaster' }],
      [artefacts.onramp, { id: 'b', type: 'blaster', preprocessors: [{ name: 'lines', config: [1] }] }],
      [artefacts.pipeline, { id: 'p', interface: {}, nodes: [{ id: 'n' }], links: {} }],
      [artefacts.binding, { id: 'b', links: { '/onramp/a/b/out': ['nowhere'] } }],
      [schemas[4], { source: 'x' }],
      [schemas[4], { source: 'x', bogus: 1 }],
      [schemas[5], { group_id: 'g', topics: ['t'], brokers: ['h'] }],
      [schemas[5], { group_id: 'g', topics: [], brokers: ['h'] }],
      [schemas[6], {}],
      [schemas[6], { warmup_secs: -1 }],
      [schemas[7], { max_length: 'x' }],
      [schemas[8], { count: 5 }],
    ];
    const ajv = new Ajv(AJV_OPTIONS);
    for (const [schema, value] of values) {
      const generated = precompiledValidator(schema, dir)!;
      const compiled = ajv.compile(schema);
      const [a, b] = [structuredClone(value), structuredClone(value)];
      const label = JSON.stringify(value);
      expect(generated(a), label).to.equal(compiled(b));
      expect(a, label).to.deep.equal(b); // the same defaults filled in
      expect(generated.errors ?? null, label).to.deep.equal(compiled.errors ?? null);
    }
  });

  it('does not use a module generated for another schema text under the same name', () => {
    const [a, b] = [schemas[4], schemas[5]];
    const fileOfB = join(dir, `${schemaKey(b)}.js`);
    copyFileSync(join(dir, `${schemaKey(a)}.js`), fileOfB);
    Reflect.deleteProperty(require.cache, fileOfB); // an earlier test loaded the real one
    try {
      expect(precompiledValidator(a, dir)).to.be.a('function');
      expect(precompiledValidator(b, dir)).to.equal(undefined);
    } finally {
      precompile(schemas, dir);
      Reflect.deleteProperty(require.cache, fileOfB);
    }
  });

  it('has no module for a schema whose text differs from the one built, so it is compiled at run time', () => {
    const changed = { ...schemas[4], description: 'changed since the build' };
    expect(precompiledValidator(changed, dir)).to.equal(undefined);
    const custom: JsonSchema = { type: 'object', required: ['n'], properties: { n: { type: 'integer' }, m: { type: 'integer', default: 3 } } };
    const value: Record<string, unknown> = { n: 1 };
    new SchemaValidator().check(custom, value, 'config');
    expect(value).to.deep.equal({ n: 1, m: 3 });
    expect(() => new SchemaValidator().check(custom, {}, 'config')).to.throw("config: missing required field 'n'");
  });
});
