import { expect } from 'chai';
import fc from 'fast-check';
import { hasLongDigitRun, hasLongDigitRunBytes } from '../../src/codecs/json';
import { string as stringCodec } from '../../src/codecs/string';

describe('json: the scan for integer literals beyond 2^53', () => {
  // a run of 16 digits or more, not a fraction, with no fraction or exponent after it: what could be an integer beyond 2^53
  const integerRun = /(?<![0-9.])[0-9]{16,}(?![0-9.eE])/;

  it('agrees with the regex on any text of digits and other characters', () => {
    const text = fc.array(fc.constantFrom('0', '7', '9', 'a', '"', '.', ',', 'e', 'E', '-'), { maxLength: 200 }).map((cs) => cs.join(''));
    fc.assert(
      fc.property(text, (t) => hasLongDigitRun(t) === integerRun.test(t)),
      { numRuns: 2000 },
    );
  });

  it('on the UTF-8 bytes, agrees with the regex on the text, multi-byte characters shifting the probes included', () => {
    const text = fc.array(fc.constantFrom('0', '7', '9', 'a', '"', '.', 'e', '\u00e9', '\u20ac', '\u{1F600}'), { maxLength: 200 }).map((cs) => cs.join(''));
    fc.assert(
      fc.property(text, (t) => hasLongDigitRunBytes(Buffer.from(t, 'utf8')) === integerRun.test(t)),
      { numRuns: 2000 },
    );
    expect(hasLongDigitRunBytes(Buffer.from('\u20ac'.repeat(5) + '1'.repeat(16)))).to.equal(true);
    expect(hasLongDigitRunBytes(Buffer.from('\u20ac'.repeat(5) + '1'.repeat(15)))).to.equal(false);
  });

  it('finds runs at the start, the end and across probe positions, and not 15 digits', () => {
    expect(hasLongDigitRun('1234567890123456')).to.equal(true);
    expect(hasLongDigitRun('x' + '1'.repeat(16))).to.equal(true);
    expect(hasLongDigitRun('{"a":1,"t":1700000000123456789}')).to.equal(true);
    expect(hasLongDigitRun('123456789012345')).to.equal(false);
    expect(hasLongDigitRun('1'.repeat(15) + 'x' + '1'.repeat(15))).to.equal(false);
  });

  it('passes over the digits of computed floats, which are doubles whichever parser reads them', () => {
    expect(hasLongDigitRun('{"v":14.620000000000001}')).to.equal(false);
    expect(hasLongDigitRun('{"v":0.30000000000000004}')).to.equal(false);
    expect(hasLongDigitRun('{"v":12345678901234567.5}')).to.equal(false);
    expect(hasLongDigitRun('{"v":12345678901234567e3}')).to.equal(false);
    expect(hasLongDigitRun('{"v":-12345678901234567}')).to.equal(true);
    expect(hasLongDigitRunBytes(Buffer.from('{"v":14.620000000000001}'))).to.equal(false);
    expect(hasLongDigitRunBytes(Buffer.from('{"v":12345678901234567}'))).to.equal(true);
  });
});

describe('string codec: re-encoding a string it just decoded', () => {
  it('returns bytes equal to a fresh encoding, for the decoded string and for others', () => {
    const onramp = stringCodec.create();
    const offramp = stringCodec.create();
    const frame = Buffer.from('héllo wörld');
    const text = onramp.decode(frame, 0n) as string;
    expect(offramp.encode(text)).to.deep.equal(Buffer.from('héllo wörld'));
    expect(offramp.encode('something else')).to.deep.equal(Buffer.from('something else'));
    onramp.decode(Buffer.from('next'), 0n);
    expect(offramp.encode(text)).to.deep.equal(Buffer.from('héllo wörld'));
  });
});
