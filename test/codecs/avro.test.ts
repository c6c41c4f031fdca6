import { expect } from 'chai';
import fc from 'fast-check';
import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { avro } from '../../src/codecs/avro';
import { avroOrder, AVRO_SCHEMA_FILE } from './schema-support';
import { INGEST_NS, keyOrder } from './support';

const make = (config: Record<string, unknown>) => avro.create(config);

describe('avro codec', () => {
  const order = make({ schema_file: AVRO_SCHEMA_FILE });

  it('decode(encode(x)) equals x for random records of a schema, every long exact (BigInt beyond ±2^53)', () => {
    fc.assert(
      fc.property(avroOrder(), (record) => {
        const back = order.decode(order.encode(record), INGEST_NS) as Record<string, unknown>;
        expect(back).to.deep.equal(record);
        expect(keyOrder(back)).to.deep.equal(keyOrder(record));
        // records are plain objects, as every other codec's maps are
        expect(Object.getPrototypeOf(back)).to.equal(Object.prototype);
        expect(Object.getPrototypeOf(back.line)).to.equal(Object.prototype);
      }),
      { numRuns: 300 },
    );
  });

  it('writes the Avro binary encoding byte for byte (zigzag varints, length-prefixed strings, union branch index)', () => {
    const c = make({
      schema: {
        type: 'record',
        name: 'R',
        fields: [
          { name: 'n', type: 'long' },
          { name: 's', type: 'string' },
          { name: 'o', type: ['null', 'long'] },
        ],
      },
    });
    expect(c.encode({ n: -1, s: 'hi', o: null }).toString('hex')).to.equal('01046869' + '00');
    expect(c.encode({ n: 1, s: '', o: 2 ** 53 + 2 }).toString('hex')).to.equal('02' + '00' + '02' + '8480808080808020');
    // the ends of the long range, as BigInt
    expect(c.encode({ n: 2n ** 63n - 1n, s: '', o: -(2n ** 63n) }).toString('hex')).to.equal('feffffffffffffffff01' + '00' + '02' + 'ffffffffffffffffff01');
    expect(c.decode(Buffer.from('feffffffffffffffff010002ffffffffffffffffff01', 'hex'), INGEST_NS)).to.deep.equal({
      n: 2n ** 63n - 1n,
      s: '',
      o: -(2n ** 63n),
    });
    // ±2^53 stay numbers, one past is a BigInt
    expect(make({ schema: 'long' }).decode(make({ schema: 'long' }).encode(2 ** 53), INGEST_NS)).to.equal(2 ** 53);
    expect(make({ schema: '"long"' }).decode(make({ schema: 'long' }).encode(2n ** 53n + 1n), INGEST_NS)).to.equal(2n ** 53n + 1n);
  });

  it('maps the logical types as the docs say: decimal an exact string, timestamps integers, uuid a string', () => {
    const c = make({
      schema: {
        type: 'record',
        name: 'L',
        fields: [
          { name: 'price', type: { type: 'bytes', logicalType: 'decimal', precision: 6, scale: 2 } },
          { name: 'fixed_price', type: { type: 'fixed', name: 'F', size: 3, logicalType: 'decimal', precision: 6, scale: 3 } },
          { name: 'ms', type: { type: 'long', logicalType: 'timestamp-millis' } },
          { name: 'us', type: { type: 'long', logicalType: 'timestamp-micros' } },
          { name: 'id', type: { type: 'string', logicalType: 'uuid' } },
          { name: 'day', type: { type: 'int', logicalType: 'date' } },
        ],
      },
    });
    const value = { price: '-12.30', fixed_price: '1.5', ms: 1700000000123, us: 9007199254740993n, id: '0b2f6a52-4c8e-4d8e-9f00-3a1c1e0c7d11', day: 19700 };
    const bytes = c.encode(value);
    // -1230 is 0xfb32 in two's complement; 1500 is 0x0005dc in three bytes
    expect(bytes.subarray(0, 3).toString('hex')).to.equal('04fb32');
    expect(bytes.subarray(3, 6).toString('hex')).to.equal('0005dc');
    expect(c.decode(bytes, INGEST_NS)).to.deep.equal({ ...value, price: '-12.30', fixed_price: '1.500' });
    // numbers and BigInts are taken for decimals too; more fraction digits than the scale are an error, not a rounding
    expect((c.decode(c.encode({ ...value, price: 3.5 }), INGEST_NS) as { price: string }).price).to.equal('3.50');
    expect((c.decode(c.encode({ ...value, price: 42n }), INGEST_NS) as { price: string }).price).to.equal('42.00');
    expect(() => c.encode({ ...value, price: '1.234' })).to.throw('avro: cannot encode: price: decimal: 1.234 has more than 2 fraction digits');
    expect(() => c.encode({ ...value, price: '12345.6' })).to.throw('price: decimal: 12345.6 has more than 6 digits');
    expect(() => c.encode({ ...value, price: 'abc' })).to.throw('price: decimal: "abc" is not a decimal number');
  });

  it('refuses a value that does not fit the schema, naming the field', () => {
    expect(() => order.encode({ id: 1 })).to.throw(/^avro: cannot encode: count: a missing value does not match the schema/);
    const c = make({
      schema: {
        type: 'record',
        name: 'R',
        fields: [
          { name: 'n', type: 'int' },
          { name: 'l', type: 'long' },
        ],
      },
    });
    expect(() => c.encode({ n: 2 ** 31, l: 1 })).to.throw('avro: cannot encode: n: 2147483648 does not match the schema');
    expect(() => c.encode({ n: 1, l: 2n ** 63n })).to.throw('avro: cannot encode: l: 9223372036854775808n does not match the schema');
    expect(() => c.encode({ n: 1, l: 1.5 })).to.throw('l: 1.5 does not match the schema');
  });

  it('throws on truncated, trailing and hostile frames with a message, never hangs on a huge block count', () => {
    const strings = make({ schema: { type: 'array', items: 'string' } });
    expect(() => make({ schema: 'string' }).decode(Buffer.from('0661', 'hex'), INGEST_NS)).to.throw('avro: cannot decode: truncated buffer');
    expect(() => strings.decode(Buffer.from('00ff', 'hex'), INGEST_NS)).to.throw('avro: cannot decode: trailing data');
    // a block announcing 2^31 - 1 strings in a 7-byte frame
    expect(() => strings.decode(Buffer.from('feffffff0f0261', 'hex'), INGEST_NS)).to.throw('array block of 2147483647 items, more than the frame can hold');
    const ints = make({ schema: 'int' });
    expect(() => ints.decode(Buffer.from('8080808010', 'hex'), INGEST_NS)).to.throw('int 2147483648 is beyond 32 bits');
    expect(() => make({ schema: 'long' }).decode(Buffer.from('80808080808080808004', 'hex'), INGEST_NS)).to.throw('long varint beyond 64 bits');
    const map = make({ schema: { type: 'map', values: 'int' } });
    const back = map.decode(map.encode(JSON.parse('{"__proto__": 1, "a": 2}')), INGEST_NS) as Record<string, unknown>;
    expect(Object.getOwnPropertyNames(back)).to.deep.equal(['__proto__', 'a']);
    expect(Object.getPrototypeOf(back)).to.equal(Object.prototype);
  });

  it('takes the schema inline as text or object, or from a .avsc file, and says what is wrong with the config', () => {
    const dir = mkdtempSync(join(tmpdir(), 'eddy-avro-'));
    const file = join(dir, 'n.avsc');
    writeFileSync(file, '{"type": "record", "name": "N", "fields": [{"name": "n", "type": "long"}]}');
    for (const config of [{ schema_file: file }, { schema: '{"type": "record", "name": "N", "fields": [{"name": "n", "type": "long"}]}' }]) {
      expect(make(config).encode({ n: 3 }).toString('hex')).to.equal('06');
    }
    expect(() => make({ schema_file: join(dir, 'missing.avsc') })).to.throw(/^avro: cannot read schema_file '.*missing.avsc': ENOENT/);
    expect(() => make({ schema: 'long', schema_file: file })).to.throw('avro: set schema or schema_file, not both');
    expect(() => make({ schema: { type: 'record', name: 'N', fields: [{ name: 'n', type: 'lung' }] } })).to.throw(
      'avro: the schema of the config is invalid: undefined type name: lung',
    );
    expect(() => make({})).to.throw('avro: needs config: schema, schema_file or registry');
    expect(() => avro.create()).to.throw('avro: needs config');
  });
});
