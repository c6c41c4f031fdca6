import { expect } from 'chai';
import { expectPipeline, testPipeline } from '../../src/testing';
import { Registries } from '../../src/runtime/registries';
import { uppercaseOperator } from '../../examples/custom-operator';

const WAL = `
id: durable
interface: { inputs: [in], outputs: [out] }
nodes:
  - { id: wal, type: qos::wal, config: { read_count: 10, max_elements: 2 } }
links: { in: [wal], wal: [out] }
`;

const BATCH_10_MIN = {
  id: 'slow',
  interface: { inputs: ['in'], outputs: ['out'] },
  nodes: [{ id: 'b', type: 'generic::batch', config: { count: 100, timeout: 600_000 } }],
  links: { in: ['b'], b: ['out'] },
};

describe('eddy/testing (the library API)', () => {
  it('a ten-minute batch window runs in virtual time', () => {
    const result = testPipeline({
      name: 'ten minutes',
      pipeline: BATCH_10_MIN,
      values: { a: 1, b: 2 },
      events: { x: { batch: [1, 2] } },
      in: { in: 'a b 20m |' },
      out: { out: '600000ms x 600001ms |' },
    });
    expect(result.error).to.equal(undefined);
    expect(result.passed).to.equal(true);
  });

  it('a WAL acks what it stored upstream, triggers the breaker when full, and replays from a failed event', () => {
    const result = testPipeline({
      name: 'wal',
      pipeline: WAL,
      values: { a: 1, b: 2, c: 3 },
      in: { in: 'a-b-----c---|' },
      out: { out: 'a-b-----c-(abc)' },
      contraflow: { marbles: '----------f', values: { f: { kind: 'fail', event: 'a' } } },
      insights: {
        marbles: 'k-(lt)--m',
        values: { k: { kind: 'ack', event: 'a' }, l: { kind: 'ack', event: 'b' }, t: { kind: 'trigger' }, m: { kind: 'ack', event: 'c' } },
      },
    });
    expect(result.error).to.equal(undefined);
    expect(result.ports.map((p) => [p.port, p.firstDifference])).to.deep.equal([
      ['out', -1],
      ['insights', -1],
    ]);
    expect(result.passed).to.equal(true);
  });

  it('a missing insight fails the case at the insights', () => {
    const result = testPipeline({
      name: 'no ack expected',
      pipeline: WAL,
      values: { a: 1 },
      in: { in: 'a|' },
      out: { out: 'a' },
      insights: { marbles: '-', values: {} },
    });
    expect(result.passed).to.equal(false);
    expect(result.ports[1].port).to.equal('insights');
    expect(result.ports[1].actual[0]).to.deep.equal({ frame: 0, kind: 'N', value: { kind: 'ack', event: 'a' } });
  });

  it('compares meta when the expected event states it', () => {
    const pipeline = {
      id: 'tagger',
      interface: { inputs: ['in'], outputs: ['out'] },
      nodes: [{ id: 'tag', type: 'runtime::cel', config: { meta: { host: 'event.host' } } }],
      links: { in: ['tag'], tag: ['out'] },
    };
    const base = { name: 'meta', pipeline, values: { a: { host: 'web1' } }, in: { in: 'a|' } };
    expect(testPipeline({ ...base, events: { x: { data: { host: 'web1' }, meta: { host: 'web1' } } }, out: { out: 'x|' } }).passed).to.equal(true);
    expect(testPipeline({ ...base, events: { x: { data: { host: 'web1' }, meta: { host: 'web2' } } }, out: { out: 'x|' } }).passed).to.equal(false);
  });

  it('runs the application’s own operators given its registries', () => {
    const registries = Registries.withBuiltins();
    registries.operators.register(uppercaseOperator.name, uppercaseOperator);
    const c = {
      name: 'shout',
      pipeline: {
        id: 'loud',
        interface: { inputs: ['in'], outputs: ['out'] },
        nodes: [{ id: 'up', type: 'example::uppercase', config: {} }],
        links: { in: ['up'], up: ['out'] },
      },
      values: { a: 'hi', A: 'HI' },
      in: { in: '-a|' },
      out: { out: '-A|' },
    };
    expect(testPipeline(c).error).to.include("unknown operator 'example::uppercase'");
    expect(() => expectPipeline(c, { registries })).not.to.throw();
  });

  it('expectPipeline throws the drawn report for mocha', () => {
    expect(() =>
      expectPipeline({ name: 'wrong', pipeline: BATCH_10_MIN, values: { a: 1 }, events: { x: { batch: [1] } }, in: { in: 'a|' }, out: { out: 'x|' } }),
    ).to.throw(/✗ wrong\n.*port out:\n.*expected: x\|\n.*actual: {3}-\(x\|\)/);
  });

  it('names an unknown port of the pipeline', () => {
    const result = testPipeline({ name: 'port', pipeline: BATCH_10_MIN, values: { a: 1 }, in: { input: 'a|' }, out: { out: '-' } });
    expect(result.error).to.equal("pipeline 'slow' has no input port 'input' (inputs: in)");
  });
});
