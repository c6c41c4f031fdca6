import { expect } from 'chai';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfigFiles } from '../../src/config/load';
import { ConfigReloader } from '../../src/config/reload';
import { createLogger } from '../../src/core/logger';
import { Runtime } from '../../src/runtime/runtime';
import { eventually } from '../helpers/runtime';

/**
 * Starting from config files is one activation: a mistake in any mapping
 * of any file is found before a file offramp of another mapping truncates
 * its file, and a reload that would link a port that does not exist
 * changes nothing.
 */
describe('config files: activation is all or nothing', () => {
  let dir: string;
  let runtime: Runtime;
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'eddy-all-or-nothing-'));
    runtime = new Runtime({ logger: createLogger('silent') });
    await runtime.start();
  });
  afterEach(async () => {
    await runtime.shutdown();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A file with one flow `name`: a file onramp reading `input` into `out-<name>.json` (which holds a line already). */
  function flowFile(name: string, options: { outputPort?: string; input?: string } = {}): { path: string; output: string } {
    const input = options.input ?? join(dir, `in-${name}.json`);
    if (options.input === undefined) writeFileSync(input, '{"n":1}\n');
    const output = join(dir, `out-${name}.json`);
    writeFileSync(output, 'precious\n');
    const path = join(dir, `${name}.yaml`);
    writeFileSync(
      path,
      [
        'onramp:',
        `  - {id: ${name}_in, type: file, config: {source: ${JSON.stringify(input)}}}`,
        'offramp:',
        `  - {id: ${name}_out, type: file, config: {file: ${JSON.stringify(output)}}}`,
        'binding:',
        `  - id: ${name}`,
        '    links:',
        `      "/onramp/${name}_in/{instance}/out": ["/pipeline/system::passthrough/{instance}/in"]`,
        `      "/pipeline/system::passthrough/{instance}/${options.outputPort ?? 'out'}": ["/offramp/${name}_out/{instance}/in"]`,
        'mapping:',
        `  /binding/${name}/main: {}`,
      ].join('\n'),
    );
    return { path, output };
  }

  it('a link to a pipeline output that does not exist in the second file leaves the first file’s output untouched', async () => {
    const good = flowFile('good');
    const bad = flowFile('bad', { outputPort: 'dupz' });
    const failure = await loadConfigFiles(runtime, [good.path, bad.path]).then(
      () => undefined,
      (err: unknown) => err as Error,
    );
    expect(failure?.message).to.equal(
      `${bad.path}: mapping '/binding/bad/main': link /pipeline/system::passthrough/main/dupz -> /offramp/bad_out/main/in: pipeline has no output 'dupz' (outputs: out, err)`,
    );
    expect(readFileSync(good.output, 'utf8')).to.equal('precious\n');
    expect(readFileSync(bad.output, 'utf8')).to.equal('precious\n');
    expect(runtime.instancesOf('binding', 'good')).to.deep.equal([]);
  });

  it('an onramp of the second file that cannot open leaves the first file’s output untouched', async () => {
    const good = flowFile('good');
    const bad = flowFile('bad', { input: join(dir, 'no-such-input.json') });
    const failure = await loadConfigFiles(runtime, [good.path, bad.path]).then(
      () => undefined,
      (err: unknown) => err as Error,
    );
    expect(failure?.message).to.match(/onramp 'bad_in' \(file\) cannot start: .*ENOENT/);
    expect(readFileSync(good.output, 'utf8')).to.equal('precious\n');
    expect(readFileSync(bad.output, 'utf8')).to.equal('precious\n');
    expect(runtime.instancesOf('binding', 'good')).to.deep.equal([]);
    expect(runtime.instancesOf('offramp', 'good_out')).to.deep.equal([]);
  });

  it('a reload of an edited flow appends to the file its offramp wrote, which it emptied only when it first opened it', async () => {
    const flow = flowFile('flow');
    const declared = await loadConfigFiles(runtime, [flow.path]);
    await eventually(() => readFileSync(flow.output, 'utf8') === '{"n":1}\n', 5000, 'the first line, in place of what the file held');
    const reloader = new ConfigReloader(runtime, [flow.path], declared, createLogger('silent'));
    // the onramp changes: the mapping stops, drains and starts again; the onramp reads its file from the start
    writeFileSync(flow.path, readFileSync(flow.path, 'utf8').replace('type: file, config: {source', 'type: file, description: edited, config: {source'));
    const result = await reloader.reload();
    expect(result.plan.activate.map((m) => m.key)).to.deep.equal(['/binding/flow/main']);
    await eventually(() => readFileSync(flow.output, 'utf8') === '{"n":1}\n{"n":1}\n', 5000, 'the line of the edited flow after the first');
  });

  it('a reload whose edited binding links a port that does not exist is refused and stops nothing', async () => {
    const flow = flowFile('flow');
    const declared = await loadConfigFiles(runtime, [flow.path]);
    const reloader = new ConfigReloader(runtime, [flow.path], declared, createLogger('silent'));
    writeFileSync(flow.path, readFileSync(flow.path, 'utf8').replace('{instance}/out": ["/offramp', '{instance}/dupz": ["/offramp'));
    const failure = await reloader.reload().then(
      () => undefined,
      (err: unknown) => err as Error,
    );
    expect(failure?.message).to.include("pipeline has no output 'dupz' (outputs: out, err)");
    expect(runtime.instancesOf('binding', 'flow')).to.deep.equal(['main']);
    expect(existsSync(flow.output)).to.equal(true);
  });
});
