/**
 * Every type a runtime knows, by kind, with its one-line description and
 * its config schema, read from the registries (so an application's own
 * types are there too). `eddy list`, `eddy new`, `eddy schema` and the
 * references (tools/docs/) read the types through this.
 */
import { MissingPackageError } from '../core/packages';
import { didYouMean } from '../core/suggest';
import type { JsonSchema } from '../schema/json-schema';
import type { Registries } from './registries';

/** The kinds of types, in the order they are listed. */
export const TYPE_KINDS = ['onramp', 'offramp', 'operator', 'codec', 'preprocessor', 'postprocessor'] as const;
export type TypeKind = (typeof TYPE_KINDS)[number];

/** One registered type. */
export interface TypeInfo {
  kind: TypeKind;
  type: string;
  /** its one-line description: its config schema's `description` (a codec's `summary`); '' when it has none */
  description: string;
  /** the schema of its `config`; undefined: it takes none (most codecs) */
  schema: JsonSchema | undefined;
}

/** The registry of a kind: `onramp` -> registries.onramps. */
function registryOf(registries: Registries, kind: TypeKind) {
  return registries[`${kind}s`];
}

/** The type `name` of `kind`; an unknown one is a 400 naming it, with the nearest name. */
export function typeInfo(registries: Registries, kind: TypeKind, name: string): TypeInfo {
  if (kind === 'codec') {
    const codec = registries.codecs.get(name);
    return { kind, type: name, description: codec.summary ?? '', schema: codec.configSchema };
  }
  const schema: JsonSchema | undefined = registryOf(registries, kind).get(name).configSchema;
  return { kind, type: name, description: typeof schema?.description === 'string' ? schema.description : '', schema };
}

/** The names of `kind`'s types, sorted. */
export function typeNames(registries: Registries, kind: TypeKind): string[] {
  return registryOf(registries, kind).names();
}

/**
 * Every type of `kinds`, kind by kind, each kind's sorted by name (each
 * type's module is loaded). A type whose optional npm package is not
 * installed is there too: its description says which package it needs, and
 * it has no schema (its module, which holds it, cannot load).
 */
export function typeInfos(registries: Registries, kinds: readonly TypeKind[] = TYPE_KINDS): TypeInfo[] {
  return kinds.flatMap((kind) =>
    typeNames(registries, kind).map((name) => {
      try {
        return typeInfo(registries, kind, name);
      } catch (err) {
        if (!(err instanceof MissingPackageError)) throw err;
        return { kind, type: name, description: `(not installed: needs the npm package '${err.packageName}', see docs/install.md)`, schema: undefined };
      }
    }),
  );
}

/**
 * The kind a word on the command line names: singular or plural (`onramp`,
 * `onramps`); undefined when it names none.
 */
export function kindNamed(word: string): TypeKind | undefined {
  return TYPE_KINDS.find((kind) => word === kind || word === `${kind}s`);
}

/** `unknown kind 'onrmap' (did you mean 'onramp'?); kinds: ...`, for a word that names no kind. */
export function unknownKind(word: string): string {
  const words = TYPE_KINDS.flatMap((k) => [k, `${k}s`]);
  return `unknown kind '${word}'${didYouMean(word, words)}; kinds: ${TYPE_KINDS.join(', ')} (or their plurals)`;
}
