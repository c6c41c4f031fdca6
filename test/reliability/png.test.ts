import { expect } from 'chai';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as zlib from 'node:zlib';
import { IdTally } from '../../bench/reliability/common';
import { Canvas, linePlotPng, niceStep } from '../../bench/reliability/plot';
import { PNG_SIGNATURE, crc32, encodePng } from '../../bench/reliability/png';
import { writeSection } from '../../bench/reliability/report';

interface Chunk {
  type: string;
  data: Buffer;
  crc: number;
}

/** Splits a PNG file into its chunks, independently of the encoder. */
function chunks(png: Buffer): Chunk[] {
  expect(png.subarray(0, 8).equals(PNG_SIGNATURE)).to.equal(true);
  const out: Chunk[] = [];
  for (let at = 8; at < png.length;) {
    const length = png.readUInt32BE(at);
    out.push({ type: png.toString('ascii', at + 4, at + 8), data: png.subarray(at + 8, at + 8 + length), crc: png.readUInt32BE(at + 8 + length) });
    at += 12 + length;
  }
  return out;
}

/** The RGB pixels of an 8-bit RGB PNG whose scanlines all use filter 0. */
function pixels(png: Buffer): { width: number; height: number; rgb: Buffer } {
  const cs = chunks(png);
  const ihdr = cs.find((c) => c.type === 'IHDR')!.data;
  const width = ihdr.readUInt32BE(0);
  const height = ihdr.readUInt32BE(4);
  const raw = zlib.inflateSync(Buffer.concat(cs.filter((c) => c.type === 'IDAT').map((c) => c.data)));
  const rows: Buffer[] = [];
  for (let y = 0; y < height; y++) {
    expect(raw[y * (width * 3 + 1)], `filter byte of row ${y}`).to.equal(0);
    rows.push(raw.subarray(y * (width * 3 + 1) + 1, (y + 1) * (width * 3 + 1)));
  }
  return { width, height, rgb: Buffer.concat(rows) };
}

describe('reliability report: the PNG encoder and plot', () => {
  it('computes the standard CRC-32 (the check value of "123456789", and what zlib computes)', () => {
    expect(crc32(Buffer.from('123456789'))).to.equal(0xcbf43926);
    const bytes = Buffer.from(Array.from({ length: 1000 }, (_, i) => (i * 7919) & 0xff));
    expect(crc32(bytes)).to.equal(zlib.crc32(bytes));
    expect(crc32(bytes.subarray(500), crc32(bytes.subarray(0, 500)))).to.equal(zlib.crc32(bytes));
  });

  it('writes signature, IHDR, IDAT and IEND with correct CRCs, and the pixels decode back with zlib', () => {
    const rgb = Buffer.from([255, 0, 0, 0, 255, 0, 0, 0, 255, 10, 20, 30, 40, 50, 60, 70, 80, 90]);
    const png = encodePng(3, 2, rgb);
    const cs = chunks(png);
    expect(cs.map((c) => c.type)).to.deep.equal(['IHDR', 'IDAT', 'IEND']);
    for (const c of cs) expect(c.crc, `CRC of ${c.type}`).to.equal(zlib.crc32(c.data, zlib.crc32(c.type)));
    const ihdr = cs[0].data;
    expect([ihdr.readUInt32BE(0), ihdr.readUInt32BE(4), ihdr[8], ihdr[9], ihdr[10], ihdr[11], ihdr[12]]).to.deep.equal([3, 2, 8, 2, 0, 0, 0]);
    expect(cs[2].data.length).to.equal(0);
    const back = pixels(png);
    expect(back.rgb.equals(rgb)).to.equal(true);
  });

  it('refuses pixel data of the wrong size', () => {
    expect(() => encodePng(2, 2, Buffer.alloc(11))).to.throw('encodePng: 11 bytes of pixels for 2x2 RGB (needs 12)');
  });

  it('draws lines through both end points, and a plot decodes to its size with the line colour in it', () => {
    const canvas = new Canvas(20, 10);
    canvas.line(1, 1, 18, 8, [0, 0, 0]);
    expect(canvas.get(1, 1)).to.deep.equal([0, 0, 0]);
    expect(canvas.get(18, 8)).to.deep.equal([0, 0, 0]);
    expect(canvas.get(18, 1)).to.deep.equal([255, 255, 255]);

    const png = linePlotPng({
      title: 'rss',
      xLabel: 'minutes',
      yLabel: 'MB',
      points: [
        [0, 10],
        [1, 20],
        [2, 15],
      ],
      width: 200,
      height: 150,
    });
    const { width, height, rgb } = pixels(png);
    expect([width, height]).to.deep.equal([200, 150]);
    let lineColour = 0;
    for (let i = 0; i < rgb.length; i += 3) if (rgb[i] === 31 && rgb[i + 1] === 100 && rgb[i + 2] === 200) lineColour++;
    expect(lineColour).to.be.greaterThan(50);
  });

  it('picks tick steps of 1, 2 or 5 times a power of ten', () => {
    expect([niceStep(30), niceStep(150), niceStep(1), niceStep(0.3)]).to.deep.equal([5, 50, 0.2, 0.05]);
  });
});

describe('reliability report: the counting and the report file', () => {
  it('counts lost and duplicated ids', () => {
    const tally = new IdTally(5);
    tally.add(['{"id":1}', '{"id":2}', '{"id":2}', '{"id":5}', 'junk', '']);
    expect([tally.lines, tally.distinct, tally.duplicated, tally.other, tally.maxId()]).to.deep.equal([5, 3, 1, 1, 5]);
    expect(tally.missing()).to.deep.equal([3, 4]);
  });

  it('replaces only the section that ran, keeping the others', () => {
    const dir = mkdtempSync(join(tmpdir(), 'eddy-report-'));
    try {
      const path = join(dir, 'reliability.md');
      writeSection(path, 'kill9', '## kill9 first');
      writeSection(path, 'soak', '## soak first');
      writeSection(path, 'kill9', '## kill9 second');
      const text = readFileSync(path, 'utf8');
      expect(text).to.include('## kill9 second').and.include('## soak first').and.not.include('kill9 first');
      expect(text).to.include('Not run yet: `npm run reliability -- fuzz`');
      expect(text.indexOf('kill9 second')).to.be.lessThan(text.indexOf('soak first'));
      writeFileSync(path, text.replace('## soak first', '## soak edited'));
      writeSection(path, 'shutdown', '## shutdown');
      expect(readFileSync(path, 'utf8')).to.include('## soak edited');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
