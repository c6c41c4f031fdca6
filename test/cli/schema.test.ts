import { expect } from 'chai';
import Ajv, { type ValidateFunction } from 'ajv';
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { main } from '../../src/cli/main';
import { configFileSchema, pipelineFileSchema } from '../../src/config/file-schema';
import { Registries } from '../../src/runtime/registries';
import type { JsonSchema } from '../../src/schema/json-schema';
import { EDDY } from '../helpers/cli';
import { EXAMPLES } from '../helpers/examples';

async function eddy(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await main(argv, { out: (t) => (out += t), err: (t) => (err += t), env: {} });
  return { code, out, err };
}

/** A validator as an editor's would be: ajv, every error reported, nothing filled in. */
function compile(schema: JsonSchema): ValidateFunction {
  return new Ajv({ strict: false, allErrors: true }).compile(schema);
}

/** The files under `dir` that end in .yaml and are not case files (`*.cases.yaml`). */
function yamlFiles(dir: string): string[] {
  return readdirSync(dir).filter((f) => f.endsWith('.yaml') && !f.endsWith('.cases.yaml'));
}

/** The errors as one line each: where, and what. */
const errorsOf = (validate: ValidateFunction) => (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message}`).join('\n');

describe('eddy schema', () => {
  const registries = Registries.withBuiltins();
  const config = compile(configFileSchema(registries));

  it('prints the config file schema as JSON; --pipeline the schema of a pipeline file', async () => {
    const printed = await eddy(['schema']);
    expect(printed).to.deep.include({ code: 0, err: '' });
    expect(JSON.parse(printed.out)).to.deep.equal(configFileSchema(registries));
    expect(JSON.parse((await eddy(['schema', '--pipeline'])).out)).to.deep.equal(pipelineFileSchema(registries));
  });

  it('bin/eddy writes the whole schema into a pipe before it exits (`eddy schema | ...` was cut at 64 KiB)', async () => {
    // a shell's pipe, not the socket a child process gets from node, into which a write completes at once
    const stdout = await new Promise<string>((resolve, reject) =>
      execFile('sh', ['-c', `'${process.execPath}' '${EDDY}' schema | cat`], { maxBuffer: 1 << 24 }, (err, out) =>
        err ? reject(new Error(err.message)) : resolve(out),
      ),
    );
    expect(stdout.length).to.be.greaterThan(65536);
    expect(JSON.parse(stdout)).to.deep.equal(configFileSchema(registries));
  });

  it('takes every config file of examples/', () => {
    const files = yamlFiles(EXAMPLES);
    expect(files).to.include('default.yaml');
    for (const file of files) {
      const doc = parseYaml(readFileSync(join(EXAMPLES, file), 'utf8')) as unknown;
      expect(config(doc), `${file}:\n${errorsOf(config)}`).to.equal(true);
    }
  });

  it('takes every pipeline file of examples/pipelines/ (--pipeline)', () => {
    const pipeline = compile(pipelineFileSchema(registries));
    const dir = join(EXAMPLES, 'pipelines');
    const files = yamlFiles(dir);
    expect(files).to.include('dedupe.yaml');
    for (const file of files) {
      const doc = parseYaml(readFileSync(join(dir, file), 'utf8')) as unknown;
      expect(pipeline(doc), `${file}:\n${errorsOf(pipeline)}`).to.equal(true);
    }
  });

  const ticks = { id: 'ticks', type: 'metronome', config: { interval: 1000 } };
  const refused: [string, unknown, RegExp][] = [
    ['an unknown section', { onramps: [ticks] }, /must NOT have additional properties/],
    ['an unknown onramp type', { onramp: [{ ...ticks, type: 'metronom' }] }, /^\/onramp\/0\/type must be equal to one of the allowed values/m],
    [
      'an unknown field of a type',
      { onramp: [{ ...ticks, config: { interval: 1000, intervall: 5 } }] },
      /^\/onramp\/0\/config must NOT have additional properties/m,
    ],
    ['a field of the wrong type', { onramp: [{ ...ticks, config: { interval: 'often' } }] }, /^\/onramp\/0\/config\/interval must be number/m],
    ['a missing required field', { offramp: [{ id: 'out', type: 'file', config: {} }] }, /^\/offramp\/0\/config must have required property 'file'/m],
    [
      "an operator's bad config",
      { pipeline: [{ id: 'p', nodes: [{ id: 'b', type: 'generic::batch', config: { count: 0 } }] }] },
      /^\/pipeline\/0\/nodes\/0\/config\/count must be >= 1/m,
    ],
    [
      'an unknown operator',
      { pipeline: [{ id: 'p', nodes: [{ id: 'b', type: 'generic::batc' }] }] },
      /^\/pipeline\/0\/nodes\/0\/type must be equal to one of/m,
    ],
    [
      "a processor's bad config",
      { onramp: [{ ...ticks, preprocessors: [{ name: 'lines', config: { max_length: 0 } }] }] },
      /^\/onramp\/0\/preprocessors\/0\/config\/max_length must be >= 1/m,
    ],
    [
      'config for a codec that takes none',
      { offramp: [{ id: 'out', type: 'stdout', codec: { name: 'json', config: {} } }] },
      /^\/offramp\/0\/codec\/config boolean schema is false/m,
    ],
    ['a flow without to', { flow: [{ id: 'f', from: 'ticks' }] }, /^\/flow\/0 must have required property 'to'/m],
    ['a mapping value that is no string', { mapping: { '/binding/b/main': { n: 1 } } }, /^\/mapping\/~1binding~1b~1main\/n must be string/m],
    ['a bad mapping key', { mapping: { 'binding/b': {} } }, /^\/mapping .*must match pattern/m],
  ];
  for (const [what, doc, error] of refused) {
    it(`refuses ${what}, saying where`, () => {
      expect(config(doc)).to.equal(false);
      expect(errorsOf(config)).to.match(error);
    });
  }
});
