import { expect } from 'chai';
import { onrampCatalog } from '../../src/connectors/catalog';
import { loadAll } from '../../src/core/registry';
import type { JsonSchema } from '../../src/schema/json-schema';
import { DEFAULT_LISTEN_HOST, listenHost, listenPort } from '../../src/schema/fields';
import { s } from '../../src/schema/typed';
import type { Input, Static } from '../../src/schema/typed';

/** `true` only when A and B are the same type (a compile-time check: a wrong derivation fails `tsc`). */
// eslint-disable-next-line @typescript-eslint/no-unnecessary-type-parameters -- the exact type-equality test: each T is the probe that makes the comparison exact
type Same<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
function sameType<A, B>(proof: Same<A, B>): void {
  expect(proof).to.equal(true);
}

describe('typed schema builders (src/schema/typed.ts)', () => {
  const config = s.object(
    {
      host: listenHost(),
      port: listenPort(),
      mode: s.literals(['a', 'b'], { default: 'a', description: 'the mode' }),
      tags: s.array(s.string({ minLength: 1 })),
      within: s.anyOf([s.number({ exclusiveMinimum: 0 }), s.string({ pattern: '^x$' })]),
      limits: s.record(s.integer({ minimum: 0 })),
    },
    { required: ['port'], description: 'a config' },
  );

  it('emits the plain JSON schema, with nothing but what the options say', () => {
    // the exact object ajv compiles and the build precompiles: a builder adding or renaming a keyword fails here
    expect(JSON.parse(JSON.stringify(config))).to.deep.equal({
      type: 'object',
      additionalProperties: false,
      description: 'a config',
      required: ['port'],
      properties: {
        host: {
          type: 'string',
          minLength: 1,
          default: '127.0.0.1',
          description: 'address to listen on; the default accepts only local clients, 0.0.0.0 (or ::) every interface',
        },
        port: { type: 'integer', minimum: 0, maximum: 65535, description: 'port to listen on; 0 picks a free one' },
        mode: { enum: ['a', 'b'], default: 'a', description: 'the mode' },
        tags: { type: 'array', items: { type: 'string', minLength: 1 } },
        within: {
          anyOf: [
            { type: 'number', exclusiveMinimum: 0 },
            { type: 'string', pattern: '^x$' },
          ],
        },
        limits: { type: 'object', additionalProperties: { type: 'integer', minimum: 0 } },
      },
    });
  });

  it('leaves out an empty required list', () => {
    expect(s.object({ a: s.boolean() })).to.deep.equal({ type: 'object', additionalProperties: false, properties: { a: { type: 'boolean' } } });
  });

  it('derives the validated type: required and defaulted keys present, the rest optional', () => {
    sameType<
      Static<typeof config>,
      {
        host: string;
        port: number;
        mode: 'a' | 'b';
        tags?: string[];
        within?: number | string;
        limits?: Record<string, number>;
      }
    >(true);
  });

  it('derives the written type: only required keys present', () => {
    sameType<
      Input<typeof config>,
      {
        host?: string;
        port: number;
        mode?: 'a' | 'b';
        tags?: string[];
        within?: number | string;
        limits?: Record<string, number>;
      }
    >(true);
  });

  it('types nested objects and arrays of objects by the same rules', () => {
    // eslint-disable-next-line @typescript-eslint/no-unused-vars -- the schema is here for its type
    const nested = s.object({ items: s.array(s.object({ n: s.integer({ default: 1 }), m: s.string() }, { required: ['m'] })) }, { required: ['items'] });
    sameType<Static<typeof nested>, { items: { n: number; m: string }[] }>(true);
    sameType<Input<typeof nested>, { items: { n?: number; m: string }[] }>(true);
  });

  it('refuses a required key the object does not have (at compile time)', () => {
    // @ts-expect-error 'nope' is not a property
    const wrong = s.object({ a: s.string() }, { required: ['nope'] });
    expect(wrong.required).to.deep.equal(['nope']);
  });
});

describe('listening hosts', () => {
  it(`every builtin onramp whose host has a default listens on ${DEFAULT_LISTEN_HOST} unless told otherwise`, () => {
    const hosts = loadAll(onrampCatalog).flatMap((type): [string, unknown][] => {
      const host = (type.configSchema.properties as Record<string, JsonSchema> | undefined)?.host;
      return host?.default === undefined ? [] : [[type.name, host.default]];
    });
    // the listening types (tcp, udp, rest, ws, otel); a connecting onramp's host (postgres) has no default
    expect(hosts.map(([name]) => name)).to.include.members(['tcp', 'udp', 'rest', 'ws', 'otel']);
    for (const [name, fallback] of hosts) expect(fallback, name).to.equal('127.0.0.1');
  });
});
