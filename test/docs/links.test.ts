import { expect } from 'chai';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { Registries } from '../../src/runtime/registries';
import { ROOT } from '../helpers/readme';

/** Every Markdown file of the docs: README.md, docs/**, and the READMEs of examples/ and bench/. */
function markdownFiles(): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(join(ROOT, dir)).flatMap((name) => {
      const path = join(dir, name);
      return statSync(join(ROOT, path)).isDirectory() ? walk(path) : name.endsWith('.md') ? [path] : [];
    });
  return ['README.md', 'examples/README.md', 'bench/README.md', ...walk('docs')];
}

/** The link targets of a Markdown text, outside fenced blocks and inline code: `[text](target)` and `![alt](target)`. */
export function linkTargets(text: string): string[] {
  const targets: string[] = [];
  let fenced = false;
  for (const line of text.split('\n')) {
    if (/^\s*```/.test(line)) fenced = !fenced;
    if (fenced) continue;
    const prose = line.replace(/`[^`]*`/g, '');
    for (const match of prose.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) targets.push(match[1]);
  }
  return targets;
}

/** The relative targets of `file` (a path from the root) that name no existing file or directory. */
function brokenLinks(file: string): string[] {
  return linkTargets(readFileSync(join(ROOT, file), 'utf8'))
    .filter((target) => !/^[a-z][a-z+.-]*:/i.test(target) && !target.startsWith('#'))
    .filter((target) => !existsSync(join(ROOT, dirname(file), decodeURI(target.split('#')[0]))));
}

describe('the docs: README.md is the door, docs/ the house', () => {
  it('README.md is at most 250 lines', () => {
    const lines = readFileSync(join(ROOT, 'README.md'), 'utf8').split('\n').length - 1;
    expect(lines, 'README.md lines').to.be.at.most(250);
  });

  it('finds links outside code, and only there', () => {
    const text = 'See [a](a.md) and ![b](img/b.png "title") and `[c](c.md)`.\n```\n[d](d.md)\n```\n[e](https://x/) [f](#g)\n';
    expect(linkTargets(text)).to.deep.equal(['a.md', 'img/b.png', 'https://x/', '#g']);
  });

  it('every relative link in README.md, docs/, examples/README.md and bench/README.md points at a file that exists', () => {
    const files = markdownFiles();
    expect(files).to.include.members(['docs/README.md', 'docs/development.md', 'docs/connectors/README.md']);
    const broken = files.flatMap((file) => brokenLinks(file).map((target) => `${file}: ${target}`));
    expect(broken).to.deep.equal([]);
  });

  it('examples/README.md links every example file', () => {
    const index = new Set(linkTargets(readFileSync(join(ROOT, 'examples/README.md'), 'utf8')).map((t) => t.split('#')[0]));
    const files = ['examples', 'examples/pipelines'].flatMap((dir) =>
      readdirSync(join(ROOT, dir))
        .filter((name) => statSync(join(ROOT, dir, name)).isFile() && name !== 'README.md')
        .map((name) => relative('examples', join(dir, name))),
    );
    expect(files.filter((f) => f.endsWith('.yaml'))).to.not.be.empty;
    expect(files.filter((f) => !index.has(f)), 'example files examples/README.md does not list').to.deep.equal([]);
  });

  it("README.md's 'What is built' names every builtin onramp and offramp type, and nothing else", () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const listed = (label: string) =>
      new RegExp(`- \\*\\*${label}\\*\\*: ([^*]+?)\\.\\n(?:- |\\n)`).exec(readme)![1].split(',').map((n) => n.trim()).sort();
    const registries = Registries.withBuiltins();
    expect(listed('Onramps')).to.deep.equal([...registries.onramps.names()].sort());
    expect(listed('Offramps')).to.deep.equal([...registries.offramps.names()].sort());
  });
});
