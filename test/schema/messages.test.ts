import { expect } from 'chai';
import { artefactSchemas, SchemaValidator } from '../../src/schema/artefacts';
import { duration } from '../../src/schema/duration';
import type { JsonSchema } from '../../src/schema/json-schema';
import { s } from '../../src/schema/typed';

/** The message `value` is refused with, or undefined when it is accepted. */
function refusal(schema: JsonSchema, value: unknown, where = ''): string | undefined {
  try {
    new SchemaValidator().check(schema, value, where);
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}

const RULE = "an id starts with a lowercase letter and holds only letters, '_' and ':'";
const DURATION = 'a duration is a positive number of milliseconds, or a number with a unit: 500ms, 10s, 1m, 2h, 1d, or combined: 1h30m';

describe('schema error messages (issue 33)', () => {
  const artefacts = artefactSchemas({ codecs: ['json'], preprocessors: ['lines'], postprocessors: ['lines'] });
  const onramp = (id: unknown) => ({ id, type: 'metronome' });
  const pipeline = (fields: Record<string, unknown>) => ({ id: 'p', interface: {}, nodes: [], links: {}, ...fields });

  describe('ids: the spec rule in words, and at most 256 characters', () => {
    it('names the character that breaks the rule, and the rule', () => {
      expect(refusal(artefacts.onramp, onramp('my-flow'))).to.equal(`id: 'my-flow' has '-' (character 3); ${RULE}`);
      expect(refusal(artefacts.onramp, onramp('t1'))).to.equal(`id: 't1' has '1' (character 2); ${RULE}`);
      expect(refusal(artefacts.onramp, onramp('Main'))).to.equal(`id: 'Main' starts with 'M'; ${RULE}`);
      expect(refusal(artefacts.onramp, onramp(''))).to.equal(`id: is empty; ${RULE}`);
      expect(refusal(artefacts.pipeline, pipeline({ nodes: [{ id: 'node1', type: 'passthrough' }] }))).to.equal(
        `nodes[0].id: 'node1' has '1' (character 5); ${RULE}`,
      );
      expect(refusal(artefacts.pipeline, pipeline({ interface: { inputs: ['in put'] } }))).to.equal(
        `interface.inputs[0]: 'in put' has ' ' (character 3); ${RULE}`,
      );
    });

    it('keeps the spec rule: letters, _ and : (system::stdout, my_flow), no digits', () => {
      for (const id of ['main', 'my_flow', 'system::stdout', 'aB_c:d']) expect(refusal(artefacts.onramp, onramp(id)), id).to.equal(undefined);
    });

    it('refuses an id over 256 characters naming the limit, without echoing it whole', () => {
      expect(refusal(artefacts.onramp, onramp('a'.repeat(256)))).to.equal(undefined);
      expect(refusal(artefacts.onramp, onramp('a'.repeat(257)))).to.equal(`id: '${'a'.repeat(40)}…' is 257 characters long; an id has at most 256`);
      const huge = refusal(artefacts.pipeline, pipeline({ nodes: [{ id: 'n'.repeat(900_000), type: 'passthrough' }] }))!;
      expect(huge).to.equal(`nodes[0].id: '${'n'.repeat(40)}…' is 900000 characters long; an id has at most 256`);
    });

    it('bounds the node/port names of a pipeline link by two ids', () => {
      expect(refusal(artefacts.pipeline, pipeline({ links: { ['x'.repeat(514)]: ['out'] } }))).to.equal(
        `links: invalid key '${'x'.repeat(40)}…': must NOT have more than 513 characters`,
      );
    });
  });

  it('bounds binding link URLs by their parts: a host and three ids', () => {
    const long = `/onramp/${'a'.repeat(1100)}/main`;
    expect(refusal(artefacts.binding, { id: 'b', links: { [long]: ['/pipeline/p/main'] } })).to.equal(
      `links: invalid key '${long.slice(0, 40)}…': must NOT have more than 1039 characters`,
    );
    const longest = `svc://${'h'.repeat(253)}/pipeline/${'a'.repeat(256)}/${'b'.repeat(256)}/${'c'.repeat(256)}`;
    expect(refusal(artefacts.binding, { id: 'b', links: { '/onramp/x/main': [longest] } })).to.equal(undefined);
  });

  describe('durations: what one looks like', () => {
    const schema = s.object({ within: duration('how long') });
    for (const value of ['10 seconds', '10', 'soon', -5, 0, true, [1]]) {
      it(`refuses ${JSON.stringify(value)} saying what a duration is`, () => {
        expect(refusal(schema, { within: value }, 'config')).to.equal(
          `config.within: ${JSON.stringify(value).replace(/"/g, "'")} is not a duration; ${DURATION}`,
        );
      });
    }

    it('accepts the shapes it names', () => {
      for (const value of ['500ms', '10s', '1m', '2h', '1d', '1h30m', 250]) expect(refusal(schema, { within: value }), String(value)).to.equal(undefined);
    });

    it('inside an artefact: an offramp retry backoff', () => {
      const offramp = { id: 'o', type: 'stdout', retry: { attempts: 2, backoff: { initial: 'soon' } } };
      expect(refusal(artefacts.offramp, offramp)).to.equal(`retry.backoff.initial: 'soon' is not a duration; ${DURATION}`);
    });
  });

  describe('a missing required field names the unknown keys beside it', () => {
    it('nodez for nodes: both, and the guess', () => {
      const { nodes: _nodes, ...rest } = pipeline({});
      expect(refusal(artefacts.pipeline, { ...rest, nodez: [] })).to.equal(
        "(top level): missing required field 'nodes' (found unknown field 'nodez' — did you mean 'nodes'?)",
      );
    });

    it('several unknown keys: all named, and which one is likely the missing field', () => {
      const { nodes: _nodes, ...rest } = pipeline({});
      expect(refusal(artefacts.pipeline, { ...rest, colour: 1, node: [] })).to.equal(
        "(top level): missing required field 'nodes' (found unknown fields 'colour', 'node' — did you mean 'nodes' instead of 'node'?)",
      );
    });

    it('an unknown key that is no typo of it is named without a guess', () => {
      expect(refusal(artefacts.onramp, { id: 'x', kind: 'metronome' })).to.equal("(top level): missing required field 'type' (found unknown field 'kind')");
    });

    it('nothing unknown: the missing field alone, as before', () => {
      expect(refusal(artefacts.onramp, { id: 'x' })).to.equal("(top level): missing required field 'type'");
    });

    it('an unknown field with every required one present suggests the nearest declared field', () => {
      expect(refusal(artefacts.pipeline, pipeline({ descripton: 'x' }))).to.equal("(top level): unknown field 'descripton' (did you mean 'description'?)");
      expect(refusal(artefacts.onramp, { id: 'x', type: 'metronome', colour: 'red' })).to.equal("(top level): unknown field 'colour'");
    });
  });

  it('binding link URLs are described, not shown as their regex', () => {
    expect(refusal(artefacts.binding, { id: 'b', links: { '/onramp/x/y': ['nowhere'] } })).to.match(
      /^links\.\/onramp\/x\/y\[0\]: 'nowhere' must be a link URL \/kind\/artefact\/instance\[\/port\], kind one of pipeline, offramp or onramp/,
    );
    expect(refusal(artefacts.binding, { id: 'b', links: { '/queue/x/y': ['/pipeline/p/i'] } })).to.match(
      /^links: invalid key '\/queue\/x\/y': must be a link URL \/kind\/artefact\/instance\[\/port\], kind one of onramp, pipeline or offramp/,
    );
  });
});
