import { expect } from 'chai';
import { parse } from 'yaml';
import { excerpt, yamlErrorMessage } from '../../src/core/yaml-error';

function messageOf(text: string): string {
  try {
    parse(text);
  } catch (err) {
    return yamlErrorMessage(err, text);
  }
  throw new Error(`parsed: ${text}`);
}

describe('YAML syntax errors show the offending line with a caret', () => {
  it('the reason and position, the line before, the line, and a caret under the column', () => {
    expect(messageOf('id: p\nconfig: interval: 10\n')).to.equal(
      ['Nested mappings are not allowed in compact mappings at line 2, column 9:', '  1 | id: p', '  2 | config: interval: 10', '    |         ^'].join('\n'),
    );
  });

  it('on the first line, that line alone', () => {
    expect(messageOf('a: b: c\n')).to.equal(
      ['Nested mappings are not allowed in compact mappings at line 1, column 4:', '  1 | a: b: c', '    |    ^'].join('\n'),
    );
  });

  it('at the end of the document: the last line above the empty one the caret is on', () => {
    const message = messageOf('a: [1, 2\n');
    expect(message.split('\n').slice(1)).to.deep.equal(['  1 | a: [1, 2', '  2 |', '    | ^']);
  });

  it('a tab before the column is kept in the caret line, so the caret lines up', () => {
    expect(excerpt('x\n\tkey: a: b', 2, 7)).to.equal(['  1 | x', '  2 | \tkey: a: b', '    | \t     ^'].join('\n'));
  });

  it('a long line is shown around the column, cut at both ends', () => {
    const line = `${'a'.repeat(200)}X${'b'.repeat(200)}`;
    const [, at, caret] = excerpt(`x\n${line}`, 2, 201).split('\n');
    expect(at).to.equal(`  2 | …${'a'.repeat(40)}X${'b'.repeat(39)}…`);
    expect(caret.indexOf('^')).to.equal(at.indexOf('X'));
  });

  it('line numbers of different widths line up', () => {
    const text = `${[1, 2, 3, 4, 5, 6, 7, 8, 9].map((i) => `k${i}: v\n`).join('')}a: b: c\n`;
    expect(messageOf(text).split('\n').slice(1)).to.deep.equal(['   9 | k9: v', '  10 | a: b: c', '     |    ^']);
  });

  it('an error without a position keeps its first line', () => {
    expect(yamlErrorMessage(new Error('something broke\nmore'), 'x')).to.equal('something broke');
  });
});
