import { invalid } from './errors';
import { MissingPackageError } from './packages';
import { didYouMean } from './suggest';

/**
 * A type known by name whose module is loaded when the type is first looked
 * up, so a process pays (in start-up time and memory) only for the types its
 * artefacts use: @platformatic/kafka, pg, grpc and the rest stay unloaded otherwise.
 */
/**
 * The config type of a type held beside others: a registry, catalog or list
 * holds types whose config types all differ, and `create(config: C)` takes
 * its parameter contravariantly, so no common `C` but `any` lets each keep
 * its own (`unknown` would refuse every one). The one `any` of the code.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- see above: the one place it is written
export type AnyConfig = any;

export interface LazyType<T> {
  readonly name: string;
  readonly load: () => T;
}

/**
 * A registry of named types (connectors, codecs, processors, operators).
 * Registries belong to a Runtime, never to a module, so several runtimes can
 * live in one process with different sets of types.
 */
export class TypeRegistry<T> {
  private readonly types = new Map<string, T>();
  private readonly loaders = new Map<string, () => T>();

  constructor(private readonly what: string) {}

  register(name: string, type: T): void {
    this.checkFree(name);
    this.types.set(name, type);
  }

  /** Registers a type whose module `load` requires on first `get`. */
  registerLazy(name: string, load: () => T): void {
    this.checkFree(name);
    this.loaders.set(name, load);
  }

  has(name: string): boolean {
    return this.types.has(name) || this.loaders.has(name);
  }

  /** Looks a type up; an unknown name is a validation error naming the field. */
  get(name: string, field = 'type'): T {
    const type = this.types.get(name) ?? this.loadLazy(name, field);
    if (type === undefined) {
      throw invalid(`${field}: unknown ${this.what} '${name}'${didYouMean(name, this.names())} (known: ${this.names().join(', ')})`);
    }
    return type;
  }

  names(): string[] {
    return [...this.types.keys(), ...this.loaders.keys()].sort();
  }

  private loadLazy(name: string, field: string): T | undefined {
    const load = this.loaders.get(name);
    if (load === undefined) return undefined;
    let type: T;
    try {
      type = load();
    } catch (err) {
      // the loader stays: once the package is installed, the next lookup loads the type
      if (err instanceof MissingPackageError) throw new MissingPackageError(err.packageName, `${field}: ${this.what} '${name}'`);
      throw err;
    }
    this.loaders.delete(name);
    this.types.set(name, type);
    return type;
  }

  private checkFree(name: string): void {
    if (this.has(name)) throw new Error(`${this.what} type '${name}' is already registered`);
  }
}

/** Loads every entry of a catalog: for the full lists tests and docs walk. */
export function loadAll<T>(catalog: readonly LazyType<T>[]): T[] {
  return catalog.map((entry) => entry.load());
}
