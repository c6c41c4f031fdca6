import { expect } from 'chai';
import Ajv from 'ajv';
import { parse as parseYaml } from 'yaml';
import { configFileSchema } from '../../src/config/file-schema';
import { main } from '../../src/cli/main';
import { NEW_KINDS, skeleton } from '../../src/config/skeleton';
import { createLogger } from '../../src/core/logger';
import type { JsonSchema } from '../../src/schema/json-schema';
import { Registries } from '../../src/runtime/registries';
import { Runtime } from '../../src/runtime/runtime';
import { typeInfo, typeNames } from '../../src/runtime/type-info';

async function eddy(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await main(argv, { out: (t) => (out += t), err: (t) => (err += t), env: {} });
  return { code, out, err };
}

/**
 * Values a user would write where the schema cannot say what is valid (a
 * window needs one of its optional fields; an aggregate call must parse),
 * by `type:path`. Every other placeholder is filled from the type's
 * example config, or from the schema alone.
 */
const BY_HAND: Record<string, unknown> = {
  'window::aggregate:window': { size: '1m' },
  'window::aggregate:aggregate': { n: 'count()' },
};

/** A value the schema takes: its first enum value, its first alternative, the least number, a list of one. */
function sample(schema: JsonSchema, example: unknown, at: string): unknown {
  if (at in BY_HAND) return BY_HAND[at];
  if (example !== undefined) return example;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  if (schema.const !== undefined) return schema.const;
  const branches = (schema.oneOf ?? schema.anyOf) as JsonSchema[] | undefined;
  if (Array.isArray(branches)) return sample(branches[0], undefined, at);
  const type = Array.isArray(schema.type) ? (schema.type as string[])[0] : schema.type;
  switch (type) {
    case 'string':
      return 'sample';
    case 'integer':
    case 'number':
      return typeof schema.minimum === 'number' ? Math.max(schema.minimum, 1) : 1;
    case 'boolean':
      return false;
    case 'array':
      return [sample(schema.items as JsonSchema, undefined, `${at}[]`)];
    default:
      return fill({}, schema, undefined, at);
  }
}

/** `value` with every placeholder (null where the schema takes no null) filled, walking the schema and the type's example alongside. */
function fill(value: unknown, schema: JsonSchema, example: unknown, at: string): unknown {
  if (value === null) return sample(schema, example, at);
  if (Array.isArray(value)) return value.map((v, i) => fill(v, schema.items as JsonSchema, (example as unknown[] | undefined)?.[i], `${at}[]`));
  if (typeof value !== 'object') return value;
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const out = { ...(value as Record<string, unknown>) };
  for (const key of (schema.required as string[] | undefined) ?? []) if (!(key in out)) out[key] = null;
  for (const [key, v] of Object.entries(out)) {
    if (properties[key])
      out[key] = fill(v, properties[key], (example as Record<string, unknown> | undefined)?.[key], at.endsWith(':') ? `${at}${key}` : `${at}.${key}`);
  }
  return out;
}

/** Every line that holds a field (not only a comment). */
function activeLines(text: string): string[] {
  return text.split('\n').filter((l) => l.trim() !== '' && !l.trim().startsWith('#'));
}

describe('eddy new', function () {
  this.timeout(60_000);
  const registries = Registries.withBuiltins();
  const configFile = new Ajv({ strict: false, allErrors: true }).compile(configFileSchema(registries));

  for (const kind of NEW_KINDS) {
    it(`every builtin ${kind} type: the file parses, is refused as printed, and publishes (and passes eddy schema) once its placeholders are filled`, () => {
      const runtime = new Runtime({ logger: createLogger('silent') });
      const section = kind === 'operator' ? 'pipeline' : kind;
      const failures: string[] = [];
      for (const type of typeNames(registries, kind)) {
        const text = skeleton(registries, kind, type);
        const doc = parseYaml(text) as Record<string, Record<string, unknown>[]>;
        expect(Object.keys(doc), type).to.deep.equal([section]);
        const [artefact] = doc[section];
        const info = typeInfo(registries, kind, type);
        const example = kind === 'operator' ? undefined : (kind === 'onramp' ? registries.onramps : registries.offramps).get(type).example;
        const printed = () => (parseYaml(text) as Record<string, unknown[]>)[section][0];
        let filled: Record<string, unknown>;
        if (kind === 'operator') {
          const node = (artefact.nodes as Record<string, unknown>[])[0];
          expect(node.type, type).to.equal(type);
          if (node.config !== undefined) node.config = fill(node.config, info.schema!, undefined, `${type}:`);
          filled = artefact;
        } else {
          expect(artefact.type, type).to.equal(type);
          filled = { ...artefact, ...(artefact.config === undefined ? {} : { config: fill(artefact.config, info.schema!, example, `${type}:`) }) };
        }
        // as printed, a file with a required field is refused: the user has something to fill in
        if (activeLines(text).some((l) => l.includes('# required')))
          expect(() => runtime.repository.validate(section, printed()), `${type} as printed`).to.throw();
        // what publish takes, the editor's schema takes too (eddy schema)
        if (!configFile({ [section]: [filled] })) failures.push(`${type}: refused by eddy schema: ${JSON.stringify(configFile.errors)}`);
        try {
          runtime.publish(section, filled);
        } catch (err) {
          failures.push(`${type}: ${(err as Error).message}\n${JSON.stringify(filled)}`);
        }
      }
      expect(failures).to.deep.equal([]);
    });
  }

  it('writes required fields as null placeholders marked `# required`, optional ones commented out at their default', () => {
    const text = skeleton(registries, 'onramp', 'metronome');
    expect(text).to.match(/^ {6}interval: null {2}# required; duration \(a bare number: ms\): the time between ticks/m);
    const tcp = skeleton(registries, 'offramp', 'tcp');
    expect(tcp).to.match(/^ {6}host: null {2}# required; string: /m);
    expect(tcp).to.match(/^ {6}# \w+: \S+ {2}# [^#]*, default /m);
    // a list of objects comes with one item to fill in
    expect(skeleton(registries, 'onramp', 'crononome')).to.match(
      /entries: {2}# required; list of object: .*\n {8}- name: null {2}# required; string: .*\n {10}expr: null {2}# required/,
    );
    // a type that must be linked says so
    expect(parseYaml(skeleton(registries, 'offramp', 'kv'))).to.have.nested.property('offramp[0].linked', true);
  });

  it('eddy new TYPE finds the kind when one kind has the type; KIND may be plural; --id names the artefact', async () => {
    const alone = await eddy(['new', 'runtime::cel']);
    expect(alone).to.deep.include({ code: 0, err: '' });
    expect(alone.out).to.equal(skeleton(registries, 'operator', 'runtime::cel'));
    expect((await eddy(['new', 'onramps', 'kafka'])).out).to.equal(skeleton(registries, 'onramp', 'kafka'));
    const named = await eddy(['new', 'onramp', 'metronome', '--id', 'ticks']);
    expect(parseYaml(named.out)).to.have.nested.property('onramp[0].id', 'ticks');
    expect(parseYaml(skeleton(registries, 'operator', 'generic::batch'))).to.have.nested.property('pipeline[0].nodes[0].id', 'batch');
  });

  it('an unknown or ambiguous type, or a kind it does not write, is exit 2 saying what to write', async () => {
    for (const [argv, message] of [
      [['new', 'kafka'], "'kafka' is an onramp and an offramp: say which, e.g. eddy new onramp kafka"],
      [['new', 'metronom'], "unknown type 'metronom' (did you mean 'metronome'?); eddy list names every type"],
      [['new', 'offramp', 'metronome'], 'unknown offramp type'],
      [['new', 'onramp', 'kafk'], "unknown onramp type 'kafk' (did you mean 'kafka'?)"],
      [['new', 'onrmap', 'kafka'], "unknown kind 'onrmap' (did you mean 'onramp'?)"],
      [['new', 'codec', 'json'], 'eddy new writes onramps, offramps and operators'],
      [['new'], 'which type?'],
      [['new', 'onramp', 'metronome', '--id', 'Ticks'], "--id: 'Ticks' starts with 'T'"],
    ] as const) {
      const run = await eddy([...argv]);
      expect(run.code, argv.join(' ')).to.equal(2);
      expect(run.out).to.equal('');
      expect(run.err, argv.join(' ')).to.include(`error: ${message}`);
      expect(run.err).to.include('usage: eddy new');
    }
  });
});
