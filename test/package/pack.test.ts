import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OPTIONAL_PACKAGES } from '../../src/core/packages';
import { FirstEventProbe } from '../helpers/first-event';
import { ROOT, docBlock } from '../helpers/readme';

/** The two compilers the public types are checked with: devDependencies, npm aliases of `typescript`. */
const COMPILERS = ['typescript-latest', 'typescript-5'].map((alias) => {
  const dir = join(ROOT, 'node_modules', alias);
  return { alias, dir, version: (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version: string }).version };
});

function run(command: string, args: string[], cwd: string, timeout = 240_000): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) =>
    execFile(command, args, { cwd, timeout, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) =>
      err ? reject(new Error(`${command} ${args.join(' ')} (in ${cwd}): ${err.message}\n${stdout}\n${stderr}`)) : resolve({ stdout, stderr }),
    ),
  );
}

/**
 * How each compiler compiles the app: the tsconfig docs/embedding.md shows, which lists no `types` (TypeScript 6+
 * then includes no @types package: eddy's entry points must load Node's types themselves), and variants an app may
 * have. TypeScript 7 has no `node10`; on 5.x `types: []` stands for 6+'s default.
 */
const VARIANTS: { alias: string; name: string; options: Record<string, unknown> }[] = [
  { alias: 'typescript-latest', name: 'the tsconfig of docs/embedding.md (no types listed)', options: {} },
  {
    alias: 'typescript-latest',
    name: 'commonjs, moduleResolution bundler, types [node]',
    options: { module: 'commonjs', moduleResolution: 'bundler', types: ['node'] },
  },
  { alias: 'typescript-5', name: 'module node16, types [] (no @types included)', options: { module: 'node16', types: [] } },
  {
    alias: 'typescript-5',
    name: 'commonjs, moduleResolution node10, types [node]',
    options: { module: 'commonjs', moduleResolution: 'node10', types: ['node'], esModuleInterop: true },
  },
];

/** Names from both entry points, types included: each must resolve (the compile checks every .d.ts it reaches). */
const PUBLIC_API = `import { Runtime, pipelineOperator, pipelinePorts, event, type EddyEvent, type Artefact, type OperatorType, type OnrampType, type OfframpType, type CodecType, type RuntimeOptions } from 'eddy';
import { expectPipeline, testPipeline, runCaseFile, type PipelineCase, type CaseResult, type RunOptions } from 'eddy/testing';
export type Used = [EddyEvent, Artefact, OperatorType, OnrampType, OfframpType, CodecType, RuntimeOptions, PipelineCase, CaseResult, RunOptions];
export const used = [Runtime, pipelineOperator, pipelinePorts, event, expectPipeline, testPipeline, runCaseFile];
`;

/** One artefact of each type that needs an optional package, and the package (config {}: the package is looked for first). */
const NEEDING: [kind: string, body: object, pkg: string][] = [
  ['onramp', { id: 'k', type: 'kafka', config: {} }, '@platformatic/kafka'],
  ['offramp', { id: 'k', type: 'kafka', config: {} }, '@platformatic/kafka'],
  ['onramp', { id: 'p', type: 'postgres', config: {} }, 'pg'],
  ['offramp', { id: 'p', type: 'postgres', config: {} }, 'pg'],
  ['onramp', { id: 'a', type: 'amqp', config: {} }, 'amqplib'],
  ['offramp', { id: 'a', type: 'amqp', config: {} }, 'amqplib'],
  ['onramp', { id: 'n', type: 'nats', config: {} }, '@nats-io/transport-node'],
  ['offramp', { id: 'n', type: 'nats', config: {} }, '@nats-io/transport-node'],
  ['onramp', { id: 'o', type: 'otel', config: {} }, '@grpc/grpc-js'],
  ['offramp', { id: 'o', type: 'otel', config: {} }, '@grpc/grpc-js'],
  ['onramp', { id: 'g', type: 'pubsub', config: {} }, '@google-cloud/pubsub'],
  ['onramp', { id: 'c', type: 'chat', config: {} }, 'discord.js'],
  ['onramp', { id: 'c', type: 'crononome', config: {} }, 'cron-parser'],
  ['offramp', { id: 'e', type: 'elastic', config: {} }, '@elastic/elasticsearch'],
  ['offramp', { id: 'v', type: 'kv', config: {} }, 'level'],
  ['onramp', { id: 'x', type: 'stdin', preprocessors: ['xz2'] }, '@napi-rs/lzma'],
  ['onramp', { id: 's', type: 'stdin', preprocessors: ['snappy'] }, 'snappy'],
  ['offramp', { id: 'l', type: 'stdout', postprocessors: ['lz4'] }, 'lz4-napi'],
  [
    'pipeline',
    {
      id: 'w',
      interface: { inputs: ['in'], outputs: ['out'] },
      nodes: [{ id: 'log', type: 'qos::wal', config: { read_count: 20, max_elements: 10 } }],
      links: { in: ['log'], log: ['out'] },
    },
    'level',
  ],
];

const GETTING = '## Getting the package';
const CLIENTS = '## The clients';
const EVERY = '## The server with every connector';

/** A documented command without its trailing `# comment`, split into words. */
const words = (block: string) => block.replace(/#.*$/m, '').trim().split(/\s+/);

/** The tarball the docs name (`./eddy-0.1.0.tgz`): eddy is not on the registry yet (a 404), so every install names the file. */
const DOCUMENTED_TARBALL = /\.\/(eddy-\d+\.\d+\.\d+\.tgz)/.exec(docBlock('docs/install.md', CLIENTS, 'sh'))?.[1];

/** Runs PUBLISH_SCRIPT from `dir` (where `require('eddy')` finds the eddy under test) on NEEDING: the answers. */
async function publishNeeding(dir: string): Promise<[number, { error: string }][]> {
  writeFileSync(join(dir, 'publish.js'), PUBLISH_SCRIPT);
  const { stdout } = await run(process.execPath, ['publish.js', JSON.stringify(NEEDING.map(([kind, body]) => [kind, body]))], dir);
  return JSON.parse(stdout) as [number, { error: string }][];
}

/** Publishes each [kind, body] of argv[2] through the REST API of an embedded runtime; prints [status, body] of each. */
const PUBLISH_SCRIPT = `const { Runtime, serveApi } = require('eddy');
(async () => {
  const runtime = await new Runtime().start();
  const server = await serveApi(runtime, { port: 0 });
  const answers = [];
  for (const [kind, body] of JSON.parse(process.argv[2])) {
    const res = await fetch('http://127.0.0.1:' + server.address().port + '/' + kind, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    answers.push([res.status, await res.json()]);
  }
  console.log(JSON.stringify(answers));
  server.close();
  await runtime.shutdown();
})();
`;

describe('the package, installed into an empty project', function () {
  this.timeout(300_000);
  let work: string;
  let app: string;
  let files: string[];
  let tarball: string;

  before(async () => {
    work = mkdtempSync(join(tmpdir(), 'eddy-pack-'));
    // docs/install.md's `npm pack`, as written; dist/ is built by `npm test`'s pretest, so --ignore-scripts skips the
    // build prepack would run again, and the file goes to the test's directory rather than the clone
    const pack = words(docBlock('docs/install.md', GETTING, 'sh'));
    expect(pack).to.deep.equal(['npm', 'pack']);
    const packed = JSON.parse((await run(pack[0], [...pack.slice(1), '--ignore-scripts', '--json', '--pack-destination', work], ROOT)).stdout) as [
      { filename: string; files: { path: string }[] },
    ];
    files = packed[0].files.map((f) => f.path);
    tarball = join(work, packed[0].filename);
    app = join(work, 'app');
    mkdirSync(join(app, 'src'), { recursive: true });
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', version: '1.0.0', private: true }));
    // the compilers are the project's own (COMPILERS), not installed into the app: tsc reads the app's node_modules
    await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', join(work, packed[0].filename), 'rxjs'], app);
  });

  after(() => rmSync(work, { recursive: true, force: true }));

  it('holds what a user needs and nothing else: dist/src (js and d.ts), the bin, the web console, the README', () => {
    for (const needed of [
      'package.json',
      'README.md',
      'bin/eddy',
      'dist/src/index.js',
      'dist/src/index.d.ts',
      'dist/src/testing/index.js',
      'dist/src/testing/index.d.ts',
      'dist/src/cli.js',
      'dist/src/cli.bundle.js',
      'dist/src/cli.bundle.js.cache',
      'ui/index.html',
      'ui/js/main.js',
    ]) {
      expect(files, needed).to.include(needed);
    }
    const stray = files.filter(
      (f) => !/^(package\.json|README\.md|bin\/eddy|dist\/src\/.*\.(js|d\.ts)|dist\/src\/cli\.bundle\.js\.cache|ui\/[\w/.-]+\.(html|css|js))$/.test(f),
    );
    expect(stray).to.deep.equal([]);
  });

  it("brings Node's types for the lowest Node of engines", () => {
    const eddy = JSON.parse(readFileSync(join(app, 'node_modules/eddy/package.json'), 'utf8')) as { engines: { node: string } };
    const lowest = /^>=\s*(\d+)/.exec(eddy.engines.node)?.[1];
    const types = JSON.parse(readFileSync(join(app, 'node_modules/@types/node/package.json'), 'utf8')) as { version: string };
    expect(types.version.split('.')[0], `@types/node ${types.version} for engines ${eddy.engines.node}`).to.equal(lowest);
  });

  for (const variant of VARIANTS) {
    const compiler = COMPILERS.find((c) => c.alias === variant.alias)!;
    it(`docs/embedding.md's program compiles with TypeScript ${compiler.version}, strict, skipLibCheck false, ${variant.name}, and runs`, async () => {
      const documented = JSON.parse(docBlock('docs/embedding.md', '## Types', 'json')) as { compilerOptions: Record<string, unknown>; include: string[] };
      expect(documented.compilerOptions).to.include({ strict: true, skipLibCheck: false });
      expect(documented.compilerOptions).not.to.have.property('types');
      const compilerOptions = { ...documented.compilerOptions, ...variant.options };
      writeFileSync(join(app, 'tsconfig.json'), JSON.stringify({ ...documented, compilerOptions }));
      writeFileSync(join(app, 'src/main.ts'), docBlock('docs/embedding.md', '# Embed eddy in your app', 'ts'));
      // the testing entry point's snippet in docs/testing-pipelines.md, with a minimal `it`
      const testing = docBlock('docs/testing-pipelines.md', '# Test your pipeline', 'ts');
      writeFileSync(join(app, 'src/case.ts'), `${testing}\nfunction it(name: string, body: () => void): void {\n  body();\n  console.log('ok', name);\n}\n`);
      writeFileSync(join(app, 'src/api.ts'), PUBLIC_API);
      rmSync(join(app, 'out'), { recursive: true, force: true });
      await run(process.execPath, [join(compiler.dir, 'bin/tsc'), '-p', '.'], app);
      const main = await run(process.execPath, [join(app, 'out/main.js')], app);
      expect(main.stdout.trim().split('\n')).to.deep.equal(['[{"level":"error","msg":"disk full"}]', '{"level":"error","msg":"out of memory"}']);
      // the case names a pipeline file of eddy's examples, relative to the working directory
      const cased = await run(process.execPath, [join(app, 'out/case.js')], ROOT);
      expect(cased.stdout.trim()).to.equal('ok drops what is not an error');
    });
  }

  it('installs none of the optional packages, and its node_modules stay within 40 MB (issue 26)', async () => {
    expect(Object.keys(OPTIONAL_PACKAGES).filter((name) => existsSync(join(app, 'node_modules', name)))).to.deep.equal([]);
    // the sum of the files' sizes, as npm and packagephobia count an install (disk usage adds each file's last block)
    const { stdout } = await run('du', ['-s', '--apparent-size', '--block-size=1', 'node_modules'], app);
    const bytes = Number(stdout.split('\t')[0]);
    expect(bytes, `${(bytes / 1e6).toFixed(1)} MB`).to.be.at.most(40e6);
  });

  it('without its package, each type that needs one is a 400 at publish naming the package and the command', async () => {
    const answers = await publishNeeding(app);
    answers.forEach(([status, body], i) => {
      const [kind, artefact, pkg] = NEEDING[i];
      const what = `${kind} ${JSON.stringify(artefact).slice(0, 80)}`;
      expect(status, what).to.equal(400);
      expect(body.error, what).to.include(
        `needs the npm package '${pkg}', which is not installed: run \`npm install ${pkg}@${(OPTIONAL_PACKAGES as Record<string, string>)[pkg]}`,
      );
    });
    // the field and type of a connector, what the operator asked for, as docs/install.md shows it
    expect(answers[0][1]).to.deep.equal(JSON.parse(docBlock('docs/install.md', CLIENTS, 'json')));
  });

  it("an app with its own @types/node of a newer major compiles with that copy alone (TypeScript looks in the app's @types first)", async () => {
    const latest = COMPILERS.find((c) => c.alias === 'typescript-latest')!;
    await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--save-dev', '@types/node@26'], app);
    // two copies on disk: the app's 26 at the top, eddy's ^24 under eddy
    const major = (dir: string) => (JSON.parse(readFileSync(join(dir, '@types/node/package.json'), 'utf8')) as { version: string }).version.split('.')[0];
    expect([major(join(app, 'node_modules')), major(join(app, 'node_modules/eddy/node_modules'))]).to.deep.equal(['26', '24']);
    writeFileSync(join(app, 'tsconfig.json'), docBlock('docs/embedding.md', '## Types', 'json'));
    const { stdout } = await run(process.execPath, [join(latest.dir, 'bin/tsc'), '-p', '.', '--listFiles', '--noEmit'], app);
    const loaded = stdout.split('\n').filter((f) => f.endsWith('@types/node/index.d.ts'));
    expect(loaded).to.deep.equal([join(app, 'node_modules/@types/node/index.d.ts')]);
  });

  it('installs the eddy command', async () => {
    const { stdout } = await run(join(app, 'node_modules/.bin/eddy'), ['--version'], app);
    expect(stdout).to.match(/^eddy \d+\.\d+\.\d+/);
  });

  it('the installed eddy server run starts from its bundle and writes the first event', async () => {
    const probe = new FirstEventProbe();
    try {
      const files = await probe.modulesAtFirstEvent([join(app, 'node_modules/.bin/eddy'), 'server', 'run', '-f', probe.config, '--no-api']);
      const distSrc = join(app, 'node_modules/eddy/dist/src/');
      const inDist = files.filter((f) => f.startsWith(distSrc)).map((f) => f.slice(distSrc.length));
      // the bundle is compiled from its text and code cache, not required: no other eddy module is loaded
      expect(inDist.filter((f) => !f.startsWith('schema/precompiled/'))).to.deep.equal(['cli-entry.js']);
      // the validators generated at build time are found from the installed bundle too
      expect(inDist.some((f) => f.startsWith('schema/precompiled/'))).to.equal(true);
    } finally {
      probe.remove();
    }
  });

  it("docs/install.md lists every optional package, in its table and in the global install's command", () => {
    const all = Object.entries(OPTIONAL_PACKAGES).map(([name, range]) => `${name}@${range}`);
    const table = [...readFileSync(join(ROOT, 'docs/install.md'), 'utf8').matchAll(/^\| `([^`]+)` \|/gm)].map((m) => m[1]);
    expect(table.slice().sort()).to.deep.equal(all.slice().sort());
    expect(docBlock('docs/install.md', EVERY, 'sh').trim()).to.equal(`npm install -g ./${DOCUMENTED_TARBALL} ${all.join(' ')}`);
  });

  it('the docs name the tarball npm pack writes, and install eddy by no name the registry lacks (npm install eddy is a 404 until it is published)', () => {
    expect(DOCUMENTED_TARBALL).to.equal(tarball.split('/').pop());
    expect(docBlock('docs/install.md', GETTING, 'sh')).to.contain(`writes ${DOCUMENTED_TARBALL}`);
    const unpublished = /\b(npm (install|i)( -g)? eddy|npx( -p [^ ]+)* -p eddy)\b/;
    const pages = [
      'README.md',
      ...readdirSync(join(ROOT, 'docs'))
        .filter((f) => f.endsWith('.md'))
        .map((f) => `docs/${f}`),
    ];
    const offending = pages.flatMap((page) =>
      readFileSync(join(ROOT, page), 'utf8')
        // a paragraph may say that the name is a 404; it must not tell anyone to run it
        .split(/\n\s*\n/)
        .filter((paragraph) => unpublished.test(paragraph) && !paragraph.includes('404'))
        .map((paragraph) => `${page}: ${paragraph.slice(0, 120)}`),
    );
    expect(offending).to.deep.equal([]);
  });

  it("docs/install.md's global install, run as written (into a prefix of its own), has every connector: each type publishes", async function () {
    this.timeout(600_000);
    const prefix = join(work, 'global');
    const command = words(docBlock('docs/install.md', EVERY, 'sh'));
    // as written, where npm pack wrote the tarball; a prefix of the test's own for the machine's global one
    await run(command[0], [...command.slice(1), '--prefix', prefix, '--prefer-offline', '--no-audit', '--no-fund'], work, 600_000);
    const lib = join(prefix, 'lib');
    const answers = await publishNeeding(lib);
    // found beside eddy: nothing is missing (each config {} is then refused by its schema, or accepted)
    expect(answers.filter(([, body]) => body.error?.includes('needs the npm package'))).to.deep.equal([]);
    const { stdout } = await run(join(prefix, 'bin/eddy'), ['--version'], work);
    expect(stdout).to.match(/^eddy \d+\.\d+\.\d+/);
  });

  it("docs/install.md's local install of two clients, run as written in the app, makes their types publishable", async () => {
    const command = words(docBlock('docs/install.md', CLIENTS, 'sh'));
    // as written, in the app with the tarball copied into it, as the page says
    copyFileSync(tarball, join(app, DOCUMENTED_TARBALL!));
    await run(command[0], [...command.slice(1), '--prefer-offline', '--no-audit', '--no-fund'], app);
    const answers = await publishNeeding(app);
    const stillMissing = answers.flatMap(([, body], i) => (body.error?.includes('needs the npm package') ? [NEEDING[i][2]] : []));
    expect(stillMissing.filter((pkg) => pkg === '@platformatic/kafka' || pkg === 'pg')).to.deep.equal([]);
    expect(stillMissing).to.include('amqplib');
  });
});
