import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FirstEventProbe } from '../helpers/first-event';
import { ROOT, docBlock } from '../helpers/readme';

const TYPESCRIPT = (JSON.parse(readFileSync(join(ROOT, 'node_modules/typescript/package.json'), 'utf8')) as { version: string }).version;

function run(command: string, args: string[], cwd: string, timeout = 240_000): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) =>
    execFile(command, args, { cwd, timeout, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) =>
      err ? reject(new Error(`${command} ${args.join(' ')} (in ${cwd}): ${err.message}\n${stdout}\n${stderr}`)) : resolve({ stdout, stderr }),
    ),
  );
}

const STRICT = { strict: true, skipLibCheck: false, target: 'ES2022', lib: ['ES2022'], types: ['node'], esModuleInterop: true, outDir: 'out', rootDir: 'src' };

describe('the package, installed into an empty project', function () {
  this.timeout(300_000);
  let work: string;
  let app: string;
  let files: string[];

  before(async () => {
    work = mkdtempSync(join(tmpdir(), 'eddy-pack-'));
    // dist/ is built by `npm test`'s pretest; `npm pack` without --ignore-scripts would build it (prepack)
    const packed = JSON.parse((await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', work], ROOT)).stdout) as [
      { filename: string; files: { path: string }[] },
    ];
    files = packed[0].files.map((f) => f.path);
    app = join(work, 'app');
    mkdirSync(join(app, 'src'), { recursive: true });
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', version: '1.0.0', private: true }));
    await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', join(work, packed[0].filename), 'rxjs', `typescript@${TYPESCRIPT}`], app);
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

  for (const resolution of ['node16', 'node10'] as const) {
    it(`docs/embedding.md's program compiles with strict types and skipLibCheck false (moduleResolution ${resolution}) and runs`, async () => {
      const module = resolution === 'node16' ? 'node16' : 'commonjs';
      writeFileSync(join(app, 'tsconfig.json'), JSON.stringify({ compilerOptions: { ...STRICT, module, moduleResolution: resolution }, include: ['src'] }));
      writeFileSync(join(app, 'src/main.ts'), docBlock('docs/embedding.md', '# Embed eddy in your app', 'ts'));
      // the testing entry point's snippet in docs/testing-pipelines.md, with a minimal `it`
      const testing = docBlock('docs/testing-pipelines.md', '# Test your pipeline', 'ts');
      writeFileSync(join(app, 'src/case.ts'), `${testing}\nfunction it(name: string, body: () => void): void {\n  body();\n  console.log('ok', name);\n}\n`);
      await run(join(app, 'node_modules/.bin/tsc'), ['-p', '.'], app);
      const main = await run(process.execPath, [join(app, 'out/main.js')], app);
      expect(main.stdout.trim().split('\n')).to.deep.equal(['[{"level":"error","msg":"disk full"}]', '{"level":"error","msg":"out of memory"}']);
      // the case names a pipeline file of eddy's examples, relative to the working directory
      const cased = await run(process.execPath, [join(app, 'out/case.js')], ROOT);
      expect(cased.stdout.trim()).to.equal('ok drops what is not an error');
    });
  }

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
});
