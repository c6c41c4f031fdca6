import { expect } from 'chai';
import { closest, didYouMean, editDistance } from '../../src/core/suggest';

describe('did you mean: the nearest candidate by edit distance', () => {
  it('counts insertions, deletions and substitutions', () => {
    expect(editDistance('nodez', 'nodes')).to.equal(1);
    expect(editDistance('node', 'nodes')).to.equal(1);
    expect(editDistance('kitten', 'sitting')).to.equal(3);
    expect(editDistance('', 'abc')).to.equal(3);
    expect(editDistance('same', 'same')).to.equal(0);
  });

  it('stops past a limit', () => {
    expect(editDistance('abcdef', 'uvwxyz', 2)).to.equal(3);
    expect(editDistance('a', 'abcdefgh', 2)).to.equal(3);
  });

  it('suggests a near candidate, case ignored, and none that is another word', () => {
    expect(closest('nodez', ['id', 'interface', 'nodes', 'links'])).to.equal('nodes');
    expect(closest('Links', ['nodes', 'links'])).to.equal('links');
    expect(closest('colour', ['id', 'type', 'codec', 'config'])).to.equal(undefined);
    // one letter of a two-letter word is half of it: no guess
    expect(closest('ab', ['xy'])).to.equal(undefined);
  });

  it('makes no guess between two equally near candidates, nor for a word that is a candidate', () => {
    expect(closest('cat', ['bat', 'hat'])).to.equal(undefined);
    expect(closest('nodes', ['nodes', 'node'])).to.equal(undefined);
  });

  it('a name without its namespace is near the one candidate it ends', () => {
    expect(didYouMean('batch', ['generic::batch', 'generic::counter', 'passthrough'])).to.equal(" (did you mean 'generic::batch'?)");
    expect(didYouMean('batch', ['generic::batch', 'other::batch'])).to.equal('');
  });

  it('says it as a parenthesis, or says nothing', () => {
    expect(didYouMean('onramps', ['onramp', 'offramp', 'pipeline'])).to.equal(" (did you mean 'onramp'?)");
    expect(didYouMean('zzz', ['onramp'])).to.equal('');
  });
});
