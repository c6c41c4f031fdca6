import { expect } from 'chai';
import fc from 'fast-check';
import type { InfluxPoint } from '../../src/codecs/influx/point';
import { BIGINT_BOUNDARIES, codec, INGEST_NS, NUMBER_BOUNDARIES, text } from './support';

const influx = codec('influx');
const binflux = codec('binflux');
const decode = (line: string) => influx.decode(Buffer.from(line, 'utf8'), INGEST_NS);
const encode = (value: unknown) => influx.encode(value).toString('utf8');

const name = text({ minLength: 1, maxLength: 10 }).filter((s) => !/[\n\r]/.test(s));
const fieldValue = fc.oneof(
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(...NUMBER_BOUNDARIES),
  fc.bigInt({ min: -(2n ** 63n), max: 2n ** 64n - 1n }),
  fc.constantFrom(...BIGINT_BOUNDARIES, 2n ** 53n, -(2n ** 53n)),
  text({ maxLength: 12 }),
  fc.boolean(),
);
const point: fc.Arbitrary<InfluxPoint> = fc.record({
  measurement: name.filter((s) => !/^[#\t]/.test(s)),
  tags: fc.dictionary(name, name, { maxKeys: 4 }),
  fields: fc.dictionary(name, fieldValue, { minKeys: 1, maxKeys: 5 }),
  timestamp: fc.oneof(fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }), fc.constantFrom(...BIGINT_BOUNDARIES.filter((k) => k < 2n ** 63n))),
});

describe('influx codec', () => {
  it('decodes a line with every field type and tricky escapes', () => {
    const line = String.raw`cpu\,load\ avg,host=a\ b,path=C:\dir\\,e\=q=x\=y f=1.5,i=-42i,u=18446744073709551615u,s="say \"hi\" \\ C:\dir",t=T,b=false,e=1e-3 1465839830100400200`;
    expect(decode(line)).to.deep.equal({
      measurement: 'cpu,load avg',
      tags: { host: 'a b', path: 'C:\\dir\\', 'e=q': 'x=y' },
      fields: { f: 1.5, i: -42n, u: 18446744073709551615n, s: 'say "hi" \\ C:\\dir', t: true, b: false, e: 0.001 },
      timestamp: 1465839830100400200n,
    });
  });

  it('encodes escapes so the line reads back, tags sorted', () => {
    const value = { measurement: 'm,1 x', tags: { z: 'last', 'a b': 'c,d=e' }, fields: { 'f"g': 'q"\\', n: 5, i: 5n }, timestamp: 10n };
    expect(encode(value)).to.equal(String.raw`m\,1\ x,a\ b=c\,d\=e,z=last f\"g="q\"\\",n=5,i=5i 10`);
    expect(decode(encode(value))).to.deep.equal(value);
  });

  it('decode(encode(p)) equals p for every point of the model (float number, integer bigint, string, bool)', () => {
    fc.assert(
      fc.property(point, (p) => {
        const back = decode(encode(p)) as InfluxPoint;
        // an unsigned value within the i64 range is written as an integer: the same number either way
        expect(back).to.deep.equal(p);
      }),
      { numRuns: 500 },
    );
  });

  it('gives no event for blank and comment lines, and the ingest time when the line has no timestamp', () => {
    expect(decode('')).to.equal(undefined);
    expect(decode('  \n')).to.equal(undefined);
    expect(decode('# a comment')).to.equal(undefined);
    expect(decode('m v=1\n')).to.deep.equal({ measurement: 'm', tags: {}, fields: { v: 1 }, timestamp: INGEST_NS });
  });

  it('throws on malformed lines', () => {
    for (const line of [
      'm',
      'm v',
      'm v=',
      'm,t v=1',
      'm,=x v=1',
      'm v="open',
      'm v=1 12x',
      'm v=abc',
      'm v=9223372036854775808i',
      'm v=-1u',
      ',t=1 v=1',
      'm v=1,',
    ]) {
      expect(() => decode(line), line).to.throw(/influx/);
    }
  });

  it('refuses a line break inside a name, which the encoder cannot write (found by fuzzing)', () => {
    expect(() => decode('m,t=a\nb v=1')).to.throw(/^influx: line break inside a name at character 5/);
    expect(() => decode('\0 \n=""')).to.throw(/^influx: line break inside a name at character 2/);
  });

  it('refuses what line protocol cannot hold', () => {
    for (const value of [
      { measurement: 'm', tags: {}, fields: {} },
      { measurement: 'm', tags: {}, fields: { v: NaN } },
      { measurement: 'm', tags: {}, fields: { v: { nested: 1 } } },
      { measurement: '#m', tags: {}, fields: { v: 1 } },
      { measurement: 'm\n', tags: {}, fields: { v: 1 } },
      { measurement: 'm', tags: { t: '' }, fields: { v: 1 } },
      { measurement: 'm', tags: {}, fields: { v: 2n ** 64n } },
      'not a point',
    ]) {
      expect(
        () => influx.encode(value),
        JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}` : v)),
      ).to.throw(/influx/);
    }
  });
});

describe('binflux codec', () => {
  it('decode(encode(p)) equals p for points with i64 integers and a u64 timestamp', () => {
    const binPoint = point.map((p) => ({
      ...p,
      timestamp: BigInt.asUintN(64, p.timestamp ?? 0n),
      fields: Object.fromEntries(Object.entries(p.fields).map(([k, v]) => [k, typeof v === 'bigint' ? BigInt.asIntN(64, v) : v])),
    }));
    fc.assert(
      fc.property(binPoint, (p) => {
        expect(binflux.decode(binflux.encode(p), INGEST_NS)).to.deep.equal(p);
      }),
      { numRuns: 300 },
    );
  });

  it('writes the documented layout', () => {
    const bytes = binflux.encode({ measurement: 'm', tags: { t: 'v' }, fields: { i: 1n, b: true }, timestamp: 2n });
    expect(bytes.toString('hex')).to.equal(
      ['0000', '0001', '6d', '0000000000000002', '0001', '0001', '74', '0001', '76', '0002', '0001', '69', '00', '0000000000000001', '0001', '62', '03'].join(
        '',
      ),
    );
  });

  it('throws on truncated data, unknown versions and field types, and a missing timestamp', () => {
    const good = binflux.encode({ measurement: 'm', tags: {}, fields: { f: 1.5 }, timestamp: 1n });
    expect(() => binflux.decode(good.subarray(0, good.length - 1), INGEST_NS)).to.throw(/truncated/);
    expect(() => binflux.decode(Buffer.concat([Buffer.of(0, 1), good.subarray(2)]), INGEST_NS)).to.throw(/version/);
    const badType = Buffer.from(good);
    badType[good.length - 9] = 9;
    expect(() => binflux.decode(badType, INGEST_NS)).to.throw(/field type/);
    expect(() => binflux.encode({ measurement: 'm', tags: {}, fields: { f: 1 } })).to.throw(/timestamp/);
  });
});
