import { expect } from 'chai';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { runEddy } from '../helpers/cli';
import { wrongBatchCase } from '../helpers/cases';
import { ROOT, docBlock } from '../helpers/readme';

const PAGE = 'docs/testing-pipelines.md';
const SECTION = '# Test your pipeline';
const CASES = 'examples/pipelines/errors-by-host.cases.yaml';

describe("docs/testing-pipelines.md", function () {
  this.timeout(30_000);

  it('shows the first case of the example case file as it is', () => {
    const shown = parseYaml(docBlock(PAGE, SECTION, 'yaml')) as { pipeline: string; cases: unknown[] };
    const real = parseYaml(readFileSync(join(ROOT, CASES), 'utf8')) as { pipeline: string; cases: unknown[] };
    expect(shown.pipeline).to.equal(real.pipeline);
    expect(shown.cases).to.deep.equal([real.cases[0]]);
  });

  it('shows the flow case of the example case file as it is', () => {
    const shown = parseYaml(docBlock(PAGE, '## Flow cases', 'yaml')) as unknown[];
    const real = parseYaml(readFileSync(join(ROOT, CASES), 'utf8')) as { cases: { flow?: unknown }[] };
    expect(shown).to.deep.equal(real.cases.filter((c) => c.flow));
  });

  it('its command passes on the example', async () => {
    expect(docBlock(PAGE, SECTION, 'sh').trim()).to.equal(`npx eddy test ${CASES}`);
    const run = await runEddy(['test', join(ROOT, CASES)]);
    expect(run.stdout).to.include('✓ keeps errors only, three to a batch');
    expect(run.code).to.equal(0);
  });

  it('its --require command runs the example operator type under eddy test', async () => {
    const args = docBlock(PAGE, SECTION, 'sh', 1).trim().split(/\s+/);
    expect(args.slice(0, 4)).to.deep.equal(['npx', 'eddy', 'test', '--require']);
    // the block's paths are relative to the repository root, where a user runs it
    const run = await runEddy(args.slice(2).map((a, i) => (i > 0 && !a.startsWith('-') ? join(ROOT, a) : a)));
    expect(run.stdout).to.include('✓ upper-cases the msg field');
    expect(run.code).to.equal(0);
  });

  it('the failure it shows is what eddy test prints for that case', async () => {
    const failure = docBlock(PAGE, SECTION, '');
    const name = /✗ (.+)/.exec(failure)![1];
    const path = join(mkdtempSync(join(tmpdir(), 'eddy-readme-')), 'cases.yaml');
    writeFileSync(path, wrongBatchCase(name));
    const run = await runEddy(['test', path]);
    expect(run.code).to.equal(1);
    const printed = run.stdout.split('\n').map((l) => l.trimEnd());
    for (const line of failure.split('\n').filter((l) => l.trim() !== '')) expect(printed, line).to.include(line);
  });
});
