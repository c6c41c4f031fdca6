import { expect } from 'chai';
import { readFileSync, readdirSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { runEddy } from '../helpers/cli';

const EXAMPLES = join(__dirname, '../../../examples');

/** Every YAML file in examples/ (and examples/pipelines/) that holds pipelines, with their ids. */
function examplePipelines(): { file: string; ids: string[] }[] {
  const found: { file: string; ids: string[] }[] = [];
  for (const dir of [EXAMPLES, join(EXAMPLES, 'pipelines')]) {
    for (const name of readdirSync(dir).filter((f) => f.endsWith('.yaml') && !f.endsWith('.cases.yaml'))) {
      const doc = parseYaml(readFileSync(join(dir, name), 'utf8')) as { pipeline?: { id: string }[]; nodes?: unknown; id?: string };
      const ids = doc.pipeline ? doc.pipeline.map((p) => p.id) : doc.nodes ? [doc.id!] : [];
      if (ids.length > 0) found.push({ file: join(dir, name), ids });
    }
  }
  return found;
}

const casesOf = (file: string) => file.replace(/\.yaml$/, '.cases.yaml');

describe('the case files of the examples', function () {
  this.timeout(60_000);

  it('every pipeline in examples/ has a case file beside it with a case for it', () => {
    const pipelines = examplePipelines();
    expect(pipelines.length).to.be.greaterThan(5);
    for (const { file, ids } of pipelines) {
      expect(existsSync(casesOf(file)), casesOf(file)).to.equal(true);
      const cases = parseYaml(readFileSync(casesOf(file), 'utf8')) as { id?: string; cases: { id?: string }[] };
      const tested = new Set(cases.cases.map((c) => c.id ?? cases.id ?? ids[0]));
      for (const id of ids) expect([...tested], `${casesOf(file)} tests pipeline '${id}'`).to.include(id);
    }
  });

  it('eddy test passes on all of them', async () => {
    const files = examplePipelines().map(({ file }) => casesOf(file));
    const run = await runEddy(['test', ...files], { timeoutMs: 50_000 });
    expect(run.stdout).to.match(/\n\d+ passing, 0 failing\n$/);
    expect(run.code, run.stdout).to.equal(0);
  });
});
