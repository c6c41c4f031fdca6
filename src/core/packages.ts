import { EddyError } from './errors';

/**
 * The npm packages only some types need: each connector client (and the
 * native compression addons, the LevelDB store, the cron parser) is an
 * optional peer dependency of eddy, installed by the user whose artefacts
 * use it, so an app that embeds a pipeline does not install 200 MB of
 * clients it never loads (docs/install.md). The ranges are package.json's
 * `peerDependencies`, which `test/package/optional-packages.test.ts` keeps
 * equal to this table.
 *
 * A module that needs one loads it with `requirePackage` (its types come
 * from an `import type`): when the package is missing, loading that module
 * fails with a validation error naming the package and the install command,
 * which a publish answers with a 400 (the registries load a type's module
 * when an artefact first names it).
 */
export const OPTIONAL_PACKAGES = {
  '@elastic/elasticsearch': '~8.19.1',
  '@google-cloud/pubsub': '^5.3.1',
  '@grpc/grpc-js': '^1.14.7',
  '@napi-rs/lzma': '^1.4.5',
  '@nats-io/jetstream': '^3.4.0',
  '@nats-io/nats-core': '^3.4.0',
  '@nats-io/transport-node': '^3.4.0',
  '@platformatic/kafka': '^2.12.1',
  amqplib: '^0.10.9',
  'cron-parser': '^5.10.5',
  'discord.js': '^14.28.1',
  level: '^10.0.0',
  'lz4-napi': '^2.10.0',
  pg: '^8.23.1',
  snappy: '^7.4.3',
} as const;

export type OptionalPackage = keyof typeof OPTIONAL_PACKAGES;

/** The command that installs `names` at the versions eddy is built against. */
export function installCommand(names: readonly OptionalPackage[]): string {
  return `npm install ${names.map((name) => `${name}@${OPTIONAL_PACKAGES[name]}`).join(' ')}`;
}

/**
 * The validation error for `name` missing: what needs it, and the command
 * that installs it. The registries catch it to say which field and type
 * asked (`type: onramp 'kafka' needs …`).
 */
export class MissingPackageError extends EddyError {
  constructor(
    readonly packageName: OptionalPackage,
    neededBy: string,
  ) {
    super(
      'invalid',
      `${neededBy} needs the npm package '${packageName}', which is not installed: run \`${installCommand([packageName])}\` where eddy is installed (docs/install.md)`,
    );
  }
}

/** Whether `name` resolves from eddy's own modules (where `requirePackage` loads it from). */
export function isInstalled(name: OptionalPackage): boolean {
  try {
    require.resolve(name);
    return true;
  } catch {
    return false;
  }
}

/**
 * Throws a `MissingPackageError` when `name` is not installed: for a type
 * that loads its package later (at activation, or per use), checked when the
 * artefact is published.
 */
export function checkInstalled(name: OptionalPackage, neededBy: string): void {
  if (!isInstalled(name)) throw new MissingPackageError(name, neededBy);
}

/** `requirePackage` on the first call, the same module after: for code that needs a package per use (compression). */
// eslint-disable-next-line @typescript-eslint/no-unnecessary-type-parameters -- the caller names the module's type (`typeof import('x')`): require gives none to infer
export function lazyPackage<T>(name: OptionalPackage, neededBy: string): () => T {
  let loaded: T | undefined;
  return () => (loaded ??= requirePackage<T>(name, neededBy));
}

/**
 * Loads the optional package `name` for `neededBy` ("the kafka onramp"),
 * resolved as any dependency of eddy is: from eddy's own node_modules up, so
 * a package installed beside eddy (in the app, or in the same global or npx
 * prefix) is found. Missing, it throws a `MissingPackageError`; a package that is
 * there but fails to load (a dependency of its own missing, a native addon
 * for another platform) throws its own error.
 */
// eslint-disable-next-line @typescript-eslint/no-unnecessary-type-parameters -- the caller names the module's type (`typeof import('x')`): require gives none to infer
export function requirePackage<T>(name: OptionalPackage, neededBy: string): T {
  checkInstalled(name, neededBy);
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- the point of this module: the package is required when a type that needs it loads, not with eddy
  return require(name) as T;
}
