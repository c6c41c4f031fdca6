import { expect } from 'chai';
import fc from 'fast-check';
import { protobufCodec } from '../../src/codecs/protobuf';
import { protoOrder, PROTO_SCHEMA_FILE } from './schema-support';
import { INGEST_NS } from './support';

const make = (config: Record<string, unknown>) => protobufCodec.create(config);

describe('protobuf codec', () => {
  const order = make({ schema_file: PROTO_SCHEMA_FILE, message: 'shop.Order' });

  it('decode(encode(x)) equals x for random messages of a schema, every 64-bit integer exact (BigInt beyond ±2^53)', () => {
    fc.assert(
      fc.property(protoOrder(), (message) => {
        expect(order.decode(order.encode(message), INGEST_NS)).to.deep.equal(message);
      }),
      { numRuns: 300 },
    );
  });

  it('writes the protobuf wire format byte for byte, and reads every field proto3 has (defaults included) back', () => {
    const c = make({ schema: 'syntax = "proto3"; message M { int64 a = 1; string s = 2; sint64 z = 3; uint64 u = 4; }' });
    expect(c.encode({ a: 150, s: 'hi' }).toString('hex')).to.equal('08960112026869');
    expect(c.encode({ z: -1, u: 2n ** 64n - 1n }).toString('hex')).to.equal('1801' + '20ffffffffffffffffff01');
    expect(c.decode(Buffer.from('08960112026869', 'hex'), INGEST_NS)).to.deep.equal({ a: 150, s: 'hi', z: 0, u: 0 });
    expect(c.decode(Buffer.from('08ffffffffffffffff7f', 'hex'), INGEST_NS)).to.deep.include({ a: 2n ** 63n - 1n });
  });

  it('maps enums by name (a number the schema does not name stays a number), bytes to binary, absent optional fields to absent', () => {
    const back = order.decode(order.encode({ status: 'SHIPPED', raw: 'aGk=' }), INGEST_NS) as Record<string, unknown>;
    expect(back.status).to.equal('SHIPPED');
    expect(back.raw).to.deep.equal(Buffer.from('hi'));
    expect(back).to.not.have.property('note');
    expect(back).to.not.have.property('line');
    expect((order.decode(order.encode({ status: 7 }), INGEST_NS) as Record<string, unknown>).status).to.equal(7);
  });

  it('refuses a value that does not fit the message, naming the field', () => {
    expect(() => order.encode({ id: 'x' })).to.throw('protobuf: cannot encode as shop.Order: id: expected an integer, got "x"');
    expect(() => order.encode({ nope: 1 })).to.throw('nope: no such field in message shop.Order');
    expect(() => order.encode({ status: 'LOST' })).to.throw('status: "LOST" is not a value of enum shop.Status (NEW, PAID, SHIPPED)');
    expect(() => order.encode({ line: { qty: 1.5 } })).to.throw('line.qty: expected an integer, got 1.5');
    expect(() => order.encode({ total: -1 })).to.throw('total: -1 is out of range for an unsigned 64-bit integer');
    expect(() => order.encode({ count: 2 ** 31 })).to.throw('count: expected a int32 integer, got 2147483648');
    expect(() => order.encode({ tags: 'a' })).to.throw('tags: expected an array, got "a"');
    expect(() => order.encode([1])).to.throw('(top level): expected an object for message shop.Order');
  });

  it('throws on a truncated frame, and says what is wrong with the schema or the message name', () => {
    expect(() => order.decode(Buffer.from('0aff', 'hex'), INGEST_NS)).to.throw(/^protobuf: cannot decode as shop.Order: index out of range/);
    expect(() => make({ schema: 'syntax = "proto3"; message M { Missing m = 1; }' })).to.throw(
      "protobuf: the schema of the config is invalid: no such Type or Enum 'Missing' in Type .M",
    );
    expect(() => make({ schema: 'syntax = "proto3"; import "other.proto"; message M {}' })).to.throw(
      "it imports 'other.proto'; eddy loads only the google/protobuf well-known types",
    );
    expect(() => make({ schema_file: PROTO_SCHEMA_FILE, message: 'shop.Nope' })).to.throw('protobuf: the schema of the config has no message shop.Nope');
    // the well-known types load
    const c = make({ schema: 'syntax = "proto3"; import "google/protobuf/timestamp.proto"; message E { google.protobuf.Timestamp at = 1; }' });
    expect(c.decode(c.encode({ at: { seconds: 5, nanos: 7 } }), INGEST_NS)).to.deep.equal({ at: { seconds: 5, nanos: 7 } });
    expect(() => protobufCodec.create()).to.throw('protobuf: needs config');
  });

  it('defaults to the first message of the schema', () => {
    const c = make({ schema_file: PROTO_SCHEMA_FILE });
    expect(c.decode(c.encode({ customer: 'x' }), INGEST_NS)).to.deep.include({ customer: 'x', id: 0 });
  });
});
