import { expect } from 'chai';
import { builtinPostprocessors, builtinPreprocessors } from '../../src/processors';
import { withDefaults } from '../../src/processors/shared/options';
import { call, startRuntime, type Started } from '../helpers/runtime';
import { runPre, ctx, pre, post } from './support';

/**
 * Processor configs are checked at publish against each type's config
 * schema: a bad one answers 400 naming the field, and nothing is stored.
 */

const onramp = (preprocessors: unknown[]) => ({ id: 'src', type: 'file', config: { source: '/nonexistent/in.json' }, preprocessors });
const offramp = (postprocessors: unknown[]) => ({ id: 'dst', type: 'file', config: { file: '/nonexistent/out.json' }, postprocessors });

describe('processor configs are validated by their schemas at publish', () => {
  let rt: Started;
  before(async () => (rt = await startRuntime()));
  after(() => rt.stop());

  async function refused(kind: 'onramp' | 'offramp', body: unknown): Promise<string> {
    const before = (await call(rt.base, 'GET', `/${kind}`)).body;
    const reply = await call(rt.base, 'POST', `/${kind}`, { body });
    expect(reply.status, JSON.stringify(reply.body)).to.equal(400);
    // a refused publish stores nothing
    expect((await call(rt.base, 'GET', `/${kind}`)).body).to.deep.equal(before);
    return (reply.body as { error: string }).error;
  }

  it('answers 400 naming the field for the reported reproduction (lines with {bogus: 1}), not 500', async () => {
    expect(await refused('onramp', onramp([{ name: 'lines', config: { bogus: 1 } }]))).to.equal("preprocessors[0].config: unknown field 'bogus'");
  });

  it('refuses an unknown key for every preprocessor and postprocessor type', async () => {
    for (const type of builtinPreprocessors) {
      expect(await refused('onramp', onramp(['remove-empty', { name: type.name, config: { bogus: 1 } }])), type.name).to.equal(
        "preprocessors[1].config: unknown field 'bogus'",
      );
    }
    for (const type of builtinPostprocessors) {
      expect(await refused('offramp', offramp([{ name: type.name, config: { bogus: 1 } }])), type.name).to.equal(
        "postprocessors[0].config: unknown field 'bogus'",
      );
    }
  });

  const badValues: { kind: 'onramp' | 'offramp'; name: string; config: Record<string, unknown>; error: string }[] = [
    { kind: 'onramp', name: 'lines', config: { max_length: 0 }, error: 'preprocessors[0].config.max_length: must be >= 1' },
    { kind: 'onramp', name: 'lines', config: { max_length: 1.5 }, error: 'preprocessors[0].config.max_length: must be integer' },
    { kind: 'onramp', name: 'lines', config: { max_length: '10' }, error: 'preprocessors[0].config.max_length: must be integer' },
    { kind: 'onramp', name: 'lines', config: { max_length: 2 ** 60 }, error: 'preprocessors[0].config.max_length: must be <= 9007199254740991' },
    { kind: 'onramp', name: 'lines', config: { separator: 'ab' }, error: 'preprocessors[0].config.separator: must match ^[\\u0000-\\u007f]$' },
    { kind: 'onramp', name: 'lines', config: { separator: 'é' }, error: 'preprocessors[0].config.separator: must match ^[\\u0000-\\u007f]$' },
    { kind: 'onramp', name: 'lines', config: { separator: 10 }, error: 'preprocessors[0].config.separator: must be string' },
    { kind: 'onramp', name: 'lines-null', config: { separator: ';' }, error: "preprocessors[0].config: unknown field 'separator'" },
    { kind: 'onramp', name: 'length-prefixed', config: { max_length: -1 }, error: 'preprocessors[0].config.max_length: must be >= 1' },
    { kind: 'onramp', name: 'textual-length-prefix', config: { max_length: 'big' }, error: 'preprocessors[0].config.max_length: must be integer' },
    { kind: 'onramp', name: 'gelf-chunking', config: { max_messages: 0 }, error: 'preprocessors[0].config.max_messages: must be >= 1' },
    {
      kind: 'onramp',
      name: 'gelf-chunking-tcp',
      config: { timeout_ms: 'soon' },
      error:
        "preprocessors[0].config.timeout_ms: 'soon' is not a duration; a duration is a positive number of milliseconds, or a number with a unit: 500ms, 10s, 1m, 2h, 1d, or combined: 1h30m",
    },
    { kind: 'onramp', name: 'gzip', config: { level: 3 }, error: "preprocessors[0].config: unknown field 'level'" },
    { kind: 'offramp', name: 'lines', config: { separator: '' }, error: 'postprocessors[0].config.separator: must match ^[\\u0000-\\u007f]$' },
    { kind: 'offramp', name: 'gelf-chunking', config: { chunk_size: 0 }, error: 'postprocessors[0].config.chunk_size: must be >= 1' },
    { kind: 'offramp', name: 'length-prefixed', config: { max_length: 10 }, error: "postprocessors[0].config: unknown field 'max_length'" },
  ];
  for (const { kind, name, config, error } of badValues) {
    it(`${kind} ${name} with ${JSON.stringify(config)}: 400 "${error}"`, async () => {
      const spec = [{ name, config }];
      expect(await refused(kind, kind === 'onramp' ? onramp(spec) : offramp(spec))).to.equal(error);
    });
  }

  it('an entry that is neither a name nor {name, config} is refused by the artefact schema, naming the entry', async () => {
    expect(await refused('onramp', onramp([{ name: 'lines', config: [1] }]))).to.equal('preprocessors[0].config: must be object');
    expect(await refused('onramp', onramp(['lines', 5]))).to.equal('preprocessors[1]: must be string or object');
    expect(await refused('onramp', onramp([{ name: 'nope' }]))).to.match(/^preprocessors\[0\]\.name: must be one of base64, decompress, /);
  });

  it('publishes good configs as they were written (defaults are not stored)', async () => {
    const body = onramp(['remove-empty', { name: 'lines', config: { separator: ';', max_length: 10 } }, { name: 'gelf-chunking' }]);
    expect((await call(rt.base, 'POST', '/onramp', { body })).status).to.equal(201);
    expect((await call(rt.base, 'GET', '/onramp/src')).body)
      .to.have.nested.property('artefact.preprocessors')
      .that.deep.equals(body.preprocessors);
    expect((await call(rt.base, 'DELETE', '/onramp/src')).status).to.equal(200);
  });
});

describe('processor config defaults come from the schema', () => {
  it('withDefaults fills absent keys from the schema and keeps given ones', () => {
    const schema = { properties: { a: { default: 1 }, b: { default: 'x' }, c: {} } };
    expect(withDefaults(schema, { b: 'y' })).to.deep.equal({ a: 1, b: 'y' });
  });

  it('lines without config splits on \\n and keeps a line of exactly the default max_length (1 MiB), not one byte more', () => {
    const max = (builtinPreprocessors.find((t) => t.name === 'lines')!.configSchema.properties as Record<string, { default: number }>).max_length.default;
    expect(max).to.equal(1_048_576);
    const line = Buffer.alloc(max, 0x61);
    expect(runPre(pre('lines'), [line, Buffer.from('\n')])).to.deep.equal([line]);
    expect(() => pre('lines').process(Buffer.concat([line, Buffer.from('a\n')]), ctx())).to.throw(/line longer than 1048576 bytes skipped/);
  });

  it('the lines postprocessor appends \\n by default and the configured separator otherwise', () => {
    expect(post('lines').process(Buffer.from('a'), ctx())).to.deep.equal([Buffer.from('a\n')]);
    expect(post('lines', { separator: '\0' }).process(Buffer.from('a'), ctx())).to.deep.equal([Buffer.from('a\0')]);
  });

  it('gelf-chunking cuts 8180-byte chunks by default', () => {
    const chunks = post('gelf-chunking').process(Buffer.alloc(8181), ctx());
    expect(chunks.map((c) => c.length)).to.deep.equal([12 + 8180, 12 + 1]);
  });
});
