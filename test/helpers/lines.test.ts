import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { completeLines } from './lines';

describe('completeLines: the lines of a file still being written', () => {
  let dir: string;
  before(() => (dir = mkdtempSync(join(tmpdir(), 'eddy-lines-'))));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('leaves out the line after the last newline, which the writer has not finished', () => {
    const file = join(dir, 'half.json');
    writeFileSync(file, '{"id":1}\n{"id":2}\n{"id":3,"na');
    expect(completeLines(file)).to.deep.equal(['{"id":1}', '{"id":2}']);
  });

  it('keeps every line, empty ones too, of a file that ends with a newline', () => {
    const file = join(dir, 'whole.json');
    writeFileSync(file, 'a\n\nb\n');
    expect(completeLines(file)).to.deep.equal(['a', '', 'b']);
  });

  it('is empty for a file without a newline, or none at all', () => {
    const file = join(dir, 'first.json');
    writeFileSync(file, '{"id"');
    expect(completeLines(file)).to.deep.equal([]);
    expect(completeLines(join(dir, 'missing.json'))).to.deep.equal([]);
  });
});
