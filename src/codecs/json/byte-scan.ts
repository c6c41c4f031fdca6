/**
 * One pass over a frame's bytes for isCanonicalJson: does it hold a byte
 * below 0x20 (`CONTROL`: a control character, never in the json codec's
 * output, raw inside a string invalid JSON, between tokens whitespace the
 * codec does not write), and does it hold one of 0x80 or more (`NON_ASCII`:
 * then the frame's UTF-8 must be checked)?
 *
 * Why WebAssembly: on the sample events a JavaScript loop over every byte
 * costs about as much as JSON.parse of the frame, which the check is meant
 * to replace; this function compares 16 bytes at a time (SIMD), and copying
 * the frame into its memory is a native copy (bench/canonical.ts).
 */
export const CONTROL = 1;
export const NON_ASCII = 2;

/** The function `scan(end)`: bytes 0..end of memory, `end` a multiple of 16; returns CONTROL | NON_ASCII bits. */
const body = [
  0x02,
  0x01,
  0x7f,
  0x03,
  0x7b, // locals: i32 i; v128 control, high, v
  0x02,
  0x40,
  0x20,
  0x00,
  0x45,
  0x0d,
  0x00, // block; leave it when end == 0
  0x03,
  0x40, // loop
  0x20,
  0x01,
  0xfd,
  0x00,
  0x00,
  0x00,
  0x22,
  0x04, //   v = v128.load(i)
  0x41,
  0x20,
  0xfd,
  0x0f,
  0xfd,
  0x26, //   i8x16.lt_u(v, i8x16.splat(0x20))
  0x20,
  0x02,
  0xfd,
  0x50,
  0x21,
  0x02, //   control |= that
  0x20,
  0x04,
  0x20,
  0x03,
  0xfd,
  0x50,
  0x21,
  0x03, //   high |= v (a byte's top bit stays set)
  0x20,
  0x01,
  0x41,
  0x10,
  0x6a,
  0x22,
  0x01,
  0x20,
  0x00,
  0x49,
  0x0d,
  0x00, //   i += 16; again while i < end
  0x0b,
  0x0b, // end loop, end block
  0x20,
  0x02,
  0xfd,
  0x53, // v128.any_true(control)
  0x20,
  0x03,
  0xfd,
  0x64,
  0x41,
  0x00,
  0x47,
  0x41,
  0x01,
  0x74,
  0x72, // | (i8x16.bitmask(high) != 0) << 1
  0x0b,
];
const name = (text: string) => [text.length, ...Buffer.from(text, 'latin1')];
const section = (id: number, content: number[]) => [id, content.length, ...content];
const MODULE = Uint8Array.from([
  0x00,
  0x61,
  0x73,
  0x6d,
  0x01,
  0x00,
  0x00,
  0x00, // \0asm, version 1
  ...section(1, [0x01, 0x60, 0x01, 0x7f, 0x01, 0x7f]), // one type: (i32) -> i32
  ...section(3, [0x01, 0x00]), // one function of that type
  ...section(5, [0x01, 0x00, 0x01]), // one memory of one page (64 KiB)
  ...section(7, [0x02, ...name('memory'), 0x02, 0x00, ...name('scan'), 0x00, 0x00]),
  ...section(10, [0x01, body.length, ...body]),
]);

// the part of the WebAssembly API used here (the compiler's ES2022 library has none of it)
declare const WebAssembly: {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object) => { exports: { memory: { buffer: ArrayBuffer }; scan: (end: number) => number } };
};

const PAGE = 65536;
const wasm = new WebAssembly.Instance(new WebAssembly.Module(MODULE)).exports;
const memory = new Uint8Array(wasm.memory.buffer);
const scan = wasm.scan;

/** CONTROL and NON_ASCII bits of `bytes`; a frame beyond 64 KiB is scanned a page at a time. */
export function scanBytes(bytes: Uint8Array): number {
  if (bytes.length <= PAGE) return scanPage(bytes);
  let found = 0;
  for (let start = 0; start < bytes.length; start += PAGE) found |= scanPage(bytes.subarray(start, start + PAGE));
  return found;
}

function scanPage(bytes: Uint8Array): number {
  const end = (bytes.length + 15) & ~15;
  memory.set(bytes, 0);
  memory.fill(0x20, bytes.length, end); // spaces: neither flag
  return scan(end);
}
