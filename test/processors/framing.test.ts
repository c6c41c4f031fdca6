import { expect } from 'chai';
import { sampleLines } from '../codecs/support';
import type { ProcessorError } from '../../src/processors/processor';
import { ctx, post, pre, runPre } from './support';

const b = (s: string) => Buffer.from(s, 'latin1');
const strings = (frames: Buffer[]) => frames.map((f) => f.toString('latin1'));
const caught = (run: () => unknown): ProcessorError => {
  try {
    run();
  } catch (error) {
    return error as ProcessorError;
  }
  throw new Error('expected an error');
};

describe('lines preprocessors', () => {
  it('carries a partial line across chunks, keeps empty lines and flushes the last line at the end', () => {
    expect(strings(runPre(pre('lines'), [b('a\nb'), b('c\n\nd'), b('e')]))).to.deep.equal(['a', 'bc', '', 'de']);
  });

  it('splits the 1000 Apache log lines the same however the stream is chunked', () => {
    const lines = sampleLines('apache_access_logs.xz');
    const stream = Buffer.concat(lines.flatMap((l) => [l, b('\n')]));
    for (const size of [1, 7, 4096, stream.length]) {
      const chunks: Buffer[] = [];
      for (let i = 0; i < stream.length; i += size) chunks.push(stream.subarray(i, i + size));
      expect(runPre(pre('lines'), chunks), `chunks of ${size}`).to.deep.equal(lines);
    }
  });

  it('skips an over-long line with an error naming its start, and still delivers the good lines', () => {
    const lines = pre('lines', { max_length: 5 });
    const error = caught(() => lines.process(b('ok\ntoolongline\nfine\npartial-too-long'), ctx()));
    expect(error.message).to.match(/longer than 5 bytes.*"toolongline"/);
    expect(strings(error.frames ?? [])).to.deep.equal(['ok', 'fine']);
    // the rest of the over-long partial line is dropped up to its separator, then framing resumes
    expect(strings(lines.process(b('more\nnext\n'), ctx()))).to.deep.equal(['next']);
  });

  it('takes a configurable one-byte separator; lines-null and lines-pipe are fixed', () => {
    expect(strings(runPre(pre('lines', { separator: ';' }), [b('a;b;')]))).to.deep.equal(['a', 'b']);
    expect(strings(runPre(pre('lines-null'), [b('a\0b\0')]))).to.deep.equal(['a', 'b']);
    expect(strings(runPre(pre('lines-pipe'), [b('a|b|c')]))).to.deep.equal(['a', 'b', 'c']);
  });

  it('the no-buffer variants split each chunk alone, without an empty frame after a final separator', () => {
    expect(strings(runPre(pre('lines-no-buffer'), [b('a\nb'), b('c\n\nd\n')]))).to.deep.equal(['a', 'b', 'c', '', 'd']);
    expect(strings(runPre(pre('lines-cr-no-buffer'), [b('a\rb\r')]))).to.deep.equal(['a', 'b']);
  });

  it('remove-empty drops empty frames only', () => {
    expect(strings(runPre(pre('remove-empty'), [b(''), b('x'), b('')]))).to.deep.equal(['x']);
  });
});

describe('length-prefixed framing', () => {
  it('reads a header as soon as its 8 bytes arrive, so a zero-length frame at the end of a read is not held back', () => {
    const frames = pre('length-prefixed').process(Buffer.alloc(8), ctx());
    expect(frames).to.deep.equal([Buffer.alloc(0)]);
  });

  it('rejects lengths over max_length and a stream that ends inside a frame', () => {
    const header = Buffer.alloc(8);
    header.writeBigUInt64BE(100n);
    expect(() => pre('length-prefixed', { max_length: 10 }).process(header, ctx())).to.throw(/exceeds max_length/);
    const p = pre('length-prefixed');
    expect(p.process(header.subarray(0, 5), ctx())).to.deep.equal([]);
    expect(() => p.finish?.(ctx())).to.throw(/ended inside a frame/);
  });

  it('textual-length-prefix reads RFC 6587 octet counting and rejects garbage', () => {
    expect(strings(runPre(pre('textual-length-prefix'), [b('5 hello3'), b(' abc0 ')]))).to.deep.equal(['hello', 'abc', '']);
    expect(strings(post('textual-length-prefix').process(b('hello'), ctx()))).to.deep.equal(['5 hello']);
    expect(() => pre('textual-length-prefix').process(b('x5 hello'), ctx())).to.throw(/decimal length/);
    expect(() => pre('textual-length-prefix').process(b('12345678901 x'), ctx())).to.throw(/too many digits/);
  });
});

describe('ingest-ns and base64', () => {
  it('ingest-ns takes the first 8 bytes as the ingest time and needs them', () => {
    const context = ctx(1n);
    expect(strings(pre('ingest-ns').process(Buffer.concat([Buffer.from('0000000000000010', 'hex'), b('x')]), context))).to.deep.equal(['x']);
    expect(context.ingestNs).to.equal(16n);
    expect(() => pre('ingest-ns').process(b('short'), ctx())).to.throw(/8-byte/);
  });

  it('base64 decodes standard base64 and rejects anything else', () => {
    expect(strings(pre('base64').process(b('aGVsbG8='), ctx()))).to.deep.equal(['hello']);
    expect(() => pre('base64').process(b('aGVsbG8'), ctx())).to.throw(/base64/);
    expect(() => pre('base64').process(b('aGV*bG8='), ctx())).to.throw(/base64/);
  });
});

describe('gelf-chunking', () => {
  const chunk = (id: number, seq: number, count: number, data: string) => Buffer.concat([Buffer.of(0x1e, 0x0f, 0, 0, 0, 0, 0, 0, 0, id, seq, count), b(data)]);

  it('passes unchunked messages through and ignores a repeated chunk', () => {
    const gelf = pre('gelf-chunking');
    expect(strings(gelf.process(b('{"short_message":"x"}'), ctx()))).to.deep.equal(['{"short_message":"x"}']);
    expect(gelf.process(chunk(1, 1, 2, 'world'), ctx())).to.deep.equal([]);
    expect(gelf.process(chunk(1, 1, 2, 'world'), ctx())).to.deep.equal([]);
    expect(strings(gelf.process(chunk(1, 0, 2, 'hello '), ctx()))).to.deep.equal(['hello world']);
  });

  it('bounds incomplete messages by count, dropping the oldest with an error', () => {
    const gelf = pre('gelf-chunking', { max_messages: 2 });
    gelf.process(chunk(1, 0, 2, 'a'), ctx());
    gelf.process(chunk(2, 0, 2, 'b'), ctx());
    const error = caught(() => gelf.process(chunk(3, 0, 2, 'c'), ctx()));
    expect(error.message).to.match(/0000000000000001 \(too many/);
    // messages 2 and 3 are still there and complete
    expect(strings(gelf.process(chunk(2, 1, 2, 'y'), ctx()))).to.deep.equal(['by']);
    expect(strings(gelf.process(chunk(3, 1, 2, 'z'), ctx()))).to.deep.equal(['cz']);
  });

  it("drops incomplete messages older than timeout_ms, by ingest time, and still delivers the chunk's message", () => {
    const gelf = pre('gelf-chunking', { timeout_ms: 1000 });
    gelf.process(chunk(1, 0, 2, 'old'), ctx(0n));
    const error = caught(() => gelf.process(b('{"fresh":1}'), ctx(2_000_000_000n)));
    expect(error.message).to.match(/timed out/);
    expect(strings(error.frames ?? [])).to.deep.equal(['{"fresh":1}']);
  });

  it('rejects malformed chunks, and gelf-chunking-tcp strips the NUL terminator', () => {
    expect(() => pre('gelf-chunking').process(chunk(1, 2, 2, 'x'), ctx())).to.throw(/bad chunk/);
    expect(() => pre('gelf-chunking').process(Buffer.of(0x1e, 0x0f, 1), ctx())).to.throw(/shorter than its header/);
    expect(strings(pre('gelf-chunking-tcp').process(b('{"a":1}\0'), ctx()))).to.deep.equal(['{"a":1}']);
    expect(strings(pre('gelf-chunking-tcp').process(b('{"a":1}'), ctx()))).to.deep.equal(['{"a":1}']);
  });

  it('the postprocessor writes at most 128 chunks with distinct ids per message', () => {
    const gelf = post('gelf-chunking', { chunk_size: 10 });
    const first = gelf.process(b('x'.repeat(25)), ctx());
    expect(first.map((c) => [c[10], c[11], c.length])).to.deep.equal([
      [0, 3, 22],
      [1, 3, 22],
      [2, 3, 17],
    ]);
    const second = gelf.process(b('y'), ctx());
    expect(second[0].subarray(2, 10).equals(first[0].subarray(2, 10))).to.equal(false);
    expect(() => gelf.process(Buffer.alloc(1291), ctx())).to.throw(/more than 128/);
  });
});
