import { invalid } from './errors';

/**
 * A registry of named types (connectors, codecs, processors, operators).
 * Registries belong to a Runtime, never to a module, so several runtimes can
 * live in one process with different sets of types.
 */
export class TypeRegistry<T> {
  private readonly types = new Map<string, T>();

  constructor(private readonly what: string) {}

  register(name: string, type: T): void {
    if (this.types.has(name)) throw new Error(`${this.what} type '${name}' is already registered`);
    this.types.set(name, type);
  }

  has(name: string): boolean {
    return this.types.has(name);
  }

  /** Looks a type up; an unknown name is a validation error naming the field. */
  get(name: string, field = 'type'): T {
    const type = this.types.get(name);
    if (type === undefined) {
      throw invalid(`${field}: unknown ${this.what} '${name}' (known: ${this.names().join(', ')})`);
    }
    return type;
  }

  names(): string[] {
    return [...this.types.keys()].sort();
  }
}
