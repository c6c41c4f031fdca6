import { expect } from 'chai';
import { EddyError } from '../../src/core/errors';
import { cel } from '../../src/pipeline/operators/cel';

/** The error `validate` throws for a config, or undefined when it passes. */
function validationError(config: Parameters<NonNullable<typeof cel.validate>>[0]): EddyError | undefined {
  try {
    cel.validate?.(config, 'classify');
    return undefined;
  } catch (err) {
    expect(err).to.be.instanceOf(EddyError);
    return err as EddyError;
  }
}

describe('runtime::cel config validation', () => {
  it('should accept a config whose expressions all compile', () => {
    expect(
      validationError({
        filter: 'event.level == "error"',
        meta: { class: '"errors"' },
        set: { 'a.b': 'event.x + 1' },
        remove: ['secret'],
        route: '"out"',
      }),
    ).to.equal(undefined);
  });

  it('should reject a syntax error naming the node, the field and the position', () => {
    const err = validationError({ filter: 'event.level ==' });
    expect(err?.code).to.equal('invalid');
    expect(err?.message).to.match(/^runtime::cel node classify: filter: 1:\d+: /);
  });

  it('should name a meta, set or route field by its key', () => {
    expect(validationError({ meta: { class: '"a" +' } })?.message).to.match(/node classify: meta\.class: 1:\d+:/);
    expect(validationError({ set: { 'x.y': '(1' } })?.message).to.match(/node classify: set\.x\.y: 1:\d+:/);
    expect(validationError({ route: '"a" "b"' })?.message).to.match(/node classify: route: 1:\d+:/);
  });

  it('should reject a field path with an empty segment', () => {
    expect(validationError({ remove: ['a..b'] })?.message).to.equal('runtime::cel node classify: remove[0]: empty segment in path "a..b"');
    expect(validationError({ set: { 'a.': '1' } })?.message).to.equal('runtime::cel node classify: set.a.: empty segment in path "a."');
  });
});
