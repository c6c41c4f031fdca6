import { expect } from 'chai';
import fc from 'fast-check';
import { json } from '../../src/codecs/json';
import { extractFromFrame, extractTopLevel } from '../../src/codecs/json/top-level';
import { isCanonicalJson, topLevelIndex } from '../../src/codecs/json/canonical';
import { FUZZ_SEED, fuzzRuns } from './fuzz-support';

/**
 * extractTopLevel (codecs/json/top-level.ts) reads a few top-level members
 * of a JSON object without decoding the rest; runtime::cel uses it on
 * undecoded frames. Whatever it returns must be exactly what the json codec
 * decodes for those members: property-tested here on random documents.
 */

const codec = json.create();

/** What the codec gives for `keys`: the members present, as decoded. */
function expected(text: string, keys: string[]): Record<string, unknown> | undefined {
  const value = codec.decode(Buffer.from(text, 'utf8'), 0n);
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const out: Record<string, unknown> = {};
  for (const k of keys)
    if (Object.hasOwn(value, k))
      Object.defineProperty(out, k, { value: (value as Record<string, unknown>)[k], enumerable: true, writable: true, configurable: true });
  return out;
}

/** Keys from a small alphabet (so documents share them), with escapes and non-ASCII. */
const key = fc.constantFrom('a', 'b', 'ab', 'tags', 'é', '😀', 'a"b', 'a\\b', '\n', '__proto__', '', 'application', 'x y');

/** Integers around and beyond ±2^53, written as literals. */
const bigInteger = fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }).map((b) => b.toString());
const edgeInteger = fc.constantFrom(
  '9007199254740992',
  '9007199254740993',
  '-9007199254740993',
  '18446744073709551615',
  '1234567890123456.5',
  '1e400',
  '-0',
  '0.1e-3',
);

/** A JSON value as text: JSON.stringify of fast-check's values, or a literal integer or number of ours. */
const valueText: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)) },
  { weight: 1, arbitrary: bigInteger },
  { weight: 1, arbitrary: edgeInteger },
  { weight: 1, arbitrary: fc.string({ unit: 'binary' }).map((s) => JSON.stringify(s)) },
  { weight: 1, arbitrary: fc.array(fc.string(), { maxLength: 4 }).map((a) => JSON.stringify(a)) },
  { weight: 1, arbitrary: fc.array(bigInteger, { maxLength: 3 }).map((a) => `[${a.join(',')}]`) },
);

/** Whitespace JSON allows between tokens (mostly none, as the codec writes). */
const space = fc.constantFrom('', '', '', ' ', '\n\t ', '\r\n');

/** A key written with escapes JSON.parse reads as the same key (\u0061 for a, \/ for /). */
function writeKey(k: string, escapeAll: boolean): string {
  if (!escapeAll) return JSON.stringify(k);
  return `"${Array.from(k)
    .map((ch) => (ch.length === 1 ? `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}` : JSON.stringify(ch).slice(1, -1)))
    .join('')}"`;
}

/** An object document: members with repeated keys allowed, whitespace, some keys written escaped. */
const document = fc
  .record({
    members: fc.array(fc.record({ key, value: valueText, escaped: fc.boolean(), s1: space, s2: space }), { maxLength: 8 }),
    outer: space,
  })
  .map(({ members, outer }) => `${outer}{${members.map((m) => `${m.s1}${writeKey(m.key, m.escaped)}${m.s2}:${m.s1}${m.value}${m.s2}`).join(',')}}${outer}`);

const wantedKeys = fc.uniqueArray(key, { maxLength: 5 });

describe('codecs: extractTopLevel reads top-level members as the json codec decodes them', () => {
  it('random objects: the wanted members equal the codec decode of the whole document', () => {
    fc.assert(
      fc.property(document, wantedKeys, (text, keys) => {
        const got = extractTopLevel(text, keys);
        // undefined is allowed (the caller decodes everything), but on these documents it must never be needed
        expect(got, text).to.not.equal(undefined);
        expect(got).to.deep.equal(expected(text, keys));
      }),
      { seed: FUZZ_SEED, numRuns: fuzzRuns(3000) },
    );
  });

  it('frames the canonical check just walked: read by its offsets, the same members as the codec decodes', () => {
    /** a compact object as the codec writes it: string keys (no index keys), values of every kind, big integers */
    const member = fc.tuple(
      key,
      fc.oneof(
        fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.stringify(v)),
        bigInteger,
        fc.string().map((x) => JSON.stringify(x)),
      ),
    );
    const frame = fc
      .uniqueArray(member, { selector: ([k]) => k, maxLength: 8 })
      .map((ms) => Buffer.from(`{${ms.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',')}}`, 'utf8'));
    let indexed = 0;
    fc.assert(
      fc.property(frame, wantedKeys, (bytes, keys) => {
        if (!isCanonicalJson(bytes)) return; // e.g. a number JSON.stringify writes differently than its literal
        if (topLevelIndex(bytes) !== undefined) indexed++;
        const text = bytes.toString('utf8');
        expect(extractFromFrame(bytes, keys), text).to.deep.equal(expected(text, keys));
      }),
      { seed: FUZZ_SEED, numRuns: fuzzRuns(3000) },
    );
    expect(indexed).to.be.greaterThan(1000); // the offsets path was the one tested
  });

  it('offsets are used only for the frame walked last; another frame scans', () => {
    const a = Buffer.from('{"x":1,"y":[2]}');
    const b = Buffer.from('{"y":3,"x":"s"}');
    expect(isCanonicalJson(a) && isCanonicalJson(b)).to.equal(true);
    expect(topLevelIndex(a)).to.equal(undefined);
    expect(topLevelIndex(b)).to.not.equal(undefined);
    expect(extractFromFrame(a, ['x', 'y'])).to.deep.equal({ x: 1, y: [2] });
    expect(extractFromFrame(b, ['x', 'y'])).to.deep.equal({ y: 3, x: 's' });
    expect(isCanonicalJson(Buffer.from('{"é":1}'))).to.equal(true);
    expect(topLevelIndex(Buffer.from('{"é":1}'))).to.equal(undefined); // not ASCII: byte and text offsets differ
  });

  it('the last of repeated keys wins, as in JSON.parse', () => {
    expect(extractTopLevel('{"a":1,"b":2,"a":{"x":[3]}}', ['a'])).to.deep.equal({ a: { x: [3] } });
  });

  it('integers beyond 2^53 stay exact (BigInt), at the top level and nested', () => {
    const got = extractTopLevel('{"id":9007199254740993,"n":9007199254740992,"neg":-9007199254740993,"list":[18446744073709551615],"f":9007199254740993.0}', [
      'id',
      'n',
      'neg',
      'list',
      'f',
    ]);
    expect(got).to.deep.equal({ id: 9007199254740993n, n: 9007199254740992, neg: -9007199254740993n, list: [18446744073709551615n], f: 9007199254740992 });
  });

  it('escapes, unicode and a key that is __proto__', () => {
    const got = extractTopLevel('{"s":"a\\"b\\\\c\\u00e9😀","\\u0074ags":["x\\n"],"__proto__":1}', ['s', 'tags', '__proto__']);
    expect(got).to.deep.equal(JSON.parse('{"s":"a\\"b\\\\c\\u00e9😀","tags":["x\\n"],"__proto__":1}'));
    expect(Object.hasOwn(got!, '__proto__')).to.equal(true);
  });

  it('absent keys are absent; a document that is not an object gives undefined', () => {
    expect(extractTopLevel('{"a":1}', ['b'])).to.deep.equal({});
    for (const text of ['[1]', '"s"', '1', 'null', '{"a":1', '{"a":1}x', '{"a" 1}', '{a:1}']) expect(extractTopLevel(text, ['a']), text).to.equal(undefined);
  });
});
