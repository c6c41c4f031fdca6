import { expect } from 'chai';
import type { Codec } from '../../src/codecs/codec';
import { CONTROL, NON_ASCII, scanBytes } from '../../src/codecs/json/byte-scan';
import { MAX_CANONICAL_DEPTH } from '../../src/codecs/codec';
import { msgpackLines } from '../../bench/data';
import { codec, sampleLines } from '../codecs/support';
import { mulberry32 } from '../helpers/random';

/**
 * `Codec.roundTrips` is a validator: for ANY bytes, `true` promises that
 * decode does not throw, gives a value, and encoding that value gives the
 * frame back byte for byte (the onramp skips decoding on its word). These
 * tests feed it broken frames: every grammar rule by name, and mutants of
 * real and generated frames from a seeded generator (the same frames on
 * every run).
 */

/** A seeded generator: `next(n)` is an integer in [0, n). */
function random(seed: number): (n: number) => number {
  const next = mulberry32(seed);
  return (n) => next() % n;
}

type Pick = (n: number) => number;

const oneOf = <T>(pick: Pick, items: readonly T[]): T => items[pick(items.length)];

/** `frame` changed in 1 to 3 places: bytes replaced, inserted, deleted, repeated, swapped, or the end cut off. */
function mutant(frame: Buffer, pick: Pick, alphabet: readonly number[]): Buffer {
  let bytes = Buffer.from(frame);
  const someByte = () => Buffer.of(pick(4) === 0 ? pick(256) : oneOf(pick, alphabet));
  const insert = (at: number, run: Buffer) => Buffer.concat([bytes.subarray(0, at), run, bytes.subarray(at)]);
  for (let round = 1 + pick(3); round > 0; round--) {
    const at = pick(bytes.length + 1);
    switch (pick(7)) {
      case 0: // replace a byte
        if (at < bytes.length) bytes[at] = someByte()[0];
        break;
      case 1: // insert one
        bytes = insert(at, someByte());
        break;
      case 2: // delete 1 to 4
        bytes = Buffer.concat([bytes.subarray(0, at), bytes.subarray(at + 1 + pick(4))]);
        break;
      case 3: // cut the end off
        bytes = bytes.subarray(0, at);
        break;
      case 4: // repeat a run of 1 to 8 bytes (a token, often) in place
        bytes = insert(at, Buffer.from(bytes.subarray(at, at + 1 + pick(8))));
        break;
      case 5: // copy a run elsewhere
        bytes = insert(pick(bytes.length + 1), Buffer.from(bytes.subarray(at, at + 1 + pick(12))));
        break;
      default: {
        // swap two bytes
        const other = pick(bytes.length + 1);
        if (at < bytes.length && other < bytes.length) [bytes[at], bytes[other]] = [bytes[other], bytes[at]];
      }
    }
  }
  return bytes;
}

const ascii = (text: string) => Array.from(text).map((ch) => ch.charCodeAt(0));
/** Bytes that change JSON's meaning: structure, literals' letters, number signs, whitespace, controls, UTF-8 lead and continuation bytes. */
const JSON_BYTES = [...ascii('{}[],:"\\0123456789-+.eEtrufalsn /bu'), 0x09, 0x0a, 0x0d, 0x00, 0x1f, 0x7f, 0x80, 0xbf, 0xc0, 0xc3, 0xe2, 0xed, 0xf0, 0xf4, 0xff];
/** MessagePack headers of every kind, and bytes that make lengths large or small. */
const MSGPACK_BYTES = [
  0x00, 0x01, 0x7f, 0x80, 0x81, 0x8f, 0x90, 0x91, 0x9f, 0xa0, 0xa1, 0xbf, 0xc0, 0xc1, 0xc2, 0xc3, 0xc4, 0xca, 0xcb, 0xcc, 0xcd, 0xce, 0xcf, 0xd0, 0xd3, 0xd9,
  0xda, 0xdb, 0xdc, 0xdd, 0xde, 0xdf, 0xe0, 0xff,
];

/**
 * The contract for one frame. Returns whether roundTrips said true; fails
 * the test when it did and decode throws, gives undefined, or the encoding
 * differs from the frame.
 */
function holdsContract(c: Codec, frame: Buffer): boolean {
  if (!c.roundTrips!(frame)) return false;
  const shown = `${c.name} frame ${frame.toString('hex')} (${JSON.stringify(frame.toString('latin1'))})`;
  let decoded: unknown;
  try {
    decoded = c.decode(frame, 0n);
  } catch (error) {
    expect.fail(`roundTrips said true of ${shown}, but decode threw: ${(error as Error).message}`);
  }
  expect(decoded, shown).to.not.equal(undefined);
  expect(c.encode(decoded).toString('hex'), shown).to.equal(frame.toString('hex'));
  return true;
}

/** Mutates every frame `perFrame` times; the number of mutants roundTrips said true of (each checked). */
function fuzz(c: Codec, frames: Buffer[], perFrame: number, alphabet: readonly number[], seed: number): number {
  const pick = random(seed);
  let accepted = 0;
  for (const frame of frames) {
    for (let k = 0; k < perFrame; k++) if (holdsContract(c, mutant(frame, pick, alphabet))) accepted++;
  }
  return accepted;
}

/** Characters strings are made of: escapes of each kind, a slash, non-ASCII of 2, 3 and 4 bytes, a BOM, line separators. */
const CHARS = ['a', 'Z', ' ', '0', '"', '\\', '/', '\n', '\t', '\b', '\u0001', '\u001f', '\u007f', 'é', '€', '😀', '\u2028', '\ufeff', 'k'];
const KEYS = ['a', 'b', 'id', 'name', 'é', 'a"b', 'x\n', '', '-1', '1.5', 'k'.repeat(40)];
const NUMBERS = [
  0,
  1,
  -1,
  31,
  -32,
  127,
  128,
  -129,
  255,
  65535,
  70000,
  -70000,
  2 ** 31,
  2 ** 32,
  2 ** 53,
  2 ** 60,
  1.5,
  -0.25,
  1.5e-7,
  1e21,
  123.456,
  5e-324,
  1.7976931348623157e308,
];
const BIG = [2n ** 53n + 1n, -(2n ** 53n) - 1n, 2n ** 63n - 1n, -(2n ** 63n), 2n ** 64n - 1n];

function generatedText(pick: Pick): string {
  let text = '';
  for (let k = pick(pick(4) === 0 ? 60 : 8); k > 0; k--) text += oneOf(pick, CHARS);
  return text;
}

/** A value in the codecs' common model (no -0, no index keys, no `__proto__`: all of them are written in one form only). */
function generatedValue(pick: Pick, depth = 0): unknown {
  const kind = pick(depth >= 4 ? 6 : 8);
  switch (kind) {
    case 0:
      return oneOf(pick, [null, true, false]);
    case 1:
      return oneOf(pick, NUMBERS) * (pick(2) === 0 ? 1 : -1) || 0;
    case 2:
      return oneOf(pick, BIG);
    case 3:
    case 4:
    case 5:
      return generatedText(pick);
    case 6:
      return Array.from({ length: pick(pick(4) === 0 ? 20 : 5) }, () => generatedValue(pick, depth + 1));
    default: {
      const object: Record<string, unknown> = {};
      for (let k = pick(pick(4) === 0 ? 20 : 5); k > 0; k--)
        object[pick(3) === 0 ? generatedText(pick) || 'e' : oneOf(pick, KEYS)] = generatedValue(pick, depth + 1);
      return object;
    }
  }
}

/** The codec's own encodings of 200 generated values (seeded). */
function generatedFrames(c: Codec, seed: number): Buffer[] {
  const pick = random(seed);
  const frames: Buffer[] = [];
  for (let k = 0; k < 200; k++) {
    const value = generatedValue(pick);
    // keys made of digits only are index keys, written first: the check refuses them
    if (/"\d+":/.test(JSON.stringify(value, (_, v: unknown) => (typeof v === 'bigint' ? 0 : v)))) continue;
    frames.push(c.encode(value));
  }
  return frames;
}

/**
 * Two tests for a codec: roundTrips says true of its own encodings (the
 * sample events' and generated values'), so the fast path is really taken;
 * and of no mutant of them unless the contract holds.
 */
function fastPathAndFuzz(c: Codec, sampleFrames: Buffer[], alphabet: readonly number[], seed: number): void {
  it("says true of every sample event and generated value in the codec's own encoding", () => {
    const frames = [...sampleFrames, ...generatedFrames(c, seed)];
    expect(frames.length).to.be.greaterThan(250);
    for (const frame of frames) expect(c.roundTrips!(frame), frame.toString('hex')).to.equal(true);
    for (const frame of frames) holdsContract(c, frame);
  });

  it('fuzz: no mutant of a sample event or a generated frame is accepted unless it round-trips', () => {
    const accepted = fuzz(c, [...sampleFrames, ...generatedFrames(c, seed + 1)], 80, alphabet, seed + 2);
    // mutants still in canonical form (a letter in a string changed, say) show the whole check was reached
    expect(accepted).to.be.greaterThan(500);
  });
}

const hex = (h: string) => Buffer.from(h.replace(/ /g, ''), 'hex');

describe('json/byte-scan: control and non-ASCII bytes found 16 at a time, as a byte-by-byte loop finds them', () => {
  const byteByByte = (bytes: Buffer) => (bytes.some((b) => b < 0x20) ? CONTROL : 0) | (bytes.some((b) => b >= 0x80) ? NON_ASCII : 0);
  const marks = [0x00, 0x09, 0x1f, 0x20, 0x7f, 0x80, 0xc3, 0xff];

  it('one marked byte at every position of frames of 0 to 40 bytes (a marked frame scanned before each clean one)', () => {
    for (let length = 0; length <= 40; length++) {
      for (let at = 0; at < length; at++) {
        for (const mark of marks) {
          const frame = Buffer.alloc(length, 0x61);
          frame[at] = mark;
          expect(scanBytes(frame), frame.toString('hex')).to.equal(byteByByte(frame));
          const clean = Buffer.alloc(at, 0x61); // shorter: the marked byte is still in the scanner's memory
          expect(scanBytes(clean), `${length} then ${at} clean bytes`).to.equal(0);
        }
      }
    }
  });

  it('frames beyond its 64 KiB page, marked at the edges of pages and of 16-byte lanes', () => {
    for (const length of [65535, 65536, 65537, 2 * 65536 + 3]) {
      for (const at of [0, 15, 16, 65535, 65536, length - 1]) {
        if (at >= length) continue;
        for (const mark of [0x0a, 0x80]) {
          const frame = Buffer.alloc(length, 0x61);
          frame[at] = mark;
          expect(scanBytes(frame), `${length} bytes, ${mark} at ${at}`).to.equal(byteByByte(frame));
        }
      }
      expect(scanBytes(Buffer.alloc(length, 0x61))).to.equal(0);
    }
  });

  it('seeded random frames of mixed bytes', () => {
    const pick = random(8);
    for (let k = 0; k < 2000; k++) {
      const frame = Buffer.from(Array.from({ length: pick(70) }, () => (pick(40) === 0 ? oneOf(pick, marks) : 0x20 + pick(0x5f))));
      expect(scanBytes(frame), frame.toString('hex')).to.equal(byteByByte(frame));
    }
  });
});

describe('hot path: Codec.roundTrips validates any bytes (true: decode works and encode gives the frame back)', function () {
  this.timeout(30000);

  describe('json', () => {
    const json = codec('json');
    // JSON.stringify of the parsed sample lines: what the codec writes
    const canonicalLines = sampleLines('data.json.xz').map((line) => Buffer.from(JSON.stringify(JSON.parse(line.toString('utf8'))), 'utf8'));

    fastPathAndFuzz(json, canonicalLines, JSON_BYTES, 1);

    const cases: [string, string | Buffer, boolean][] = [
      ['an object', '{"a":1,"b":[true,false,null],"c":{"d":"x"}}', true],
      ['nested empty containers', '[[],{},[{}]]', true],
      ['a lone string', '"x"', true],
      ['a lone number', '-5', true],
      ['a lone literal', 'null', true],
      ['an integer beyond 2^53 (BigInt)', '[18446744073709551615,-9007199254740993]', true],
      ['a run of 16 digits in a string beside a fraction (the precise parser decodes it)', '{"s":"12345678901234567890","f":0.1,"n":9007199254740992}', true],
      ['non-ASCII text and short escapes', '{"é":"€😀\\n\\u001f"}', true],
      ['the string "__proto__" and a key of that name', '{"__proto__":"__proto__"}', true],
      ['the empty frame', '', false],
      ['true cut short', 'tru', false],
      ['true misspelt', '[trux]', false],
      ['false misspelt', '{"a":falsy}', false],
      ['null misspelt', 'nul1', false],
      ['a literal with a letter after it', 'nulll', false],
      ['a literal in capitals', 'True', false],
      ['a key without its colon', '{"a"1}', false],
      ['a key without its value', '{"a":}', false],
      ['a key without colon or value', '{"a"}', false],
      ['a value where a key belongs', '{1:1}', false],
      ['a bare word as key', '{a:1}', false],
      ['an empty array element', '[1,,2]', false],
      ['a leading comma', '[,1]', false],
      ['a trailing comma in an array', '[1,]', false],
      ['a trailing comma in an object', '{"a":1,}', false],
      ['a colon in an array', '[1:2]', false],
      ['two values side by side', '"a""b"', false],
      ['two containers side by side', '{}[]', false],
      ['two top-level values with a comma', '1,2', false],
      ['two top-level values with a space', '1 2', false],
      ['a number after a container', '[]1', false],
      ['an unclosed object', '{"a":1', false],
      ['an unclosed array', '[1,2', false],
      ['a frame cut after a colon', '{"a":', false],
      ['an unclosed string', '"abc', false],
      ['an unclosed key', '{"ab', false],
      ['an array closed as an object', '[1}', false],
      ['an object closed as an array', '{"a":1]', false],
      ['one close too many', '[1]]', false],
      ['a close without an open', '}', false],
      ['a raw tab in a string', '"a\tb"', false],
      ['a raw newline in a string', '"a\nb"', false],
      ['a raw NUL in a string', '"a\u0000b"', false],
      ['a raw 0x1f in a key', '{"\u001f":1}', false],
      ['an unknown escape', '"\\x"', false],
      ['a \\u escape cut short', '"\\u00"', false],
      ['a backslash at the end', '"\\', false],
      ['a leading zero', '01', false],
      ['a negative leading zero', '-01', false],
      ['a point without digits after', '1.', false],
      ['a minus alone', '-', false],
      ['a minus before a letter', '-a', false],
      ['a fraction without an integer part', '.5', false],
      ['an exponent without digits', '1e', false],
      ['an exponent with a sign only', '1e+', false],
      ['a plus sign', '+1', false],
      ['two points', '1.5.2', false],
      ['hexadecimal', '0x10', false],
      ['NaN', 'NaN', false],
      ['Infinity', '-Infinity', false],
      ['-0', '-0', false],
      ['invalid UTF-8: a lead byte alone', Buffer.from([0x22, 0xc3, 0x22]), false],
      ['invalid UTF-8: an encoded surrogate', Buffer.from([0x22, 0xed, 0xa0, 0x80, 0x22]), false],
      ['invalid UTF-8: an overlong slash', Buffer.from([0x22, 0xc0, 0xaf, 0x22]), false],
      ['invalid UTF-8: 0xff', Buffer.from([0x22, 0xff, 0x22]), false],
      ['non-ASCII outside a string', Buffer.from([0xc3, 0xa9]), false],
      ['a BOM before the value', Buffer.from([0xef, 0xbb, 0xbf, 0x31]), false],
      ['a key twice', '{"a":1,"b":2,"a":3}', false],
      ['the empty key twice', '{"":1,"":2}', false],
      ['an array-index key (objects enumerate those first)', '{"b":1,"7":2}', false],
      ['64 keys', `{${Array.from({ length: 64 }, (_, k) => `"k${k}":${k}`).join(',')}}`, true],
      ['65 keys (more than the duplicate check looks at)', `{${Array.from({ length: 65 }, (_, k) => `"k${k}":${k}`).join(',')}}`, false],
      ['a fraction JS prints differently', '1.0', false],
      ['an exponent JS prints differently', '1E2', false],
      ['an exponent as JS prints it', '[1e+21,1.5e-7]', true],
      ['an escaped slash', '"\\/"', false],
      ['a \\u escape of a printable character', '"\\u00e9"', false],
      ['a \\u escape in upper case', '"\\u001F"', false],
      ['a \\u escape with a short form', '"\\u000a"', false],
      ['whitespace before', ' 1', false],
      ['whitespace after', '1\n', false],
      [`${MAX_CANONICAL_DEPTH} nested arrays`, `${'['.repeat(MAX_CANONICAL_DEPTH)}0${']'.repeat(MAX_CANONICAL_DEPTH)}`, true],
      [
        `${MAX_CANONICAL_DEPTH + 1} nested arrays (deep ones overflow the stack of encode)`,
        `${'['.repeat(MAX_CANONICAL_DEPTH + 1)}0${']'.repeat(MAX_CANONICAL_DEPTH + 1)}`,
        false,
      ],
      ['100,000 nested arrays', `${'['.repeat(100000)}${']'.repeat(100000)}`, false],
    ];
    for (const [name, frame, expected] of cases) {
      it(`${expected ? 'accepts' : 'refuses'} ${name}`, () => {
        const bytes = typeof frame === 'string' ? Buffer.from(frame, 'utf8') : frame;
        expect(json.roundTrips!(bytes)).to.equal(expected);
        if (expected) holdsContract(json, bytes);
      });
    }
  });

  describe('msgpack', () => {
    const msgpack = codec('msgpack');
    const sampleFrames = msgpackLines(sampleLines('data.json.xz'));

    fastPathAndFuzz(msgpack, sampleFrames, MSGPACK_BYTES, 4);

    const cases: [string, string, boolean][] = [
      ['nil', 'c0', true],
      ['a map of one', '81 a161 01', true],
      ['a str 8 of 32 bytes', `d920 ${'61'.repeat(32)}`, true],
      ['the string "__proto__" as a value', '81 a161 a9 5f5f70726f746f5f5f', true],
      ['the empty frame', '', false],
      ['uint 16 cut short', 'cd 01', false],
      ['float 64 cut short', 'cb 3ff0', false],
      ['str 8 without its length', 'd9', false],
      ['str 8 longer than the frame', 'd9 20 6161', false],
      ['fixstr longer than the frame', 'a5 616263', false],
      ['str 16 longer than the frame', 'da 0100 61', false],
      ['str 32 cut in its header', 'db 0000', false],
      ['array 16 cut in its header', 'dc 00', false],
      ['array 32 of more items than bytes', 'dd 00010000 c0', false],
      ['map 16 cut in its header', 'de 00', false],
      ['map 32 without its header', 'df', false],
      ['an array missing an item', '92 c0', false],
      ['a map missing a value', '81 a161', false],
      ['a key that is nil', '81 c0 c0', false],
      ['the empty key twice (with values that differ in their first byte)', '82 a0 cb4340000000000000 a0 01', false],
      ['a key twice', '82 a161 01 a161 02', false],
      ['invalid UTF-8: a lead byte alone', 'a2 c3 28', false],
      ['invalid UTF-8: an encoded surrogate', 'a3 eda080', false],
      ['invalid UTF-8: an overlong slash', 'a2 c0af', false],
      ['the never-used byte', 'c1', false],
      ['the never-used byte in an array', '91 c1', false],
      ['trailing bytes', '01 01', false],
      [`${MAX_CANONICAL_DEPTH} nested arrays`, `${'91'.repeat(MAX_CANONICAL_DEPTH)}c0`, true],
      [`${MAX_CANONICAL_DEPTH + 1} nested arrays`, `${'91'.repeat(MAX_CANONICAL_DEPTH + 1)}c0`, false],
      ['100,000 nested arrays (msgpackr overflows its stack)', `${'91'.repeat(100000)}90`, false],
    ];
    for (const [name, frame, expected] of cases) {
      it(`${expected ? 'accepts' : 'refuses'} ${name}`, () => {
        expect(msgpack.roundTrips!(hex(frame))).to.equal(expected);
        if (expected) holdsContract(msgpack, hex(frame));
      });
    }
  });

  describe('string', () => {
    const string = codec('string');
    /** Whether the codec decodes `frame`; when it does, the text's own UTF-8 must be the frame (not only the codec's memo of it). */
    const decodes = (frame: Buffer): boolean => {
      let text: string;
      try {
        text = string.decode(frame, 0n) as string;
      } catch {
        return false;
      }
      expect(Buffer.from(text, 'utf8').toString('hex'), frame.toString('hex')).to.equal(frame.toString('hex'));
      return true;
    };
    /** Invalid sequences: overlong forms, encoded surrogates, cut-off sequences, lone continuation bytes, beyond U+10FFFF. */
    const INVALID = ['c0af', 'c1bf', 'e080af', 'f08080af', 'eda080', 'edbfbf', 'e282', 'f09f98', '80', 'bf', 'f4908080', 'f5', 'fe', 'ff'];

    it('fuzz: roundTrips is true exactly for the frames the codec decodes, and those encode to themselves', () => {
      const pick = random(7);
      const sources = [...sampleLines('apache_access_logs.xz').slice(0, 100), ...Array.from({ length: 100 }, () => Buffer.from(generatedText(pick), 'utf8'))];
      const alphabet = [...ascii('a '), 0x80, 0xbf, 0xc0, 0xc2, 0xe0, 0xed, 0xef, 0xf0, 0xf4, 0xf5, 0xff];
      let accepted = 0;
      let refused = 0;
      for (const source of sources) {
        for (let k = 0; k < 40; k++) {
          let frame = mutant(source, pick, alphabet);
          if (pick(3) === 0) frame = Buffer.concat([frame.subarray(0, pick(frame.length + 1)), hex(oneOf(pick, INVALID)), frame]);
          const says = string.roundTrips!(frame);
          expect(says, frame.toString('hex')).to.equal(decodes(frame));
          if (says) (holdsContract(string, frame), accepted++);
          else refused++;
        }
      }
      expect(accepted).to.be.greaterThan(1000);
      expect(refused).to.be.greaterThan(1000);
    });

    const cases: [string, string, boolean][] = [
      ['the empty frame (decodes to "")', '', true],
      ['a BOM, kept as U+FEFF', 'efbbbf 61', true],
      ['2, 3 and 4 byte sequences', 'c3a9 e282ac f09f9880', true],
      ['U+FFFF and U+10FFFF', 'efbfbf f48fbfbf', true],
      ['an overlong slash', 'c0af', false],
      ['an overlong 3-byte form', 'e080af', false],
      ['an overlong 4-byte form', 'f08080af', false],
      ['an encoded high surrogate', 'eda080', false],
      ['an encoded low surrogate', 'edbfbf', false],
      ['a 3-byte sequence cut short', '61 e282', false],
      ['a 4-byte sequence cut short', 'f09f98', false],
      ['a lone continuation byte', '80', false],
      ['a code point beyond U+10FFFF', 'f4908080', false],
      ['0xff', 'ff', false],
    ];
    for (const [name, frame, expected] of cases) {
      it(`${expected ? 'accepts' : 'refuses'} ${name}`, () => {
        expect(string.roundTrips!(hex(frame))).to.equal(expected);
        expect(decodes(hex(frame))).to.equal(expected);
        if (expected) holdsContract(string, hex(frame));
      });
    }
  });
});
