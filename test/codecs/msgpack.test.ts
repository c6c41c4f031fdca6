import { expect } from 'chai';
import fc from 'fast-check';
import { codec, eddyValue, INGEST_NS, keyOrder, sampleLines, unsafeBigInt } from './support';

const msgpack = codec('msgpack');
const json = codec('json');

describe('msgpack codec', () => {
  it('decode(encode(x)) equals x over the value model with 64-bit integers', () => {
    fc.assert(
      fc.property(eddyValue(unsafeBigInt(-(2n ** 63n), 2n ** 64n - 1n)), (value) => {
        const back = msgpack.decode(msgpack.encode(value), INGEST_NS);
        expect(back).to.deep.equal(value);
        expect(keyOrder(back)).to.deep.equal(keyOrder(value));
      }),
      { numRuns: 500 },
    );
  });

  it('writes standard MessagePack that other readers understand (known bytes)', () => {
    expect(msgpack.encode({ a: 1, b: [true, null] }).toString('hex')).to.equal('82a16101a16292c3c0');
    expect(msgpack.encode(1700000000123456789n).toString('hex')).to.equal('d317979cfe3d85cd15');
    expect(msgpack.decode(Buffer.from('cf17979cfe3d85cd15', 'hex'), INGEST_NS)).to.equal(1700000000123456789n);
    expect(msgpack.decode(Buffer.from('c40268 69'.replace(' ', ''), 'hex'), INGEST_NS)).to.deep.equal(Buffer.from('hi'));
  });

  it('throws on empty, truncated, trailing and never-used bytes, and on BigInts beyond 64 bits', () => {
    const cases: [string, string | RegExp][] = [
      ['', 'msgpack: empty input'],
      ['92 01', 'Unexpected end of MessagePack data'],
      ['01 02', /^Data read, but end of buffer not reached/],
      ['c1', 'msgpack: invalid byte 0xc1'],
      ['92 c1 01', 'msgpack: invalid byte 0xc1'],
    ];
    for (const [hex, message] of cases) {
      expect(() => msgpack.decode(Buffer.from(hex.replace(/ /g, ''), 'hex'), INGEST_NS), hex).to.throw(message);
    }
    expect(() => msgpack.encode(2n ** 64n)).to.throw('18446744073709551616 was too large to fit in MessagePack 64-bit integer format');
  });

  it('carries the 100 sample events to the same values as json does', () => {
    for (const line of sampleLines('data.json.xz')) {
      const value = json.decode(line, INGEST_NS);
      const back = msgpack.decode(msgpack.encode(value), INGEST_NS);
      expect(back).to.deep.equal(value);
      expect(json.encode(back).equals(json.encode(value))).to.equal(true);
    }
  });
});
