import { C1, Packr, type Options } from 'msgpackr';
import type { CodecType } from './codec';
import { setOwn } from './integers';
import { isCanonicalMsgpack } from './msgpack-canonical';

/**
 * MessagePack (standard maps, no msgpackr record extension, so any other
 * MessagePack library can read what eddy writes).
 *
 * Value model: as json's. 64-bit integers decode to a number when within
 * ±2^53 and to a BigInt beyond (`int64AsType: 'auto'`); a BigInt encodes as
 * int64/uint64, so nanosecond timestamps round-trip exactly. A BigInt beyond
 * 64 bits is an encode error rather than a silent rounding.
 *
 * Integers, exactly: every MessagePack integer, -2^63 to 2^64 - 1, decodes
 * exactly: a number from -2^53 to 2^53, a BigInt beyond. A BigInt in that
 * range encodes as int 64 (uint 64 above 2^63 - 1); one outside it is an
 * encode error. A number encodes as an integer when it fits 32 bits and as
 * a float 64 otherwise (exact for every safe integer, 2^53 itself and
 * integral doubles beyond it included), so it decodes to the same number. Binary (bin 8/16/32)
 * decodes to a Buffer. Maps decode to plain objects with string keys.
 */
export const msgpack: CodecType = {
  name: 'msgpack',
  summary: 'One MessagePack value per frame (standard maps); 64-bit integers beyond ±2^53 as BigInt.',
  mimeTypes: ['application/msgpack', 'application/x-msgpack', 'application/vnd.msgpack'],
  create: () => {
    // one Packr per codec instance: it keeps an internal output buffer
    const options = {
      useRecords: false,
      mapsAsObjects: true,
      // 'auto' and skipValues are documented and implemented, but missing from msgpackr's type declarations
      int64AsType: 'auto' as Options['int64AsType'],
      // JSON.stringify's rule: an undefined property is left out, not written as nil
      skipValues: [undefined],
      // and in an array it is nil, as JSON.stringify writes null (not msgpackr's undefined extension)
      encodeUndefinedAsNil: true,
      moreTypes: false,
    } as Options & { skipValues: unknown[] };
    const packr = new Packr(options);
    // msgpackr renames a `__proto__` key to `__proto_` when it builds objects; frames holding
    // that key are decoded to Maps instead and turned into objects that keep it as an own key
    const mapUnpackr = new Packr({ ...options, mapsAsObjects: false });
    return {
      name: 'msgpack',
      decode(data) {
        if (data.length === 0) throw new Error('msgpack: empty input');
        // unpack, not unpackMultiple: trailing bytes after one value are an error
        const value: unknown = data.includes(PROTO_KEY) ? mapsToObjects(mapUnpackr.unpack(data)) : packr.unpack(data);
        // msgpackr decodes the never-used byte 0xc1 to a marker object instead of failing;
        // only a frame holding that byte can hold the marker, so the walk is rare
        if (data.includes(NEVER_USED) && containsMarker(value)) throw new Error('msgpack: invalid byte 0xc1');
        return value;
      },
      encode(value) {
        // pack returns a view of its reusable buffer; copy so the frame stays valid
        return Buffer.from(packr.pack(value));
      },
      roundTrips: isCanonicalMsgpack,
    };
  },
};

const NEVER_USED = 0xc1;
/** `__proto__` as a MessagePack fixstr */
const PROTO_KEY = Buffer.concat([Buffer.from([0xa0 | 9]), Buffer.from('__proto__')]);

function mapsToObjects(value: unknown): unknown {
  if (value instanceof Map) {
    const record: Record<string, unknown> = {};
    for (const [k, v] of value) setOwn(record, String(k), mapsToObjects(v));
    return record;
  }
  if (Array.isArray(value)) return value.map(mapsToObjects);
  return value;
}

function containsMarker(value: unknown): boolean {
  if (value === C1) return true;
  if (typeof value !== 'object' || value === null || ArrayBuffer.isView(value)) return false;
  for (const item of Object.values(value)) if (containsMarker(item)) return true;
  return false;
}
