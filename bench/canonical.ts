/**
 * What checking a frame with `Codec.roundTrips` costs beside decoding it,
 * per frame of the 100 sample events of data.json.xz (about 630 bytes each,
 * ASCII; two json rows are repeated on the same lines with every `a` of
 * the long `about` text made `é`, which takes the UTF-8 check). Prints figures, asserts nothing.
 *
 *   npx tsc -p tsconfig.json && node dist/bench/canonical.js [rounds, default 5]
 *
 * Each row is measured `rounds` times, the rows taking turns, for about
 * 0.2 s each time; the median nanoseconds per frame is printed.
 */
import { isUtf8 } from 'node:buffer';
import { scanBytes } from '../src/codecs/json/byte-scan';
import { isCanonicalJson } from '../src/codecs/json/canonical';
import { isCanonicalMsgpack } from '../src/codecs/msgpack-canonical';
import { builtinCodec, dataPath, loadLines, msgpackLines } from './data';

const rounds = Number(process.argv[2] ?? 5);
const SLICE_NS = 200_000_000n;

interface Row {
  name: string;
  inputs: unknown[];
  once: (input: never) => unknown;
  samples: number[];
}

let sink = 0; // keeps results alive so the work cannot be optimised away

/** Nanoseconds per input of one slice of `row`. */
function slice(row: Row): number {
  const once = row.once as (input: unknown) => unknown;
  const start = process.hrtime.bigint();
  let count = 0;
  let now = start;
  while (now - start < SLICE_NS) {
    for (let k = 0; k < 10; k++) for (const input of row.inputs) sink ^= once(input) === undefined ? 1 : 0;
    count += row.inputs.length * 10;
    now = process.hrtime.bigint();
  }
  return Number(now - start) / count;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1];

async function main(): Promise<void> {
  const lines = await loadLines(dataPath());
  const texts = lines.map((line) => line.toString('utf8'));
  const accented = texts.map((text) =>
    Buffer.from(
      text.replace(/("about":")([^"]*)/, (_, key: string, about: string) => key + about.replace(/a/g, 'é')),
      'utf8',
    ),
  );
  const json = builtinCodec('json');
  const msgpack = builtinCodec('msgpack');
  const string = builtinCodec('string');
  const packed = msgpackLines(lines);
  const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  for (const frame of [...lines, ...accented]) if (!isCanonicalJson(frame)) throw new Error('a sample line is not canonical JSON');
  for (const frame of packed) if (!isCanonicalMsgpack(frame)) throw new Error('a packed sample line is not canonical msgpack');

  const row = <T>(name: string, inputs: T[], once: (input: T) => unknown): Row => ({ name, inputs, once, samples: [] });
  const rows: Row[] = [
    row('json: JSON.parse(text) alone', texts, (text) => JSON.parse(text)),
    row('json: isUtf8 + toString + JSON.parse', lines, (line) => (isUtf8(line) ? JSON.parse(line.toString('utf8')) : undefined)),
    row('json: codec decode', lines, (line) => json.decode(line, 0n)),
    row('json: isCanonicalJson', lines, isCanonicalJson),
    row('json: its byte scan alone (WebAssembly)', lines, scanBytes),
    row('json: isUtf8 alone (if always called)', lines, isUtf8),
    row('json, about with é: codec decode', accented, (line) => json.decode(line, 0n)),
    row('json, about with é: isCanonicalJson', accented, isCanonicalJson),
    row('msgpack: codec decode (msgpackr unpack)', packed, (frame) => msgpack.decode(frame, 0n)),
    row('msgpack: isCanonicalMsgpack', packed, isCanonicalMsgpack),
    row('string: codec decode (TextDecoder)', lines, (line) => string.decode(line, 0n)),
    row('string: TextDecoder alone', lines, (line) => decoder.decode(line)),
    row('string: isUtf8 (roundTrips)', lines, isUtf8),
  ];
  for (const r of rows) slice(r); // warm-up
  for (let k = 0; k < rounds; k++) for (const r of rows) r.samples.push(slice(r));
  const bytes = lines.reduce((sum, line) => sum + line.length, 0) / lines.length;
  console.log(`${lines.length} frames, ${Math.round(bytes)} bytes each on average (json); median of ${rounds} slices`);
  for (const r of rows) console.log(`${r.name.padEnd(42)} ${median(r.samples).toFixed(0).padStart(7)} ns/frame`);
  if (sink === -1) console.log(sink);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
