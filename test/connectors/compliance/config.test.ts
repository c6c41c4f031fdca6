import { expect } from 'chai';
import { EddyError } from '../../../src/core/errors';
import { createLogger } from '../../../src/core/logger';
import { Registries } from '../../../src/runtime/registries';
import { Runtime } from '../../../src/runtime/runtime';
import type { JsonSchema } from '../../../src/schema/json-schema';
import { call, startRuntime, type Started } from '../../helpers/runtime';
import type { Side } from './protocol';

/**
 * The declarative half of the compliance suite, for every builtin onramp and
 * offramp type (`Registries.withBuiltins()`): an example and a config schema
 * that refuses unknown keys and describes every property (the README's
 * tables are generated from it); the example publishes; an unknown key is a
 * 400-class error naming the key.
 */
const registries = Registries.withBuiltins();
const sides: [Side, string[]][] = [
  ['onramp', registries.onramps.names()],
  ['offramp', registries.offramps.names()],
];
const UNKNOWN_KEY = 'compliance_unknown_key';

function typeOf(side: Side, name: string) {
  return side === 'onramp' ? registries.onramps.get(name) : registries.offramps.get(name);
}

/** `linked: true` where the type only works linked (kv), so the example publishes as users must write it. */
function artefact(side: Side, name: string, config: unknown): Record<string, unknown> {
  const type = typeOf(side, name);
  return { id: 'probe', type: name, config, ...(type.linkable === 'required' ? { linked: true } : {}) };
}

/**
 * What is wrong with a config schema: objects with properties that accept
 * other keys, and properties without a description, at any depth (nested
 * objects, array items, alternatives).
 */
function schemaProblems(schema: JsonSchema, path = 'config'): string[] {
  const problems: string[] = [];
  const isMap = typeof schema.additionalProperties === 'object';
  // a map (free keys, each value checked by additionalProperties) may list keys only to mark them
  // secret (writeOnly, schema/secrets.ts) or a path (schema/paths.ts): kafka's rdkafka_options, whose names its validate checks
  const marksOnly = (p: JsonSchema) => p.writeOnly === true || p.path !== undefined;
  const listed = Object.entries((schema.properties ?? {}) as Record<string, JsonSchema>).filter(([, p]) => !(isMap && marksOnly(p)));
  const properties = listed.length > 0 ? Object.fromEntries(listed) : undefined;
  if (properties !== undefined && schema.additionalProperties !== false) problems.push(`${path}: accepts unknown keys (additionalProperties is not false)`);
  for (const [key, property] of Object.entries(properties ?? {})) {
    if (typeof property.description !== 'string' || property.description.trim() === '') problems.push(`${path}.${key}: no description`);
    problems.push(...schemaProblems(property, `${path}.${key}`));
  }
  if (schema.items && typeof schema.items === 'object') problems.push(...schemaProblems(schema.items as JsonSchema, `${path}[]`));
  if (schema.additionalProperties && typeof schema.additionalProperties === 'object') {
    problems.push(...schemaProblems(schema.additionalProperties as JsonSchema, `${path}.*`));
  }
  for (const keyword of ['oneOf', 'anyOf', 'allOf'] as const) {
    for (const [i, branch] of ((schema[keyword] as JsonSchema[] | undefined) ?? []).entries())
      problems.push(...schemaProblems(branch, `${path}(${keyword}[${i}])`));
  }
  return problems;
}

describe('connector compliance: every builtin type declares its config (schema, example, unknown keys)', () => {
  // one runtime for every publish (not started: the repository alone decides)
  const runtime = new Runtime({ logger: createLogger('silent') });

  for (const [side, types] of sides) {
    for (const name of types) {
      describe(`${side} ${name}`, () => {
        it('has an example config and a config schema that is an object refusing unknown keys', () => {
          const type = typeOf(side, name);
          expect(type.example, 'example').to.be.an('object');
          expect(type.configSchema, 'configSchema').to.be.an('object');
          expect(type.configSchema.type, 'configSchema.type').to.equal('object');
          expect(type.configSchema.additionalProperties, 'configSchema.additionalProperties').to.equal(false);
        });

        it('describes every property of its schema and refuses unknown keys at every depth', () => {
          expect(schemaProblems(typeOf(side, name).configSchema)).to.deep.equal([]);
        });

        it('publishes with its example config over the Runtime API', () => {
          const published = runtime.publish(side, artefact(side, name, typeOf(side, name).example));
          expect(published.id).to.equal('probe');
          expect(runtime.list(side)).to.deep.equal(['probe']);
          runtime.unpublish(side, 'probe');
        });

        it('refuses an unknown config key: an invalid (400) error naming the key, and nothing is stored', () => {
          const config = { ...typeOf(side, name).example, [UNKNOWN_KEY]: 1 };
          let error: unknown;
          try {
            runtime.publish(side, artefact(side, name, config));
          } catch (err) {
            error = err;
          }
          expect(error, 'publish must fail').to.be.instanceOf(EddyError);
          expect((error as EddyError).code).to.equal('invalid');
          expect((error as EddyError).message).to.contain(UNKNOWN_KEY);
          expect(runtime.list(side)).to.deep.equal([]);
        });
      });
    }
  }

  describe('over REST', () => {
    let rt: Started;
    before(async () => (rt = await startRuntime()));
    after(() => rt.stop());

    it('answers 400 naming the key for an unknown config key, for every builtin type', async () => {
      const answers: Record<string, [number, string]> = {};
      for (const [side, types] of sides) {
        for (const name of types) {
          const body = artefact(side, name, { ...typeOf(side, name).example, [UNKNOWN_KEY]: true });
          const reply = await call(rt.base, 'POST', `/${side}`, { body });
          answers[`${side} ${name}`] = [reply.status, ((reply.body as { error?: string }).error ?? '').includes(UNKNOWN_KEY) ? 'names the key' : reply.text];
        }
      }
      const expected = Object.fromEntries(Object.keys(answers).map((k) => [k, [400, 'names the key']]));
      expect(answers).to.deep.equal(expected);
    });
  });
});
