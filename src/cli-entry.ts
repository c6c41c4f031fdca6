import { statSync } from 'node:fs';
import { join } from 'node:path';

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
 * dist/.tsbuildinfo when anything changed; the bundle would be stale).
 * An installed package has no .tsbuildinfo: its bundle is current.
 */
export function cliModule(argv: readonly string[], distSrc = __dirname): string {
  const plain = join(distSrc, 'cli.js');
  if (argv[0] !== 'server' || argv[1] !== 'run') return plain;
  const bundled = join(distSrc, 'cli.bundle.js');
  const bundledAt = mtime(bundled);
  if (bundledAt === undefined) return plain;
  const compiledAt = mtime(join(distSrc, '..', '.tsbuildinfo'));
  return compiledAt !== undefined && compiledAt > bundledAt ? plain : bundled;
}

function mtime(path: string): number | undefined {
  return statSync(path, { throwIfNoEntry: false })?.mtimeMs;
}

/** Runs the CLI's main with `argv`, from the build `cliModule` picks. */
export function runCli(argv: string[]): Promise<number> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return (require(cliModule(argv)) as typeof import('./cli')).main(argv);
}
