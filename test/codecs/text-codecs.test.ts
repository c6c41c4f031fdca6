import { expect } from 'chai';
import fc from 'fast-check';
import { codec, eddyValue, INGEST_NS, sampleLines, text, unsafeBigInt } from './support';

describe('string codec', () => {
  const string = codec('string');

  it('decodes the 1000 Apache access-log lines and encodes them back to the same bytes', () => {
    const lines = sampleLines('apache_access_logs.xz');
    expect(lines).to.have.length(1000);
    for (const line of lines) {
      const value = string.decode(line, INGEST_NS);
      expect(value)
        .to.be.a('string')
        .and.match(/^\S+ \S+ \S+ \[/);
      expect(string.encode(value).equals(line)).to.equal(true);
    }
  });

  it('decode(encode(s)) equals s for any text, and invalid UTF-8 is an error', () => {
    fc.assert(
      fc.property(text(), (s) => {
        expect(string.decode(string.encode(s), INGEST_NS)).to.equal(s);
      }),
    );
    expect(() => string.decode(Buffer.from([0x61, 0xc3]), INGEST_NS)).to.throw('The encoded data was not valid for encoding utf-8');
  });

  it('encodes non-strings as compact JSON, BigInt exactly', () => {
    expect(string.encode({ a: 1, t: 2n ** 63n }).toString()).to.equal('{"a":1,"t":9223372036854775808}');
  });
});

describe('binary codec', () => {
  const binary = codec('binary');
  it('decode(encode(bytes)) equals the bytes; strings go out as UTF-8, other values as JSON', () => {
    fc.assert(
      fc.property(fc.uint8Array(), (bytes) => {
        expect(binary.decode(binary.encode(bytes), INGEST_NS)).to.deep.equal(Buffer.from(bytes));
      }),
    );
    expect(binary.encode('hé').toString('hex')).to.equal('68c3a9');
    expect(binary.encode([1, 2]).toString()).to.equal('[1,2]');
    expect(binary.name).to.equal('binary');
  });
});

describe('null codec', () => {
  const nullCodec = codec('null');
  it('decodes anything to null and encodes anything to no bytes', () => {
    expect(nullCodec.decode(Buffer.from('x'), INGEST_NS)).to.equal(null);
    expect(nullCodec.encode({ a: 1 })).to.have.length(0);
  });
});

describe('yaml codec', () => {
  const yaml = codec('yaml');
  it('decode(encode(x)) equals x over the value model, big integers and binary included', () => {
    fc.assert(
      fc.property(eddyValue(unsafeBigInt(-(2n ** 100n), 2n ** 100n)), (value) => {
        expect(yaml.decode(yaml.encode(value), INGEST_NS)).to.deep.equal(value);
      }),
      { numRuns: 300 },
    );
    expect(yaml.decode(yaml.encode({ b: Buffer.from([0, 255]) }), INGEST_NS)).to.deep.equal({ b: Buffer.from([0, 255]) });
  });

  it('throws on empty input, duplicate keys, several documents and bad syntax', () => {
    const cases: [string, string][] = [
      ['', 'yaml: empty input'],
      ['a: 1\na: 2\n', 'Map keys must be unique'],
      ['a: 1\n---\nb: 2\n', 'Source contains multiple documents'],
      ['a: [', 'Flow sequence in block collection must be sufficiently indented and end with a ]'],
    ];
    for (const [doc, message] of cases) expect(() => yaml.decode(Buffer.from(doc), INGEST_NS), doc).to.throw(message);
  });
});
