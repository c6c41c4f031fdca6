import { expect } from 'chai';
import fc from 'fast-check';
import { jsonByteLength } from '../../src/codecs/json/byte-length';
import { compactJson } from '../../src/codecs/json/compact';
import { eddyValue, unsafeBigInt } from './support';

const written = (value: unknown) => Buffer.byteLength(compactJson(value), 'utf8');

/** Strings that need escaping or are not ASCII: quotes, controls, lone and paired surrogates, 2- and 3-byte characters. */
const awkwardText = fc
  .array(fc.constantFrom('a', '"', '\\', '\n', '\t', '\b', '\f', '\r', '\u0000', '\u001f', '\u007f', 'é', '€', '\u2028', '😀', '\ud800', '\udfff', '\ud83d'), {
    maxLength: 12,
  })
  .map((chars) => chars.join(''));

/** Everything compactJson is given in eddy, and what JSON.stringify treats specially. */
const anyValue: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    eddyValue(unsafeBigInt(-(2n ** 100n), 2n ** 100n)),
    awkwardText,
    fc.constantFrom(undefined, NaN, Infinity, -Infinity, -0, 2 ** 53 + 2, -(2 ** 70), 1e21, 1.5e-7, 0.1, -2147483648, 2147483647, 2147483648),
    fc.uint8Array({ maxLength: 10 }).map((a) => Buffer.from(a)),
    fc.uint8Array({ maxLength: 10 }),
    fc.date({ noInvalidDate: true }),
    fc.constant(() => 1),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(fc.oneof(fc.string(), awkwardText), tie('value'), { maxKeys: 4 }),
  ),
})).value;

describe('jsonByteLength', () => {
  it("is the UTF-8 length of compactJson's text for any value, without writing it", () => {
    fc.assert(
      fc.property(anyValue, (value) => {
        expect(jsonByteLength(value)).to.equal(written(value));
      }),
      { numRuns: 2000 },
    );
  });

  it('counts the cases by hand: escapes, surrogates, left-out members, binary, BigInt, exponent form', () => {
    const cases: [unknown, string][] = [
      [undefined, 'null'],
      ['a"b\\c\n\u0001', '"a\\"b\\\\c\\n\\u0001"'],
      ['😀\ud800é', '"😀\\ud800é"'],
      [{ a: undefined, b: () => 1, c: 1 }, '{"c":1}'],
      [[undefined, NaN, -0], '[null,null,0]'],
      [{ big: 2n ** 64n, bin: Buffer.from('hi!!'), far: 2 ** 60 }, '{"big":18446744073709551616,"bin":"aGkhIQ==","far":1.152921504606847e+18}'],
      [{ at: new Date(0) }, '{"at":"1970-01-01T00:00:00.000Z"}'],
    ];
    for (const [value, text] of cases) {
      expect(compactJson(value), 'the writer itself').to.equal(text);
      expect(jsonByteLength(value), text).to.equal(Buffer.byteLength(text));
    }
  });
});
