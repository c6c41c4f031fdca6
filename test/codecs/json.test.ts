import { expect } from 'chai';
import fc from 'fast-check';
import { parsePrecise } from '../../src/codecs/json/precise-parse';
import { codec, eddyValue, INGEST_NS, keyOrder, sampleLines, unsafeBigInt } from './support';

const json = codec('json');
const decode = (text: string | Buffer) => json.decode(Buffer.isBuffer(text) ? text : Buffer.from(text, 'utf8'), INGEST_NS);
const encode = (value: unknown) => json.encode(value).toString('utf8');

describe('json codec', () => {
  it('decode(encode(x)) equals x, key order included, over the value model with integers of any size', () => {
    fc.assert(
      fc.property(eddyValue(unsafeBigInt(-(2n ** 200n), 2n ** 200n)), (value) => {
        const back = decode(json.encode(value));
        expect(back).to.deep.equal(value);
        expect(keyOrder(back)).to.deep.equal(keyOrder(value));
      }),
      { numRuns: 500 },
    );
  });

  it('keeps nanosecond timestamps and 64-bit ids beyond 2^53 exact through decode and encode', () => {
    const text = '{"ts":1700000000123456789,"id":-9223372036854775808,"u":18446744073709551615,"small":9007199254740991}';
    const value = decode(text) as Record<string, unknown>;
    expect(value.ts).to.equal(1700000000123456789n);
    expect(value.id).to.equal(-9223372036854775808n);
    expect(value.small).to.equal(9007199254740991); // still a number: it is safe
    expect(encode(value)).to.equal(text);
  });

  it('takes the precise path for a 16-digit run inside a string or fraction and still gives JSON.parse values', () => {
    const text = '{"s":"12345678901234567890","f":0.12345678901234567,"big":9007199254740993}';
    // f: the double nearest 0.12345678901234567, as JSON.parse reads it
    expect(decode(text)).to.deep.equal({ s: '12345678901234567890', f: 0.12345678901234566, big: 9007199254740993n });
  });

  it('the precise parser agrees with JSON.parse on every JSON document, up to the precision of big integers', () => {
    fc.assert(
      fc.property(fc.json(), (text) => {
        expect(roundBigInts(parsePrecise(text))).to.deep.equal(JSON.parse(text));
      }),
      { numRuns: 1000 },
    );
  });

  it('the precise parser rejects exactly what JSON.parse rejects', () => {
    const nearlyJson = fc.oneof(
      fc.string(),
      fc.json().chain((t) => fc.nat(t.length).map((cut) => t.slice(0, cut) + t.slice(cut + 1))),
    );
    fc.assert(
      fc.property(nearlyJson, (text) => {
        let native: unknown;
        try {
          native = { ok: JSON.parse(text) };
        } catch {
          native = 'error';
        }
        let precise: unknown;
        try {
          precise = { ok: roundBigInts(parsePrecise(text)) };
        } catch {
          precise = 'error';
        }
        expect(precise).to.deep.equal(native);
      }),
      { numRuns: 1000 },
    );
  });

  it('makes "__proto__" an own key, as JSON.parse does, on both paths', () => {
    const value = decode('{"__proto__":{"x":1},"n":12345678901234567890}') as Record<string, unknown>;
    expect(Object.getPrototypeOf(value)).to.equal(Object.prototype);
    expect(Object.keys(value)).to.deep.equal(['__proto__', 'n']);
  });

  it('keeps key order, except that index-like keys come first (a JavaScript object rule)', () => {
    expect(Object.keys(decode('{"z":1,"a":2,"m":{"y":1,"b":2}}') as object)).to.deep.equal(['z', 'a', 'm']);
    expect(encode(decode('{"z":1,"a":2,"m":{"y":1,"b":2}}'))).to.equal('{"z":1,"a":2,"m":{"y":1,"b":2}}');
    expect(Object.keys(decode('{"b":1,"2":1,"1":1}') as object)).to.deep.equal(['1', '2', 'b']);
  });

  it('throws on empty input, invalid JSON, trailing garbage and invalid UTF-8', () => {
    expect(() => decode('')).to.throw(/Eof at character 0/);
    expect(() => decode('{"a":')).to.throw(SyntaxError);
    expect(() => decode('{"a":12345678901234567890')).to.throw(/json: expected ',' or '}' at character 25/);
    expect(() => decode('[1] x')).to.throw(SyntaxError);
    expect(() => decode('[12345678901234567890] x')).to.throw(/trailing/);
    expect(() => decode(Buffer.from([0x22, 0xff, 0x22]))).to.throw(/UTF-8/);
  });

  it('encodes compactly: binary as base64, undefined properties left out, non-finite numbers as null', () => {
    expect(encode({ b: Buffer.from('hello'), u: undefined, n: NaN, a: [undefined, 1n] })).to.equal('{"b":"aGVsbG8=","n":null,"a":[null,1]}');
    expect(encode(undefined)).to.equal('null');
    expect(encode({ d: new Date(0) })).to.equal('{"d":"1970-01-01T00:00:00.000Z"}');
  });

  it('decodes the 100 sample events as JSON.parse does and encodes them back to the same bytes', () => {
    const lines = sampleLines('data.json.xz');
    expect(lines).to.have.length(100);
    for (const line of lines) {
      const value = decode(line);
      expect(value).to.deep.equal(JSON.parse(line.toString('utf8')));
      expect(encode(value)).to.equal(JSON.stringify(JSON.parse(line.toString('utf8'))));
    }
  });
});

/** What JSON.parse would have made of the precise parser's BigInts. */
function roundBigInts(value: unknown): unknown {
  if (typeof value === 'bigint') return Number(value);
  if (Array.isArray(value)) return value.map(roundBigInts);
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, roundBigInts(v)]));
  }
  return value;
}
