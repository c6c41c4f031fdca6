/**
 * What a set of config files declares: each artefact by `kind/id` and each
 * mapping by key, with the file that says so. Built by the first load
 * (load.ts) from the same parse that published them, and by every reload
 * (reload.ts), which compares the two.
 */
import { EddyError, conflict, invalid } from '../core/errors';
import type { Kind } from '../runtime/urls';

/** The sections of a config file, published in this order, then the mappings activated. */
export const SECTIONS: readonly Kind[] = ['pipeline', 'offramp', 'onramp', 'binding'];
export const MAPPING_KEY = /^\/binding\/([^/]+)\/([^/]+)$/;

/** A config file's sections: artefacts per kind, and `mapping` (binding instances to activate with their values). */
export interface ConfigFile {
  pipeline?: unknown[];
  offramp?: unknown[];
  onramp?: unknown[];
  binding?: unknown[];
  mapping?: Record<string, Record<string, string> | null>;
}

/** One artefact as the files declare it. */
export interface DeclaredArtefact {
  kind: Kind;
  id: string;
  artefact: unknown;
  /** the file that declares it, for errors */
  file: string;
  /** its JSON with sorted keys: equal declarations compare equal */
  canonical: string;
}

/** One mapping (a binding instance to activate) as the files declare it. */
export interface DeclaredMapping {
  key: string;
  binding: string;
  instance: string;
  params: Record<string, string>;
  file: string;
}

export interface Declared {
  artefacts: Map<string, DeclaredArtefact>;
  mappings: Map<string, DeclaredMapping>;
}

export function emptyDeclared(): Declared {
  return { artefacts: new Map(), mappings: new Map() };
}

/** Adds one parsed file's declarations; an error names the file, the artefact or mapping, and the field. */
export function addDeclarations(declared: Declared, file: string, config: ConfigFile): void {
  for (const kind of SECTIONS) {
    for (const [i, artefact] of (config[kind] ?? []).entries()) {
      const id = (artefact as { id?: unknown } | null)?.id;
      if (typeof id !== 'string') throw invalid(at(file, `${kind} #${i + 1}: id: must be a string`));
      const entry = { kind, id, artefact, file, canonical: canonical(artefact) };
      const earlier = declared.artefacts.get(`${kind}/${id}`);
      if (earlier && earlier.canonical !== entry.canonical)
        throw conflict(at(file, `${kind} '${id}': differs from its declaration ${earlier.file === '' ? 'before' : `in ${earlier.file}`}`));
      declared.artefacts.set(`${kind}/${id}`, entry);
    }
  }
  for (const [key, params] of Object.entries(config.mapping ?? {})) {
    try {
      declared.mappings.set(key, { key, ...mappingTarget(key), params: mappingValues(params), file });
    } catch (err) {
      throw invalid(at(file, `mapping '${key}': ${(err as Error).message}`));
    }
  }
}

/** `NAME: what`: a message about a part of a config document, named by its file; a request body has no name, and the message starts with the part. */
export function at(name: string, what: string): string {
  return name === '' ? what : `${name}: ${what}`;
}

/** The binding and instance of a mapping key; an error says what the key must be. */
export function mappingTarget(key: string): { binding: string; instance: string } {
  const match = MAPPING_KEY.exec(key);
  if (!match) throw invalid('the key must be /binding/<binding-id>/<instance-id>');
  return { binding: match[1], instance: match[2] };
}

/** A mapping's values, each a string. */
export function mappingValues(params: Record<string, unknown> | null): Record<string, string> {
  const values: Record<string, string> = {};
  for (const [name, value] of Object.entries(params ?? {})) {
    if (typeof value !== 'string') throw invalid(`${name}: mapping values must be strings, got ${JSON.stringify(value)}`);
    values[name] = value;
  }
  return values;
}

/** JSON with object keys sorted, so two equal documents compare equal whatever their key order. */
export function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : v,
  );
}

/** Runs `action`, its error's message prefixed with `where` (a file, an artefact, a mapping). */
export async function withContext(where: string, action: () => void | Promise<void>): Promise<void> {
  try {
    await action();
  } catch (err) {
    if (err instanceof EddyError) throw new EddyError(err.code, `${where}: ${err.message}`);
    throw new Error(`${where}: ${(err as Error).message}`);
  }
}
