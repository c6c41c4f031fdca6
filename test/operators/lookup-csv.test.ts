import { expect } from 'chai';
import fc from 'fast-check';
import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CsvRecordReader, parseCsv } from '../../src/pipeline/lookup/csv';
import { FileTable } from '../../src/pipeline/lookup/file-table';

const DELIMITERS = [',', ';', '\t', '|'];

/** The records of `text` read in the given pieces, with their lines, or the error. */
function records(pieces: string[], delimiter: string): { records: [string[], number][] } | { error: string } {
  const out: [string[], number][] = [];
  try {
    const reader = new CsvRecordReader('f.csv', delimiter, (fields, line) => out.push([fields, line]));
    for (const p of pieces) reader.push(p);
    reader.end();
    return { records: out };
  } catch (err) {
    return { error: (err as Error).message };
  }
}

/** `text` cut at the given places (any of them, in any order). */
function cut(text: string, at: number[]): string[] {
  const points = [...new Set(at.map((n) => n % (text.length + 1)))].sort((a, b) => a - b);
  const pieces: string[] = [];
  let from = 0;
  for (const p of points) {
    pieces.push(text.slice(from, p));
    from = p;
  }
  pieces.push(text.slice(from));
  return pieces;
}

/** A field as RFC 4180 writes it: in quotes (a quote doubled) when it holds the delimiter, a quote or a line break, or is empty. */
function field(value: string, delimiter: string): string {
  return value === '' || /["\r\n]/.test(value) || value.includes(delimiter) ? `"${value.replace(/"/g, '""')}"` : value;
}

describe('enrich::lookup CSV reader (properties)', () => {
  it('reads back any table written as RFC 4180 says, with any delimiter, LF or CRLF, with or without a BOM and a last line break', () => {
    const text = fc.string({ unit: fc.constantFrom('a', 'b', ' ', ',', ';', '\t', '|', '"', '\r', '\n', '\ufeff', 'é', '😀'), maxLength: 6 });
    const table = fc
      .uniqueArray(fc.string({ unit: fc.constantFrom('a', 'b', 'c', 'é'), minLength: 1, maxLength: 3 }), { minLength: 1, maxLength: 4 })
      .chain((header) => fc.tuple(fc.constant(header), fc.array(fc.array(text, { minLength: header.length, maxLength: header.length }), { maxLength: 6 })));
    fc.assert(
      fc.property(table, fc.constantFrom(...DELIMITERS), fc.constantFrom('\n', '\r\n'), fc.boolean(), fc.boolean(), ([header, rows], d, eol, bom, last) => {
        const lines = [header, ...rows].map((r) => r.map((v) => field(v, d)).join(d));
        const csv = (bom ? '\ufeff' : '') + lines.join(eol) + (last ? eol : '');
        const expected = rows.map((r) => Object.fromEntries(header.map((name, i) => [name, r[i]])));
        expect(parseCsv(csv, 'f.csv', d)).to.deep.equal(expected);
      }),
      { numRuns: 1000 },
    );
  });

  it('reads a text without quotes as a naive split does: lines on LF or CRLF (a lone CR is text), empty lines skipped, fields on the delimiter', () => {
    const text = fc.string({ unit: fc.constantFrom('a', 'b', ',', ';', '\t', '|', '\r', '\n', '\r\n', 'é'), maxLength: 40 });
    fc.assert(
      fc.property(text, fc.constantFrom(...DELIMITERS), (t, d) => {
        const naive = t
          .split(/\r\n|\n/)
          .map((line, i): [string[], number] => [line.split(d), i + 1])
          .filter(([fields]) => !(fields.length === 1 && fields[0] === ''));
        expect(records([t], d)).to.deep.equal({ records: naive });
      }),
      { numRuns: 2000 },
    );
  });

  it('reads any text the same, records, lines and errors, however it is cut into pieces', () => {
    const text = fc.string({ unit: fc.constantFrom('a', ',', ';', '"', '""', '\r', '\n', '\r\n', '\ufeff'), maxLength: 40 });
    fc.assert(
      fc.property(text, fc.array(fc.nat(), { maxLength: 8 }), fc.constantFrom(...DELIMITERS), (t, at, d) => {
        expect(records(cut(t, at), d)).to.deep.equal(records([t], d));
      }),
      { numRuns: 3000 },
    );
  });

  describe('through a file read in pieces of a few bytes (a character cut between two pieces)', () => {
    let dir: string;
    before(() => (dir = mkdtempSync(join(tmpdir(), 'eddy-lookup-csv-'))));
    after(() => rmSync(dir, { recursive: true, force: true }));

    it('makes the table a whole-text read makes, at activation and on a reload', async () => {
      const value = fc.string({ unit: fc.constantFrom('a', ',', '"', '\n', 'é', '😀', '€'), maxLength: 5 });
      let n = 0;
      await fc.assert(
        fc.asyncProperty(fc.array(fc.tuple(fc.nat({ max: 20 }), value), { maxLength: 8 }), fc.integer({ min: 1, max: 7 }), async (rows, chunkBytes) => {
          const text = 'k,v\n' + rows.map(([k, v]) => `${k},${field(v, ',')}`).join('\n');
          const file = join(dir, `t${n++}.csv`);
          writeFileSync(file, text);
          const expected = new Map(parseCsv(text, file).map((r) => [r.k, r]));
          expect(new FileTable(file, 'k', { chunkBytes }).rows, 'at activation').to.deep.equal(expected);
          // the same text as a reload: the file replaced by another (a new inode)
          writeFileSync(file, 'k,v\n');
          const table = new FileTable(file, 'k', { chunkBytes });
          writeFileSync(`${file}.next`, text);
          renameSync(`${file}.next`, file);
          expect(await table.refresh()).to.include({ kind: 'loaded', rows: expected.size });
          expect(table.rows, 'reloaded').to.deep.equal(expected);
        }),
        { numRuns: 300 },
      );
    });
  });
});
