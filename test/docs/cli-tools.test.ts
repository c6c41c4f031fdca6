import { expect } from 'chai';
import Ajv from 'ajv';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { readConfigFile } from '../../src/config/load';
import { SECTIONS } from '../../src/config/declared';
import { configFileSchema, pipelineFileSchema } from '../../src/config/file-schema';
import { skeleton } from '../../src/config/skeleton';
import { createLogger } from '../../src/core/logger';
import { Registries } from '../../src/runtime/registries';
import { Runtime } from '../../src/runtime/runtime';
import { EDDY } from '../helpers/cli';
import { docBlock } from '../helpers/readme';

const COMMAND_LINE = 'docs/command-line.md';

interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

/** A line of a doc's sh block, run by sh in `cwd` with `npx eddy` as this build's bin/eddy. */
function sh(line: string, cwd: string): Promise<Ran> {
  const here = line.replace(/^npx eddy /, `'${process.execPath}' '${EDDY}' `);
  return new Promise((resolve) =>
    execFile('sh', ['-c', here], { cwd, timeout: 30_000 }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? -1) : 0, stdout, stderr }),
    ),
  );
}

/** The lines of the nth sh block under `heading`. */
const lines = (file: string, heading: string, nth = 0) =>
  docBlock(file, heading, 'sh', nth)
    .split('\n')
    .filter((l) => l.trim() !== '');

describe('the command blocks of eddy list, new, schema and cel in the docs', function () {
  this.timeout(60_000);
  const registries = Registries.withBuiltins();
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'eddy-cli-tools-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("command-line.md's eddy list: the operators, and JSON of the onramps and offramps", async () => {
    const [operators, json] = lines(COMMAND_LINE, '## eddy list');
    const listed = await sh(operators, dir);
    expect(listed).to.deep.include({ code: 0, stderr: '' });
    expect(listed.stdout).to.match(/^operators:\n/);
    expect(listed.stdout).to.match(/^ {2}runtime::cel {2,}Filters/m);
    const types = JSON.parse((await sh(json, dir)).stdout) as { kind: string }[];
    expect(new Set(types.map((t) => t.kind))).to.deep.equal(new Set(['onramp', 'offramp']));
  });

  it("command-line.md's eddy new: writes the file shown, which publishes once its interval is filled in", async () => {
    const [ticks, aggregate] = lines(COMMAND_LINE, '## eddy new');
    expect(await sh(ticks, dir)).to.deep.include({ code: 0, stderr: '' });
    const written = readFileSync(join(dir, 'ticks.yaml'), 'utf8');
    expect(written).to.equal(docBlock(COMMAND_LINE, '## eddy new', 'yaml'));
    const runtime = new Runtime({ logger: createLogger('silent') });
    const path = join(dir, 'ticks.yaml');
    const [onramp] = (await readConfigFile(path)).onramp!;
    expect(() => runtime.publish('onramp', onramp)).to.throw(/config\.interval: null is not a duration/);
    writeFileSync(path, written.replace('interval: null', 'interval: 1000'));
    runtime.publish('onramp', ((await readConfigFile(path)).onramp!)[0]);
    expect(runtime.list('onramp')).to.deep.equal(['ticks']);
    expect((await sh(aggregate, dir)).stdout).to.equal(skeleton(registries, 'operator', 'window::aggregate'));
  });

  it("command-line.md's eddy schema: writes both schemas", async () => {
    for (const line of lines(COMMAND_LINE, '## eddy schema')) expect(await sh(line, dir), line).to.deep.include({ code: 0, stderr: '' });
    expect(JSON.parse(readFileSync(join(dir, 'eddy.schema.json'), 'utf8'))).to.deep.equal(configFileSchema(registries));
    expect(JSON.parse(readFileSync(join(dir, 'eddy-pipeline.schema.json'), 'utf8'))).to.deep.equal(pipelineFileSchema(registries));
  });

  it("command-line.md's eddy cel: each result and engine as shown; the syntax error as shown, exit 1", async () => {
    let printed = '';
    for (const line of lines(COMMAND_LINE, '## eddy cel')) {
      const ran = await sh(line, dir);
      expect(ran.code, line).to.equal(0);
      printed += ran.stdout + ran.stderr;
    }
    expect(printed).to.equal(docBlock(COMMAND_LINE, '## eddy cel', '', 1));
    const [bad] = lines(COMMAND_LINE, '## eddy cel', 1);
    expect(await sh(bad, dir)).to.deep.equal({ code: 1, stdout: '', stderr: docBlock(COMMAND_LINE, '## eddy cel', '', 2) });
  });

  it("config-files.md's editor setup: the schema it writes is the one the settings and the file's first line name, and takes the file", async () => {
    const heading = '## Editors: completion and checks';
    for (const line of lines('docs/config-files.md', heading)) expect(await sh(line, dir), line).to.deep.include({ code: 0, stderr: '' });
    const settings = JSON.parse(docBlock('docs/config-files.md', heading, 'json')) as Record<string, Record<string, string[]>>;
    expect(Object.keys(settings['yaml.schemas'])).to.deep.equal(['./eddy.schema.json']);
    const text = docBlock('docs/config-files.md', heading, 'yaml');
    const named = /^# yaml-language-server: \$schema=(\S+)$/m.exec(text)![1];
    const schema = JSON.parse(readFileSync(join(dir, named), 'utf8')) as Record<string, unknown>;
    const validate = new Ajv({ strict: false, allErrors: true }).compile(schema);
    expect(validate(parseYaml(text)), JSON.stringify(validate.errors)).to.equal(true);
    // and eddy takes it as the editor does
    const path = join(dir, 'flows.yaml');
    writeFileSync(path, text);
    const config = await readConfigFile(path);
    const runtime = new Runtime({ logger: createLogger('silent') });
    await runtime.start();
    try {
      for (const kind of SECTIONS) for (const artefact of config[kind] ?? []) runtime.publish(kind, artefact);
    } finally {
      await runtime.shutdown();
    }
  });
});
