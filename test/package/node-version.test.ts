import { expect } from 'chai';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { DEVELOPED_ON_MAJOR, MIN_NODE_MAJOR, unsupportedNode } from '../../src/cli-entry';
import { EDDY } from '../helpers/cli';

const ROOT = join(__dirname, '../../..');
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  engines: { node: string };
  devDependencies: Record<string, string>;
};

const majorOf = (version: string) => Number(version.replace(/^v/, '').split('.')[0]);

/** A `node` on PATH outside node_modules/.bin older than eddy supports (the machine's own Node 20 here), if any. */
function olderSystemNode(): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    const node = join(dir, 'node');
    if (dir.includes('node_modules') || !existsSync(node)) continue;
    const version = execFileSync(node, ['--version'], { encoding: 'utf8' }).trim();
    if (majorOf(version) < MIN_NODE_MAJOR) return node;
  }
  return undefined;
}

describe('the supported Node.js', () => {
  it('the suite runs on it: the node package of the devDependencies, not an older system Node', () => {
    expect(majorOf(process.versions.node)).to.be.at.least(MIN_NODE_MAJOR);
    expect(majorOf(process.versions.node)).to.equal(DEVELOPED_ON_MAJOR);
    // what a child process of a test or a script started as `node` gets
    expect(majorOf(execFileSync('node', ['--version'], { encoding: 'utf8' }))).to.equal(DEVELOPED_ON_MAJOR);
  });

  it("package.json's engines and the node devDependency say what the CLI checks", () => {
    expect(pkg.engines.node).to.equal(`>=${MIN_NODE_MAJOR}`);
    expect(majorOf(pkg.devDependencies.node.replace(/^\^/, ''))).to.equal(DEVELOPED_ON_MAJOR);
  });

  it('an older Node is named with the version needed and how to get it; a supported one passes', () => {
    const message = unsupportedNode('20.20.2', '/usr/bin/node');
    expect(message).to.include('eddy needs Node.js 24 or newer; this is Node.js 20.20.2 (/usr/bin/node)');
    expect(message).to.include('npx -y node@26');
    expect(unsupportedNode('23.11.0', '/x')).to.be.a('string');
    expect(unsupportedNode('24.0.0', '/x')).to.equal(undefined);
    expect(unsupportedNode('26.10.0', '/x')).to.equal(undefined);
  });

  it('eddy started on an older Node exits at once with that message, before loading anything else', function () {
    const node = olderSystemNode();
    // every machine this project is built on has Node 20 as its system Node; elsewhere there is nothing older to start
    if (node === undefined) this.skip();
    const run = spawnSync(node, [EDDY, 'server', 'run', '--no-api'], { encoding: 'utf8', timeout: 15_000 });
    expect(run.status).to.equal(1);
    expect(run.stdout).to.equal('');
    expect(run.stderr).to.match(/^eddy needs Node\.js 24 or newer; this is Node\.js 2[0-3]\./);
    expect(run.stderr.split('\n').filter(Boolean)).to.have.length(3);
  });
});
