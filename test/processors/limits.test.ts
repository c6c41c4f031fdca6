import { expect } from 'chai';
import type { Preprocessor, ProcessorError } from '../../src/processors/processor';
import { ctx, pre } from './support';

/**
 * Framing at exactly `max_length` and at `max_length + 1` (issue 11, "Tests
 * that must exist"), with the frame inside one chunk and carried across
 * chunks. A frame of exactly the limit is kept; one byte more is an error.
 */

const MAX = 5;
const b = (s: string) => Buffer.from(s, 'latin1');

/** Feeds chunks, then finishes; frames as strings and error messages in the order they happened. */
function feed(processor: Preprocessor, chunks: Buffer[]): { frames: string[]; errors: string[] } {
  const frames: string[] = [];
  const errors: string[] = [];
  const step = (run: () => Buffer[]) => {
    try {
      frames.push(...run().map((f) => f.toString('latin1')));
    } catch (error) {
      errors.push((error as Error).message);
      frames.push(...((error as ProcessorError).frames ?? []).map((f) => f.toString('latin1')));
    }
  };
  for (const chunk of chunks) step(() => processor.process(chunk, ctx()));
  step(() => processor.finish?.(ctx()) ?? []);
  return { frames, errors };
}

const lineVariants = [
  { name: 'lines', sep: '\n' },
  { name: 'lines-null', sep: '\0' },
  { name: 'lines-pipe', sep: '|' },
];

for (const { name, sep } of lineVariants) {
  describe(`${name} at max_length ${MAX}`, () => {
    const lines = () => pre(name, { max_length: MAX });
    const tooLong = `${name}: line longer than ${MAX} bytes skipped, starting "123456"`;

    it('keeps a line of exactly max_length bytes within one chunk, and skips one of max_length + 1', () => {
      expect(feed(lines(), [b(`12345${sep}ok${sep}`)])).to.deep.equal({ frames: ['12345', 'ok'], errors: [] });
      expect(feed(lines(), [b(`123456${sep}ok${sep}`)])).to.deep.equal({ frames: ['ok'], errors: [tooLong] });
    });

    it('keeps a line of exactly max_length bytes carried across chunks, and skips one of max_length + 1', () => {
      expect(feed(lines(), [b('123'), b(`45${sep}ok${sep}`)])).to.deep.equal({ frames: ['12345', 'ok'], errors: [] });
      expect(feed(lines(), [b('123'), b(`456${sep}ok${sep}`)])).to.deep.equal({ frames: ['ok'], errors: [tooLong] });
    });

    it('holds exactly max_length bytes waiting for their separator, and gives up at max_length + 1 before it comes', () => {
      // the whole line waits in the buffer: the check on what is carried, not on a finished line
      expect(feed(lines(), [b('12345'), b(`${sep}ok${sep}`)])).to.deep.equal({ frames: ['12345', 'ok'], errors: [] });
      expect(feed(lines(), [b('123456'), b(`${sep}ok${sep}`)])).to.deep.equal({ frames: ['ok'], errors: [tooLong] });
      expect(feed(lines(), [b('12345'), b(`6${sep}ok${sep}`)])).to.deep.equal({ frames: ['ok'], errors: [tooLong] });
    });

    it('flushes a last line of exactly max_length bytes at the end of the stream', () => {
      expect(feed(lines(), [b('123'), b('45')])).to.deep.equal({ frames: ['12345'], errors: [] });
    });
  });
}

/** A u64 big-endian length header. */
const u64 = (n: number) => {
  const header = Buffer.alloc(8);
  header.writeBigUInt64BE(BigInt(n));
  return header;
};

describe(`length-prefixed at max_length ${MAX}`, () => {
  const framing = () => pre('length-prefixed', { max_length: MAX });
  const tooLong = `length-prefixed: frame length ${MAX + 1} exceeds max_length ${MAX}`;

  it('takes a frame of exactly max_length bytes within one chunk, and refuses max_length + 1', () => {
    expect(feed(framing(), [Buffer.concat([u64(5), b('12345'), u64(2), b('ok')])])).to.deep.equal({ frames: ['12345', 'ok'], errors: [] });
    expect(feed(framing(), [Buffer.concat([u64(2), b('ok'), u64(6), b('123456')])])).to.deep.equal({ frames: ['ok'], errors: [tooLong] });
  });

  it('takes a frame of exactly max_length bytes carried across chunks (header and body cut), and refuses max_length + 1 as soon as its header is whole', () => {
    const exact = Buffer.concat([u64(5), b('12345')]);
    expect(feed(framing(), [exact.subarray(0, 3), exact.subarray(3, 10), exact.subarray(10)])).to.deep.equal({ frames: ['12345'], errors: [] });
    const over = u64(6);
    // the body need not arrive: the header alone is refused (and the stream's buffer dropped)
    expect(feed(framing(), [over.subarray(0, 4), over.subarray(4)])).to.deep.equal({ frames: [], errors: [tooLong] });
  });
});

describe(`textual-length-prefix at max_length ${MAX}`, () => {
  const framing = () => pre('textual-length-prefix', { max_length: MAX });
  const tooLong = (at: string) => `textual-length-prefix: frame length ${MAX + 1} exceeds max_length ${MAX}, at "${at}"`;

  it('takes a frame of exactly max_length bytes within one chunk, and refuses max_length + 1', () => {
    expect(feed(framing(), [b('5 123452 ok')])).to.deep.equal({ frames: ['12345', 'ok'], errors: [] });
    expect(feed(framing(), [b('2 ok6 123456')])).to.deep.equal({ frames: ['ok'], errors: [tooLong('6 123456')] });
  });

  it('takes a frame of exactly max_length bytes carried across chunks, and refuses max_length + 1 as soon as its header is whole', () => {
    expect(feed(framing(), [b('5'), b(' 12'), b('345')])).to.deep.equal({ frames: ['12345'], errors: [] });
    expect(feed(framing(), [b('6'), b(' ')])).to.deep.equal({ frames: [], errors: [tooLong('6 ')] });
  });
});
