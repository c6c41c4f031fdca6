import { expect } from 'chai';
import { codec, INGEST_NS } from './support';

/**
 * The integer boundaries through every codec that carries integers (issue
 * 11, "Tests that must exist"): ±2^53 (the last integers a number holds
 * exactly, still numbers), ±(2^53 + 1) (the first that need a BigInt),
 * 2^64 - 1 and -2^63 (the ends of the 64-bit types). Each codec's doc
 * comment says what it promises; these tests hold it to that.
 */

const BOUNDARIES = [2n ** 53n, -(2n ** 53n), 2n ** 53n + 1n, -(2n ** 53n + 1n), 2n ** 64n - 1n, -(2n ** 63n)];
const SAFE_LIMIT = 2n ** 53n;
const I64_MIN = -(2n ** 63n);
const I64_MAX = 2n ** 63n - 1n;

/** eddy's value model: a number up to ±2^53, a BigInt beyond. */
const model = (k: bigint): number | bigint => (k >= -SAFE_LIMIT && k <= SAFE_LIMIT ? Number(k) : k);
const kind = (k: bigint) => (typeof model(k) === 'number' ? 'a number' : 'a BigInt');

/** Doubles whose values are integers beyond 2^53: they stay doubles through every codec that has them. */
const BIG_DOUBLES = [2 ** 60, -(2 ** 60), 2 ** 64, 2 ** 53 + 2, 1e300];

const utf8 = (s: string) => Buffer.from(s, 'utf8');

describe('integer boundaries through the codecs', () => {
  for (const name of ['json', 'yaml'] as const) {
    describe(name, () => {
      const c = codec(name);
      const text = (v: unknown) => c.encode(v).toString('utf8').trim();

      for (const k of BOUNDARIES) {
        it(`${k} decodes to ${kind(k)}, alone and nested, and encodes back to the same digits`, () => {
          expect(c.decode(utf8(String(k)), INGEST_NS)).to.equal(model(k));
          const nested = name === 'json' ? `{"v":[${k}]}` : `v:\n  - ${k}\n`;
          expect(c.decode(utf8(nested), INGEST_NS)).to.deep.equal({ v: [model(k)] });
          expect(text(model(k))).to.equal(String(k));
          expect(c.decode(c.encode({ v: [model(k)] }), INGEST_NS)).to.deep.equal({ v: [model(k)] });
        });
      }

      it('keeps BigInts of any size exact (2^100)', () => {
        expect(c.decode(utf8(String(2n ** 100n)), INGEST_NS)).to.equal(2n ** 100n);
        expect(text(-(2n ** 100n))).to.equal(String(-(2n ** 100n)));
      });

      it('a double holding an integer beyond 2^53 encodes in exponent form and decodes to the same double', () => {
        for (const d of BIG_DOUBLES) {
          expect(text(d), String(d)).to.match(/e\+/);
          expect(c.decode(c.encode(d), INGEST_NS), String(d)).to.equal(d);
        }
      });
    });
  }

  describe('msgpack', () => {
    const c = codec('msgpack');
    /** The wire form of an integer as MessagePack's 64-bit types: uint 64 (0xcf) when non-negative, int 64 (0xd3) otherwise. */
    const wire = (k: bigint) => {
      const bytes = Buffer.alloc(9);
      bytes[0] = k >= 0n ? 0xcf : 0xd3;
      if (k >= 0n) bytes.writeBigUInt64BE(k, 1);
      else bytes.writeBigInt64BE(k, 1);
      return bytes;
    };

    for (const k of BOUNDARIES) {
      it(`${k} as a 64-bit integer decodes to ${kind(k)}, and encodes to bytes that decode to it again`, () => {
        expect(c.decode(wire(k), INGEST_NS)).to.equal(model(k));
        expect(c.decode(c.encode({ v: [model(k)] }), INGEST_NS)).to.deep.equal({ v: [model(k)] });
      });
    }

    it('writes 2^64 - 1 and -2^63 as uint 64 and int 64, and refuses a BigInt beyond 64 bits', () => {
      expect(c.encode(2n ** 64n - 1n).toString('hex')).to.equal('cfffffffffffffffff');
      expect(c.encode(-(2n ** 63n)).toString('hex')).to.equal('d38000000000000000');
      expect(() => c.encode(2n ** 64n)).to.throw('18446744073709551616 was too large to fit in MessagePack 64-bit integer format');
      expect(() => c.encode(-(2n ** 63n) - 1n)).to.throw(/-9223372036854775809 was too (large|small) to fit in MessagePack 64-bit integer format/);
    });

    it('a double holding an integer beyond 2^53 travels as a float 64 and decodes to the same double', () => {
      for (const d of BIG_DOUBLES) {
        expect(c.encode(d)[0], String(d)).to.equal(0xcb);
        expect(c.decode(c.encode(d), INGEST_NS), String(d)).to.equal(d);
      }
    });
  });

  describe('statsd', () => {
    const c = codec('statsd');
    for (const k of BOUNDARIES) {
      it(`${k} as a counter decodes to ${kind(k)} and encodes back to the same digits`, () => {
        expect(c.decode(utf8(`m:${k}|c`), INGEST_NS)).to.deep.equal({ metric: 'm', type: 'c', value: model(k) });
        expect(c.encode({ metric: 'm', type: 'c', value: model(k) }).toString()).to.equal(`m:${k}|c`);
      });
    }

    it('as a gauge, a signed boundary is a change by its magnitude, of the same kind', () => {
      expect(c.decode(utf8(`g:-${2n ** 63n}|g`), INGEST_NS)).to.deep.equal({ metric: 'g', action: 'sub', type: 'g', value: 2n ** 63n });
      expect(c.decode(utf8(`g:+${2n ** 53n}|g`), INGEST_NS)).to.deep.equal({ metric: 'g', action: 'add', type: 'g', value: 2 ** 53 });
      expect(c.decode(utf8(`g:${2n ** 64n - 1n}|g`), INGEST_NS)).to.deep.equal({ metric: 'g', type: 'g', value: 2n ** 64n - 1n });
    });

    it('a double holding an integer beyond 2^53 encodes with .0 and decodes to the same double', () => {
      for (const d of BIG_DOUBLES)
        expect(c.decode(c.encode({ metric: 'm', type: 'ms', value: d }), INGEST_NS), String(d)).to.deep.equal({ metric: 'm', type: 'ms', value: d });
    });
  });

  describe('influx (line protocol)', () => {
    const c = codec('influx');
    const decode = (line: string) => c.decode(utf8(line), INGEST_NS) as { fields: Record<string, unknown>; timestamp: bigint };

    for (const k of BOUNDARIES) {
      const inI64 = k >= I64_MIN && k <= I64_MAX;
      it(`${k}: an integer field is a BigInt (${inI64 ? 'i' : 'u'}), exact both ways; as a timestamp ${inI64 ? 'exact' : 'refused'}`, () => {
        if (inI64) {
          expect(decode(`m v=${k}i`).fields.v).to.equal(k);
          expect(decode(`m v=1 ${k}`).timestamp).to.equal(k);
          expect(c.encode({ measurement: 'm', fields: { v: k }, timestamp: k }).toString()).to.equal(`m v=${k}i ${k}`);
        } else {
          expect(decode(`m v=${k}u`).fields.v).to.equal(k);
          expect(() => decode(`m v=${k}i`)).to.throw(`influx: integer ${k} out of range`);
          expect(() => decode(`m v=1 ${k}`)).to.throw('influx: timestamp out of range');
          expect(c.encode({ measurement: 'm', fields: { v: k } }).toString()).to.equal(`m v=${k}u`);
          expect(() => c.encode({ measurement: 'm', fields: { v: 1 }, timestamp: k })).to.throw('influx: timestamp beyond the i64 range');
        }
      });
    }

    it('refuses integers one beyond the 64-bit types', () => {
      expect(() => decode(`m v=${2n ** 64n}u`)).to.throw(`influx: unsigned integer ${2n ** 64n} out of range`);
      expect(() => decode(`m v=${-(2n ** 63n) - 1n}i`)).to.throw(`influx: integer ${-(2n ** 63n) - 1n} out of range`);
      expect(() => c.encode({ measurement: 'm', fields: { v: 2n ** 64n } })).to.throw('influx: integer field "v" is outside the 64-bit range');
    });

    it('a float field beyond 2^53 stays a double (rounded on decode, exact for doubles on encode)', () => {
      expect(decode(`m v=${2n ** 53n + 1n}`).fields.v).to.equal(2 ** 53);
      for (const d of BIG_DOUBLES) expect(decode(c.encode({ measurement: 'm', fields: { v: d } }).toString()).fields.v, String(d)).to.equal(d);
    });
  });

  describe('binflux', () => {
    const c = codec('binflux');
    for (const k of BOUNDARIES) {
      const inI64 = k >= I64_MIN && k <= I64_MAX;
      it(`${k}: as an i64 field ${inI64 ? 'exact' : 'refused'}; as a u64 timestamp ${k >= 0n ? 'exact' : 'refused'}`, () => {
        if (inI64) expect(c.decode(c.encode({ measurement: 'm', fields: { v: k }, timestamp: 1n }), INGEST_NS)).to.deep.include({ fields: { v: k } });
        else expect(() => c.encode({ measurement: 'm', fields: { v: k }, timestamp: 1n })).to.throw('binflux: integer field "v" is outside the i64 range');
        if (k >= 0n) expect(c.decode(c.encode({ measurement: 'm', fields: { v: 1n }, timestamp: k }), INGEST_NS)).to.deep.include({ timestamp: k });
        else expect(() => c.encode({ measurement: 'm', fields: { v: 1n }, timestamp: k })).to.throw('binflux: needs a timestamp (u64 nanoseconds)');
      });
    }
  });
});
