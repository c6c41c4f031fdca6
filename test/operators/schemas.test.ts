import Ajv from 'ajv';
import { expect } from 'chai';
import { builtinOperators } from '../../src/pipeline/operators';

const ajv = new Ajv({ useDefaults: true, allErrors: true, strict: false });
const check = (name: string, config: unknown) => {
  const type = builtinOperators.find((t) => t.name === name);
  if (type?.configSchema === undefined) throw new Error(`no schema for ${name}`);
  const ok = ajv.validate(type.configSchema, config);
  return ok;
};

describe('builtin operator config schemas', () => {
  it('should register each builtin once, with a schema that compiles', () => {
    const names = builtinOperators.map((t) => t.name);
    expect(new Set(names).size).to.equal(names.length);
    expect(names).to.include.members([
      'generic::batch',
      'generic::counter',
      'debug::history',
      'grouper::bucket',
      'qos::backpressure',
      'qos::percentile',
      'qos::roundrobin',
      'qos::wal',
      'runtime::cel',
    ]);
    for (const t of builtinOperators) expect(() => ajv.compile(t.configSchema ?? {}), t.name).not.to.throw();
  });

  it('should reject unknown keys and missing required ones', () => {
    for (const t of builtinOperators) expect(check(t.name, { no_such_key: 1 }), t.name).to.equal(false);
    expect(check('generic::batch', { timeout: 5 })).to.equal(false);
    expect(check('qos::wal', { read_count: 1 })).to.equal(false);
    expect(check('qos::wal', { read_count: 1, max_bytes: 100 })).to.equal(true);
    expect(check('qos::roundrobin', { outputs: [] })).to.equal(false);
  });

  it('should fill defaults', () => {
    const config: Record<string, unknown> = { timeout: 10 };
    expect(check('qos::backpressure', config)).to.equal(true);
    expect(config).to.deep.equal({ timeout: 10, steps: [50, 100, 250, 500, 1000, 5000, 10000], circuit_breaker: false });
  });
});
