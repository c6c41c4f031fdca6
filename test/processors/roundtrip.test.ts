import { expect } from 'chai';
import fc from 'fast-check';
import { builtinPostprocessors, builtinPreprocessors } from '../../src/processors';
import { ctx, post, pre, runPre, splitAt } from './support';

const frames = (constraints: fc.UniqueArrayConstraints<Uint8Array, unknown> | object = {}) =>
  fc.array(
    fc.uint8Array({ maxLength: 300 }).map((a) => Buffer.from(a)),
    { maxLength: 8, ...constraints },
  );
const cuts = fc.array(fc.nat(), { maxLength: 10 });
const toBuffers = (frames: Buffer[]) => frames.map((f) => Buffer.from(f));

/** Stream framings: the packets are concatenated and cut anywhere, as TCP would. */
const streamPairs: { post: string; pre: string; config?: Record<string, unknown>; frame: (f: Buffer) => boolean }[] = [
  { post: 'lines', pre: 'lines', frame: (f) => !f.includes(0x0a) },
  { post: 'length-prefixed', pre: 'length-prefixed', frame: () => true },
  { post: 'textual-length-prefix', pre: 'textual-length-prefix', frame: () => true },
];

/** Packet processors: each packet arrives whole, as a datagram or message would. */
const packetPairs: { post: string; pre: string }[] = [
  { post: 'base64', pre: 'base64' },
  { post: 'gzip', pre: 'gzip' },
  { post: 'zlib', pre: 'zlib' },
  { post: 'xz2', pre: 'xz2' },
  { post: 'snappy', pre: 'snappy' },
  { post: 'lz4', pre: 'lz4' },
  { post: 'zstd', pre: 'zstd' },
  { post: 'gzip', pre: 'decompress' },
  { post: 'zlib', pre: 'decompress' },
  { post: 'xz2', pre: 'decompress' },
  { post: 'snappy', pre: 'decompress' },
  { post: 'lz4', pre: 'decompress' },
  { post: 'zstd', pre: 'decompress' },
  { post: 'ingest-ns', pre: 'ingest-ns' },
  { post: 'gelf-chunking', pre: 'gelf-chunking' },
];

describe('postprocess then preprocess gives the original frames', () => {
  for (const pair of streamPairs) {
    it(`${pair.post} -> ${pair.pre}, cut at arbitrary chunk boundaries`, () => {
      fc.assert(
        fc.property(frames(), cuts, (original, at) => {
          const wanted = original.filter(pair.frame);
          const postprocessor = post(pair.post);
          const stream = Buffer.concat(wanted.flatMap((f) => postprocessor.process(f, ctx())));
          // a copy of every chunk: the preprocessor must not depend on the caller keeping chunk memory
          const got = runPre(pre(pair.pre), toBuffers(splitAt(stream, at)));
          // lines cannot tell a trailing empty line from no line: its postprocessor always ends frames with \n, so compare exactly
          expect(got.map((f) => f.toString('hex'))).to.deep.equal(wanted.map((f) => f.toString('hex')));
        }),
        { numRuns: 200 },
      );
    });
  }

  for (const pair of packetPairs) {
    it(`${pair.post} -> ${pair.pre}, packet by packet`, () => {
      fc.assert(
        fc.property(frames({ maxLength: 4 }), fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }), (original, ingestNs) => {
          const postprocessor = post(pair.post);
          const preprocessor = pre(pair.pre);
          const got: Buffer[] = [];
          for (const frame of original) {
            const out = ctx(ingestNs);
            const packets = postprocessor.process(frame, out);
            const into = ctx(0n);
            for (const packet of packets) got.push(...preprocessor.process(packet, into));
            if (pair.pre === 'ingest-ns') expect(into.ingestNs).to.equal(ingestNs);
          }
          expect(got.map((f) => f.toString('hex'))).to.deep.equal(original.map((f) => f.toString('hex')));
        }),
        { numRuns: pair.post === 'xz2' ? 30 : 100 },
      );
    });
  }

  it('gelf-chunking reassembles large frames whose chunks arrive in any order', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 1, maxLength: 40_000 }), fc.integer({ min: 100, max: 9000 }), fc.nat(), (bytes, size, seed) => {
        const chunks = post('gelf-chunking', { chunk_size: size }).process(Buffer.from(bytes), ctx());
        const shuffled = chunks
          .map((c, i) => ({ c, k: (i * 7919 + seed) % 10007 }))
          .sort((a, b) => a.k - b.k)
          .map((x) => x.c);
        expect(runPre(pre('gelf-chunking'), shuffled)).to.deep.equal([Buffer.from(bytes)]);
      }),
      { numRuns: 50 },
    );
  });

  it('every processor of the issue is registered once', () => {
    expect(builtinPreprocessors.map((p) => p.name).sort()).to.deep.equal([
      'base64',
      'decompress',
      'gelf-chunking',
      'gelf-chunking-tcp',
      'gzip',
      'ingest-ns',
      'length-prefixed',
      'lines',
      'lines-cr-no-buffer',
      'lines-no-buffer',
      'lines-null',
      'lines-pipe',
      'lz4',
      'remove-empty',
      'snappy',
      'textual-length-prefix',
      'xz2',
      'zlib',
      'zstd',
    ]);
    expect(builtinPostprocessors.map((p) => p.name).sort()).to.deep.equal([
      'base64',
      'gelf-chunking',
      'gzip',
      'ingest-ns',
      'length-prefixed',
      'lines',
      'lz4',
      'snappy',
      'textual-length-prefix',
      'xz2',
      'zlib',
      'zstd',
    ]);
  });
});
