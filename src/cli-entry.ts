import { readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Script } from 'node:vm';

type Cli = typeof import('./cli');

/**
 * Which build of the CLI a command runs (bin/eddy, `npm start`).
 *
 * `eddy server run` starts from dist/src/cli.bundle.js, the CLI with rxjs
 * and yaml in one file (scripts/bundle.js, the last step of `npm run
 * build`): loading one file instead of ~210 small modules is most of what
 * start-up saves (bench/README.md, "Start-up"). Every other command runs the
 * plain modules: `eddy test --require` loads an application's own module,
 * which imports 'rxjs' and 'eddy' from node_modules, and those must be the
 * very classes the runtime uses.
 *
 * The plain modules are taken as well when there is no bundle, or when tsc
 * compiled after it was made (`npx tsc -p .` alone rewrites
 * dist/.tsbuildinfo when anything changed, `tsc -p tsconfig.app.json`
 * dist/.tsbuildinfo-app; the bundle would be stale).
 * An installed package has no .tsbuildinfo: its bundle is current.
 */
export function cliModule(argv: readonly string[], distSrc = __dirname): string {
  const plain = join(distSrc, 'cli.js');
  if (argv[0] !== 'server' || argv[1] !== 'run') return plain;
  const bundled = join(distSrc, 'cli.bundle.js');
  const bundledAt = mtime(bundled);
  if (bundledAt === undefined) return plain;
  // either build writes its own: the whole tree (npm test) or only src and tools (npm start)
  const compiled = ['.tsbuildinfo', '.tsbuildinfo-app'].map((name) => mtime(join(distSrc, '..', name)) ?? -Infinity);
  return Math.max(...compiled) > bundledAt ? plain : bundled;
}

function mtime(path: string): number | undefined {
  return statSync(path, { throwIfNoEntry: false })?.mtimeMs;
}

/** The V8 code cache the build wrote for a bundle (scripts/bundle.js). */
export const codeCacheOf = (bundle: string) => `${bundle}.cache`;

/**
 * Runs a bundle as a CommonJS module, compiled with the V8 code cache the
 * build made for it when there is one: compiling the bundle's functions is
 * then mostly skipped (about a third of its start-up). V8 refuses a cache
 * made by another V8 or with other flags (the bundle is then compiled as
 * usual), but checks only the length of the source: so the cache is taken
 * only when it is younger than the bundle, and the build deletes it before
 * it rewrites the bundle.
 */
export function loadBundle(bundle: string, useCache = true): { exports: Cli; script: Script } {
  const cache = codeCacheOf(bundle);
  const cacheAt = useCache ? mtime(cache) : undefined;
  const bundleAt = mtime(bundle);
  const cachedData = cacheAt !== undefined && bundleAt !== undefined && cacheAt >= bundleAt ? readFileSync(cache) : undefined;
  // the wrapper Node puts around every CommonJS module, on the bundle's first line so its line numbers stay
  const source = `(function (exports, require, module, __filename, __dirname) {${readFileSync(bundle, 'utf8')}\n})`;
  const script = new Script(source, { filename: bundle, cachedData });
  const module = { exports: {} as Cli };
  (script.runInThisContext() as (...args: unknown[]) => void)(module.exports, createRequire(bundle), module, bundle, dirname(bundle));
  return { exports: module.exports, script };
}

// Which Node.js eddy runs on is checked here, before the CLI loads: on an
// older Node a user gets a few lines naming the version it needs and how to
// get it, not a stack trace from whichever newer API happens to run first.
/** The oldest Node.js major eddy supports: package.json's `engines` say the same. */
export const MIN_NODE_MAJOR = 24;

/** The Node.js line eddy is developed and tested on; a clone's `npm install` brings it. */
export const DEVELOPED_ON_MAJOR = 26;

/** Why this Node cannot run eddy, or undefined when it can. */
export function unsupportedNode(version: string = process.versions.node, execPath: string = process.execPath): string | undefined {
  const major = Number(version.split('.')[0]);
  if (major >= MIN_NODE_MAJOR) return undefined;
  return (
    `eddy needs Node.js ${MIN_NODE_MAJOR} or newer; this is Node.js ${version} (${execPath}).\n` +
    `  In a clone of eddy: \`npm install\` brings Node.js ${DEVELOPED_ON_MAJOR} from the npm registry, and \`npm start\`, \`npm test\` and \`npx eddy\` use it.\n` +
    `  Elsewhere: install Node.js ${MIN_NODE_MAJOR} or newer (https://nodejs.org, or your package manager), or run once through npm's copy: npx -y node@${DEVELOPED_ON_MAJOR} "$(command -v eddy)" ARGS\n`
  );
}

/** Runs the CLI's main with `argv`, from the build `cliModule` picks; on an unsupported Node says so and answers 1. */
export function runCli(argv: string[]): Promise<number> {
  const unsupported = unsupportedNode();
  if (unsupported !== undefined) {
    process.stderr.write(unsupported);
    return Promise.resolve(1);
  }
  const file = cliModule(argv);
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- the module is a path picked at run time (the build or the bundle), loaded synchronously
  const cli = file.endsWith('.bundle.js') ? loadBundle(file).exports : (require(file) as Cli);
  return cli.main(argv);
}
