import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { Compressor, Decompressor } from 'snappy';
import { fixture } from '../codecs/support';
import { ctx, post, pre } from './support';

const sample = fixture('compression', 'sample.txt');
const one = (name: string, data: Buffer) => pre(name).process(data, ctx());

// made by the CLI tools: gzip -9, (gzip; gzip) for two members, xz, zstd, lz4; zlib by Python's zlib module
describe('decompression of data made by the standard tools', () => {
  it('gzip reads single- and multi-member files', () => {
    expect(one('gzip', fixture('compression', 'sample.txt.gz'))).to.deep.equal([sample]);
    expect(one('gzip', fixture('compression', 'sample.multi.gz'))).to.deep.equal([sample]);
  });

  it('zlib, xz2, lz4 and zstd read their formats', () => {
    expect(one('zlib', fixture('compression', 'sample.txt.zlib'))).to.deep.equal([sample]);
    expect(one('xz2', fixture('compression', 'sample.txt.xz'))).to.deep.equal([sample]);
    expect(one('lz4', fixture('compression', 'sample.txt.lz4'))).to.deep.equal([sample]);
    expect(one('zstd', fixture('compression', 'sample.txt.zst'))).to.deep.equal([sample]);
  });

  it('the zstd CLI reads what the zstd postprocessor writes', function () {
    try {
      execFileSync('zstd', ['--version']);
    } catch {
      this.skip(); // no zstd CLI on this machine
    }
    const written = post('zstd').process(sample, ctx())[0];
    expect(execFileSync('zstd', ['-d', '-c'], { input: written }).equals(sample)).to.equal(true);
  });

  it('decompress recognises gzip, zlib, xz, lz4 and zstd by their magic bytes', () => {
    for (const file of ['sample.txt.gz', 'sample.multi.gz', 'sample.txt.zlib', 'sample.txt.xz', 'sample.txt.lz4', 'sample.txt.zst']) {
      expect(one('decompress', fixture('compression', file)), file).to.deep.equal([sample]);
    }
  });

  it('decompress passes through what it does not recognise, and fails on a damaged stream', () => {
    for (const text of ['', 'x', '{"a":1}', 'plain text that is long enough']) {
      expect(one('decompress', Buffer.from(text))).to.deep.equal([Buffer.from(text)]);
    }
    const damaged = Buffer.from(fixture('compression', 'sample.txt.gz'));
    damaged[20] ^= 0xff;
    expect(() => one('decompress', damaged)).to.throw(/decompress \(gzip\)/);
    expect(() => one('gzip', Buffer.from('not gzip'))).to.throw(/gzip/);
  });
});

/** A zstd frame of raw blocks: magic, a descriptor, the given header bytes, then each block (the last one flagged). */
function zstdFrame(descriptor: number, header: number[], blocks: Buffer[]): Buffer {
  const parts: Buffer[] = [Buffer.from([0x28, 0xb5, 0x2f, 0xfd, descriptor, ...header])];
  blocks.forEach((block, i) => {
    const blockHeader = Buffer.alloc(3);
    blockHeader.writeUIntLE((block.length << 3) | (0 << 1) | (i === blocks.length - 1 ? 1 : 0), 0, 3);
    parts.push(blockHeader, block);
  });
  return Buffer.concat(parts);
}
const le64 = (n: bigint) => {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(n);
  return [...b];
};

// eddy decoded zstd with fzstd until Node 24, which trusted a frame header's declared content size;
// libzstd (Node's zlib) must refuse these frames as eddy's own header check did
describe('zstd frames whose headers declare more than they hold', () => {
  const hello = Buffer.from('hello zstd');

  it("decodes a hand-made frame whose declared content size is its blocks'", () => {
    // single segment (0x20) with an 8-byte content size (0xc0)
    expect(one('decompress', zstdFrame(0xe0, le64(BigInt(hello.length * 2)), [hello, hello]))).to.deep.equal([Buffer.concat([hello, hello])]);
  });

  it('refuses a 26-byte frame declaring 1 GiB of content, and one declaring more than its blocks hold', () => {
    const bomb = zstdFrame(0xe0, le64(2n ** 30n), [hello]);
    expect(bomb.length).to.equal(26);
    const before = process.memoryUsage().rss;
    expect(() => one('decompress', bomb)).to.throw(
      "decompress (zstd): a frame needs a window larger than 134217728 bytes, the most eddy decodes with (libzstd's default limit)",
    );
    expect(process.memoryUsage().rss - before).to.be.below(64 * 1024 * 1024); // nothing near 1 GiB was allocated
    const within = zstdFrame(0xe0, le64(2n ** 20n), [hello]);
    expect(() => one('decompress', within)).to.throw('decompress (zstd): Data corruption detected');
    expect(() => one('zstd', within)).to.throw('zstd: Data corruption detected');
  });

  it('refuses a window beyond 128 MiB, as libzstd does by default, and accepts 128 MiB', () => {
    // not single segment: a window descriptor byte, exponent in its top 5 bits (window = 2^(10 + exponent))
    expect(() => one('decompress', zstdFrame(0x00, [(18 << 3) | 0], [hello]))).to.throw(/a frame needs a window larger than 134217728 bytes/);
    expect(one('decompress', zstdFrame(0x00, [(17 << 3) | 0], [hello]))).to.deep.equal([hello]);
  });

  it('reads every frame of a chunk and skips skippable frames', () => {
    const skippable = Buffer.from([0x50, 0x2a, 0x4d, 0x18, 3, 0, 0, 0, 1, 2, 3]);
    const written = (text: string) => post('zstd').process(Buffer.from(text), ctx())[0];
    expect(one('zstd', Buffer.concat([written('one '), skippable, written('two')]))).to.deep.equal([Buffer.from('one two')]);
  });
});

// no snappy CLI with the framing format installs here (Debian's python3-snappy fails to run), so the
// fixtures come from the snappy package's own framed stream (an independent, Rust implementation)
describe("snappy framing format, against the snappy package's framed streams", () => {
  it('reads a stream written by the snappy package and writes one it reads', async () => {
    const compressor = new Compressor();
    const framed = Buffer.concat([compressor.update(sample), await compressor.finish()]);
    expect(one('snappy', framed)).to.deep.equal([sample]);
    expect(one('decompress', framed)).to.deep.equal([sample]);

    const big = Buffer.concat(Array.from({ length: 40 }, () => sample)); // more than one 64 KiB block
    const ours = post('snappy').process(big, ctx())[0];
    const decompressor = new Decompressor();
    const back = Buffer.concat([decompressor.update(ours), await decompressor.finish()]);
    expect(back.equals(big)).to.equal(true);
  });

  it('rejects a checksum mismatch and a stream without its identifier', () => {
    const framed = post('snappy').process(sample, ctx())[0];
    const corrupt = Buffer.from(framed);
    corrupt[14] ^= 0x01; // inside the first chunk's checksum
    expect(() => one('snappy', corrupt)).to.throw(/checksum/);
    expect(() => one('snappy', framed.subarray(10))).to.throw(/identifier/);
  });
});
