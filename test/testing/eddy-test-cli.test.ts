import { expect } from 'chai';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runEddy } from '../helpers/cli';
import { ERRORS_BY_HOST, wrongBatchCase } from '../helpers/cases';

const EXAMPLE = join(__dirname, '../../../examples/pipelines/errors-by-host.cases.yaml');
const PIPELINE = ERRORS_BY_HOST;

function caseFile(text: string): string {
  const path = join(mkdtempSync(join(tmpdir(), 'eddy-test-')), 'cases.yaml');
  writeFileSync(path, text);
  return path;
}

const WRONG_BATCH = wrongBatchCase();
const UPPERCASE_CASES = join(__dirname, '../../../test/fixtures/testing/uppercase.cases.yaml');
const CUSTOM_OPERATOR = join(__dirname, '../../examples/custom-operator.js');

describe('eddy test (the command)', () => {
  it('runs a case file and exits 0 when every case passes', async () => {
    const run = await runEddy(['test', EXAMPLE]);
    expect(run.stderr).to.equal('');
    expect(run.stdout).to.include('✓ keeps errors only, three to a batch');
    expect(run.stdout).to.include('4 passing, 0 failing');
    expect(run.code).to.equal(0);
  });

  it('on a failing case prints both diagrams aligned, the first differing notification and the value difference, and exits 1', async () => {
    const run = await runEddy(['test', caseFile(WRONG_BATCH)]);
    expect(run.code).to.equal(1);
    const lines = run.stdout.split('\n').map((l) => l.trim());
    expect(lines).to.include('✗ expects batches of two');
    expect(lines).to.include('expected: ---x----|');
    expect(lines).to.include('actual:   -----1--|');
    expect(run.stdout).to.match(
      /1 = \{"batch":\[\{"level":"error","host":"h","msg":"one"\},\{"level":"error","host":"h","msg":"two"\},\{"level":"error","host":"h","msg":"three"\}\]\}/,
    );
    expect(run.stdout).to.include("first difference, notification 1: expected 'x' at frame 3");
    expect(run.stdout).to.include('value .batch[2]: not expected, got {"level":"error","host":"h","msg":"three"}');
    expect(run.stdout).to.include('0 passing, 1 failing');
  });

  it('--reporter json prints counts and each failure for CI', async () => {
    const run = await runEddy(['test', '--reporter', 'json', EXAMPLE, caseFile(WRONG_BATCH)]);
    expect(run.code).to.equal(1);
    const report = JSON.parse(run.stdout);
    expect(report.passed).to.equal(4);
    expect(report.failed).to.equal(1);
    expect(report.files[1].cases[0].failures[0].port).to.equal('out');
    expect(report.files[1].cases[0].failures[0].report).to.include('expected: ---x----|');
  });

  it('a case file with an unknown field fails naming the file and the field', async () => {
    const path = caseFile(`pipeline: ${JSON.stringify(PIPELINE)}\ncases:\n  - name: x\n    in: { in: "a|" }\n    out: { out: "-|" }\n    ouput: {}\n`);
    const run = await runEddy(['test', path]);
    expect(run.code).to.equal(1);
    expect(run.stdout).to.include(`${path}: case 'x': cases[0]: unknown field 'ouput'`);
  });

  it('a malformed case fails alone: the cases before and after it run and report, the exit status is 1', async () => {
    const ok = (name: string) => `  - name: ${name}\n    values: { a: { level: info, host: h } }\n    in: { in: "a|" }\n    out: { out: "-|" }\n`;
    const path = caseFile(
      `pipeline: ${JSON.stringify(PIPELINE)}\ncases:\n${ok('first')}  - name: misspelt\n    in: { in: "a|" }\n    out: { out: "-|" }\n    ouput: {}\n` +
        `  - values: { a: 1 }\n    in: { in: "a|" }\n    out: 7\n${ok('last')}`,
    );
    const run = await runEddy(['test', path]);
    expect(run.code).to.equal(1);
    const lines = run.stdout.split('\n').map((l) => l.trim());
    expect(lines).to.include.ordered.members([
      path,
      '✓ first',
      '✗ misspelt',
      `error: ${path}: case 'misspelt': cases[1]: unknown field 'ouput'`,
      '✗ cases[2]',
      `error: ${path}: cases[2]: missing required field 'name'`,
    ]);
    expect(lines).to.include('✓ last');
    expect(lines).to.include('2 passing, 2 failing');
    const json = JSON.parse((await runEddy(['test', '--reporter', 'json', path])).stdout);
    expect(json.files[0].cases.map((c: { name: string; passed: boolean }) => [c.name, c.passed])).to.deep.equal([
      ['first', true],
      ['misspelt', false],
      ['cases[2]', false],
      ['last', true],
    ]);
    expect(json.files[0].cases[1].error).to.equal(`${path}: case 'misspelt': cases[1]: unknown field 'ouput'`);
  });

  it('a marble letter without a value fails the case naming the port and the letter', async () => {
    const path = caseFile(
      `pipeline: ${JSON.stringify(PIPELINE)}\ncases:\n  - name: typo\n    values: { a: 1 }\n    in: { in: "a-q|" }\n    out: { out: "---|" }\n`,
    );
    const run = await runEddy(['test', path]);
    expect(run.code).to.equal(1);
    expect(run.stdout).to.include("error: in.in: no value for 'q' (letters: a)");
  });

  it("--require MODULE registers an application's own operator types (its register(registries)) for the cases", async () => {
    const run = await runEddy(['test', '--require', CUSTOM_OPERATOR, UPPERCASE_CASES]);
    expect(run.stderr).to.equal('');
    expect(run.stdout).to.include('✓ upper-cases the msg field');
    expect(run.code).to.equal(0);
  });

  it('without --require the unknown operator type fails the file, naming it', async () => {
    const run = await runEddy(['test', UPPERCASE_CASES]);
    expect(run.stdout).to.match(/example::uppercase/);
    expect(run.code).to.equal(1);
  });

  it('a --require module that cannot be loaded or has no register function exits 1 naming it', async () => {
    const missing = await runEddy(['test', '--require', './no/such/module.js', UPPERCASE_CASES]);
    expect(missing.stderr).to.match(/^error: --require \.\/no\/such\/module\.js: cannot load it: /);
    expect(missing.code).to.equal(1);
    const noRegister = await runEddy(['test', '--require', join(__dirname, '../helpers/cli.js'), UPPERCASE_CASES]);
    expect(noRegister.stderr).to.match(/--require .*cli\.js: it exports no register\(registries\) function/);
    expect(noRegister.code).to.equal(1);
  });

  it('bad usage exits 2 with the usage line', async () => {
    const run = await runEddy(['test', '--reporter', 'tap', EXAMPLE]);
    expect(run.code).to.equal(2);
    expect(run.stderr).to.include("--reporter: 'tap' is not a reporter (spec, json)");
    expect(run.stderr).to.include('usage: eddy test');
  });
});
