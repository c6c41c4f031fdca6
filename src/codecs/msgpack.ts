import { C1, Packr, type Options } from 'msgpackr';
import type { CodecType } from './codec';

/**
 * MessagePack (standard maps, no msgpackr record extension, so any other
 * MessagePack library can read what eddy writes).
 *
 * Value model: as json's. 64-bit integers decode to a number when within
 * ±2^53 and to a BigInt beyond (`int64AsType: 'auto'`); a BigInt encodes as
 * int64/uint64, so nanosecond timestamps round-trip exactly. A BigInt beyond
 * 64 bits is an encode error rather than a silent rounding. Binary (bin 8/16/32)
 * decodes to a Buffer. Maps decode to plain objects with string keys.
 */
export const msgpack: CodecType = {
  name: 'msgpack',
  mimeTypes: ['application/msgpack', 'application/x-msgpack', 'application/vnd.msgpack'],
  create: () => {
    // one Packr per codec instance: it keeps an internal output buffer
    const packr = new Packr(<Options & { skipValues: unknown[] }>{
      useRecords: false,
      mapsAsObjects: true,
      // 'auto' and skipValues are documented and implemented, but missing from msgpackr's type declarations
      int64AsType: 'auto' as Options['int64AsType'],
      // JSON.stringify's rule: an undefined property is left out, not written as nil
      skipValues: [undefined],
      // and in an array it is nil, as JSON.stringify writes null (not msgpackr's undefined extension)
      encodeUndefinedAsNil: true,
      moreTypes: false,
    });
    return {
      name: 'msgpack',
      decode(data) {
        if (data.length === 0) throw new Error('msgpack: empty input');
        // unpack, not unpackMultiple: trailing bytes after one value are an error
        const value: unknown = packr.unpack(data);
        // msgpackr decodes the never-used byte 0xc1 to a marker object instead of failing;
        // only a frame holding that byte can hold the marker, so the walk is rare
        if (data.includes(NEVER_USED) && containsMarker(value)) throw new Error('msgpack: invalid byte 0xc1');
        return value;
      },
      encode(value) {
        // pack returns a view of its reusable buffer; copy so the frame stays valid
        return Buffer.from(packr.pack(value));
      },
    };
  },
};

const NEVER_USED = 0xc1;

function containsMarker(value: unknown): boolean {
  if (value === C1) return true;
  if (typeof value !== 'object' || value === null || ArrayBuffer.isView(value)) return false;
  for (const item of Object.values(value)) if (containsMarker(item)) return true;
  return false;
}
