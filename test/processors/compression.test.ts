import { expect } from 'chai';
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

  it('zlib, xz2 and lz4 read their formats', () => {
    expect(one('zlib', fixture('compression', 'sample.txt.zlib'))).to.deep.equal([sample]);
    expect(one('xz2', fixture('compression', 'sample.txt.xz'))).to.deep.equal([sample]);
    expect(one('lz4', fixture('compression', 'sample.txt.lz4'))).to.deep.equal([sample]);
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

// no snappy CLI with the framing format installs here (Debian's python3-snappy fails to run), so the
// fixtures come from the snappy package's own framed stream (an independent, Rust implementation)
describe('snappy framing format, against the snappy package\'s framed streams', () => {
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
