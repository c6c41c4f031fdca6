import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CodecType } from '../../src/codecs/codec';
import { CONFIG_FILES_PATH, REFERENCE_PATH, renderConfigReference, withDurationFields } from '../../tools/docs/config-reference';
import { repoRoot } from '../../tools/docs/connector-reference';
import type { OperatorType } from '../../src/pipeline/operator';
import type { PostprocessorType, PreprocessorType } from '../../src/processors/processor';
import { Registries } from '../../src/runtime/registries';
import type { JsonSchema } from '../../src/schema/json-schema';

const ROOT = repoRoot(__dirname);

/** Every property of a schema, nested ones included, as [path, property schema]. */
function properties(schema: JsonSchema, prefix = ''): [string, JsonSchema][] {
  const out: [string, JsonSchema][] = [];
  for (const [key, property] of Object.entries((schema.properties ?? {}) as Record<string, JsonSchema>)) {
    out.push([`${prefix}${key}`, property]);
    out.push(...properties(property, `${prefix}${key}.`));
    const items = property.items as JsonSchema | undefined;
    if (items && typeof items === 'object') out.push(...properties(items, `${prefix}${key}[].`));
  }
  return out;
}

describe('config reference (docs/reference.md)', () => {
  const registries = Registries.withBuiltins();
  const operators = registries.operators.names().map((n) => registries.operators.get(n));
  const processors = [
    ...registries.preprocessors.names().map((n) => ['preprocessor', registries.preprocessors.get(n)] as const),
    ...registries.postprocessors.names().map((n) => ['postprocessor', registries.postprocessors.get(n)] as const),
  ];

  it('is exactly what the schemas render (run `npm run docs` after changing a schema)', () => {
    const current = readFileSync(join(ROOT, REFERENCE_PATH), 'utf8');
    const rendered = renderConfigReference(registries);
    if (current !== rendered) {
      const a = current.split('\n');
      const b = rendered.split('\n');
      const line = a.findIndex((l, i) => l !== b[i]);
      const at = line < 0 ? Math.min(a.length, b.length) : line;
      expect.fail(
        `${REFERENCE_PATH} is out of date: run \`npm run docs\` and commit it.\n` +
          `First difference at line ${at + 1}:\n  file:     ${JSON.stringify(a[at] ?? '<end>')}\n  rendered: ${JSON.stringify(b[at] ?? '<end>')}`,
      );
    }
  });

  it('docs/config-files.md lists the duration fields whose bare number is not ms, as the schemas say (run `npm run docs`)', () => {
    const current = readFileSync(join(ROOT, CONFIG_FILES_PATH), 'utf8');
    expect(withDurationFields(current, registries) === current, `${CONFIG_FILES_PATH}: the durations table is out of date`).to.equal(true);
    expect(current).to.contain('| offramp | blackhole | `stop_after_secs` | s |');
  });

  it('README.md links it', () => {
    expect(readFileSync(join(ROOT, 'README.md'), 'utf8')).to.contain('(docs/reference.md)');
  });

  it('every operator has a schema refusing unknown keys, a one-line summary, and a description on every property', () => {
    for (const op of operators) {
      const schema = op.configSchema!;
      expect(schema, op.name).to.be.an('object');
      expect(schema.additionalProperties, op.name).to.equal(false);
      expect(schema.description, `${op.name} summary`).to.be.a('string').and.match(/^[^\n]+\.$/);
      for (const [path, property] of properties(schema)) expect(property.description, `${op.name} ${path}`).to.be.a('string').and.not.equal('');
    }
  });

  it('every pre- and postprocessor has a schema refusing unknown keys, a summary, and a description and default on every property', () => {
    for (const [kind, type] of processors) {
      const where = `${kind} ${type.name}`;
      expect(type.configSchema.additionalProperties, where).to.equal(false);
      expect(type.configSchema.description, `${where} summary`).to.be.a('string').and.match(/^[^\n]+\.$/);
      for (const [path, property] of properties(type.configSchema)) {
        expect(property.description, `${where} ${path}`).to.be.a('string').and.not.equal('');
        // processor config keys are all optional: create() takes the default from here
        expect(property.default, `${where} ${path} default`).not.to.equal(undefined);
      }
    }
  });

  it('every codec has a one-line summary', () => {
    for (const name of registries.codecs.names()) expect(registries.codecs.get(name).summary, name).to.be.a('string').and.match(/^[^\n]+\.$/);
  });

  describe('rendering', () => {
    const fake = (): Registries => {
      const r = new Registries();
      const op: OperatorType = {
        name: 'test::op',
        configSchema: {
          type: 'object',
          additionalProperties: false,
          description: 'Does a | thing.',
          required: ['must'],
          anyOf: [{ required: ['a'] }, { required: ['b'] }],
          properties: {
            must: { type: 'integer', minimum: 1, description: 'needed' },
            a: { type: 'string', description: 'one\nway' },
            b: { type: 'array', items: { type: 'string' }, default: ['x'], description: 'other way' },
          },
        },
        create: () => (source) => source,
      };
      const bare: OperatorType = { name: 'bare', create: () => (source) => source };
      const pre: PreprocessorType = {
        name: 'cut',
        configSchema: { type: 'object', additionalProperties: false, description: 'Cuts.', properties: { size: { type: 'integer', default: 3, description: 'bytes' } } },
        create: () => ({ process: (chunk) => [chunk] }),
      };
      const post: PostprocessorType = {
        name: 'glue',
        configSchema: { type: 'object', additionalProperties: false, description: 'Glues.', properties: {} },
        create: () => ({ process: (frame) => [frame] }),
      };
      const codec: CodecType = { name: 'text', summary: 'Text.', mimeTypes: ['text/x'], create: () => ({ name: 'text', decode: String, encode: (value) => Buffer.from(value as string) }) };
      r.operators.register(op.name, op);
      r.operators.register(bare.name, bare);
      r.preprocessors.register(pre.name, pre);
      r.postprocessors.register(post.name, post);
      r.codecs.register(codec.name, codec);
      return r;
    };

    it('lists each kind with a summary table, then per type its summary and a key/type/default/description table', () => {
      const text = renderConfigReference(fake());
      const headings = text.split('\n').filter((l) => l.startsWith('#'));
      expect(headings).to.deep.equal([
        '# Config reference',
        '## Operators',
        '### operator `bare`',
        '### operator `test::op`',
        '## Preprocessors',
        '### preprocessor `cut`',
        '## Postprocessors',
        '### postprocessor `glue`',
        '## Codecs',
        '### codec `text`',
      ]);
      expect(text).to.contain('| `test::op` | Does a \\| thing. |');
      expect(text).to.contain('| `bare` |  |');
      expect(text).to.contain(
        [
          '| Key | Type | Default | Description |',
          '|---|---|---|---|',
          '| `must` | integer (≥ 1) | required | needed |',
          '| `a` | string |  | one way |',
          '| `b` | list of string | `["x"]` | other way |',
          '',
          'At least one of `a`, `b` is required.',
        ].join('\n'),
      );
      expect(text).to.contain('### preprocessor `cut`\n\nCuts.\n\n| Key | Type | Default | Description |\n|---|---|---|---|\n| `size` | integer | `3` | bytes |');
      expect(text).to.contain('### postprocessor `glue`\n\nGlues.\n\nNo config keys (`config` is empty or absent).');
      expect(text).to.contain('### codec `text`\n\nText. Mime types: `text/x`.\n\nTakes no config.\n');
    });
  });
});
