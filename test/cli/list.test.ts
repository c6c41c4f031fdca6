import { expect } from 'chai';
import { main } from '../../src/cli/main';
import { MissingPackageError } from '../../src/core/packages';
import { listTypes } from '../../src/cli/list';
import { Registries } from '../../src/runtime/registries';
import { TYPE_KINDS, typeInfos } from '../../src/runtime/type-info';
import { s } from '../../src/schema/typed';

async function eddy(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await main(argv, { out: (t) => (out += t), err: (t) => (err += t), env: {} });
  return { code, out, err };
}

describe('eddy list', () => {
  const registries = Registries.withBuiltins();

  it('every builtin type of every kind has a one-line description', () => {
    const types = typeInfos(registries);
    expect(types.length).to.be.greaterThan(80);
    const lacking = types.filter((t) => !/^\S.{10,200}$/.test(t.description)).map((t) => `${t.kind} ${t.type}: ${JSON.stringify(t.description)}`);
    expect(lacking, 'a description of one line, 11 to 200 characters').to.deep.equal([]);
  });

  it('lists every kind, each type with its description in a column', async () => {
    const { code, out, err } = await eddy(['list']);
    expect({ code, err }).to.deep.equal({ code: 0, err: '' });
    expect(out.match(/^\w+:$/gm)).to.deep.equal(TYPE_KINDS.map((k) => `${k}s:`));
    expect(out).to.match(/^onramps:\n {2}amqp {6,}Consumes an AMQP/m);
    expect(out).to.match(/^ {2}runtime::cel {2,}Filters, classifies/m);
    for (const t of typeInfos(registries)) expect(out).to.match(new RegExp(`^ {2}${t.type.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} +`, 'm'));
  });

  it('KIND picks kinds, singular or plural, in the order given; --json prints [{kind, type, description}]', async () => {
    const { out } = await eddy(['list', 'codec', 'operators']);
    expect(out.match(/^\w+:$/gm)).to.deep.equal(['codecs:', 'operators:']);
    const json = JSON.parse((await eddy(['list', '--json', 'offramp'])).out) as { kind: string; type: string; description: string }[];
    expect(json.map((t) => t.type)).to.deep.equal(registries.offramps.names());
    expect(json[0]).to.have.all.keys('kind', 'type', 'description');
    expect(json.every((t) => t.kind === 'offramp')).to.equal(true);
    const all = JSON.parse((await eddy(['list', '--json'])).out) as unknown[];
    expect(all).to.have.length(typeInfos(registries).length);
  });

  it('lists a type an application registered, from the registries', () => {
    const own = Registries.withBuiltins();
    own.operators.register('acme::shout', {
      name: 'acme::shout',
      configSchema: s.object({}, { description: 'Upper-cases every string event.' }),
      create: () => (events) => events,
    });
    let out = '';
    listTypes(own, { kinds: ['operator'], json: false }, { out: (t) => (out += t) });
    expect(out).to.match(/^ {2}acme::shout {2,}Upper-cases every string event\.$/m);
  });

  it('lists a type whose optional npm package is not installed, saying which package it needs', () => {
    const own = new Registries();
    own.onramps.registerLazy('acme', () => {
      throw new MissingPackageError('pg', "onramp 'acme'");
    });
    expect(typeInfos(own, ['onramp'])).to.deep.equal([
      { kind: 'onramp', type: 'acme', description: "(not installed: needs the npm package 'pg', see docs/install.md)", schema: undefined },
    ]);
    // another failure to load is not hidden
    own.offramps.registerLazy('broken', () => {
      throw new Error('a bug');
    });
    expect(() => typeInfos(own, ['offramp'])).to.throw('a bug');
  });

  it('an unknown kind is exit 2, naming the nearest', async () => {
    const { code, err } = await eddy(['list', 'onramsp']);
    expect(code).to.equal(2);
    expect(err).to.match(
      /^error: unknown kind 'onramsp' \(did you mean 'onramp'\?\); kinds: onramp, offramp, operator, codec, preprocessor, postprocessor \(or their plurals\)\nusage: eddy list /,
    );
  });
});
