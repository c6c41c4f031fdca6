import { readYamlFile } from './yaml-file';
import { expandFlows } from './flow';
import { EddyError, conflict, invalid } from '../core/errors';
import { didYouMean } from '../core/suggest';
import type { BindingRequest, Runtime } from '../runtime/runtime';
import type { Kind } from '../runtime/urls';
import { SECTIONS, addDeclarations, canonical, emptyDeclared, mappingTarget, mappingValues, type ConfigFile, type Declared } from './declared';

export type { ConfigFile, Declared };

/** Parses a YAML or JSON config file (YAML is a superset of JSON), `${NAME}` references replaced first, checking its top-level shape. */
// eslint-disable-next-line @typescript-eslint/require-await -- exported as a promise, which a bad file rejects; the reading is synchronous today
export async function readConfigFile(path: string): Promise<ConfigFile> {
  const doc = readYamlFile(path, { substitute: true });
  if (doc === null || doc === undefined) return {};
  if (typeof doc !== 'object' || Array.isArray(doc)) throw invalid(`${path}: the top level must be a map of sections`);
  for (const [key, value] of Object.entries(doc)) {
    if (key === 'flow') continue; // expandFlows reads it
    if (key === 'mapping') {
      if (value !== null && (typeof value !== 'object' || Array.isArray(value))) throw invalid(`${path}: mapping must be a map`);
    } else if ((SECTIONS as readonly string[]).includes(key)) {
      if (value !== null && !Array.isArray(value)) throw invalid(`${path}: ${key} must be a list of ${key} artefacts`);
    } else {
      const sections = [...SECTIONS, 'mapping', 'flow'];
      throw invalid(`${path}: unknown section '${key}'${didYouMean(key, sections)} (sections: ${sections.join(', ')})`);
    }
  }
  return expandFlows(path, doc);
}

/**
 * Publishes every artefact of a config file and activates its mappings, with
 * the same calls the REST API makes. An error names the file, the artefact
 * and the field.
 */
export async function loadConfigFile(runtime: Runtime, path: string, journal: Undo[] = [], declared: Declared = emptyDeclared()): Promise<Declared> {
  const mappings = await publishConfigFile(runtime, path, journal, declared);
  await activateMappings(runtime, mappings, journal);
  return declared;
}

/** A mapping of a config file, to activate once every file is published. */
interface Mapping {
  readonly file: string;
  readonly key: string;
  readonly request: BindingRequest;
}

/** `FILE: mapping 'KEY'`: where a message about one mapping comes from. */
const mappingAt = (m: Mapping) => `${m.file}: mapping '${m.key}'`;

/** Publishes the artefacts of one file and returns its mappings, not yet activated. */
async function publishConfigFile(runtime: Runtime, path: string, journal: Undo[], declared: Declared): Promise<Mapping[]> {
  const config = await readConfigFile(path);
  for (const kind of SECTIONS) {
    for (const [i, artefact] of (config[kind] ?? []).entries()) {
      const id = (artefact as { id?: unknown } | null)?.id;
      await withContext(`${path}: ${kind} ${typeof id === 'string' ? `'${id}'` : `#${i + 1}`}`, () => {
        if (typeof id === 'string' && runtime.repository.has(kind, id)) return checkSame(runtime, kind, id, artefact);
        runtime.publish(kind, artefact);
        journal.push(() => void runtime.unpublish(kind, id as string));
      });
    }
  }
  const mappings: Mapping[] = [];
  for (const [key, params] of Object.entries(config.mapping ?? {})) {
    await withContext(`${path}: mapping '${key}'`, () => {
      const { binding, instance } = mappingTarget(key);
      const values = mappingValues(params);
      // kept from a previous run (--data-dir): the same mapping is already running; another one is an error
      const stored = runtime.store?.storedInstance(`/binding/${binding}/${instance}`);
      if (stored) {
        if (canonical(stored.params) === canonical(values)) return;
        throw conflict(`already running with other parameters ${JSON.stringify(stored.params)} (kept in the data dir); deactivate it first (DELETE ${key})`);
      }
      mappings.push({ file: path, key, request: { binding, instance, params: values } });
    });
  }
  // what it declared, from the same parse, for a later reload to compare with (reload.ts)
  addDeclarations(declared, path, config);
  return mappings;
}

/**
 * Activates the mappings as one activation: each is checked first (its
 * file and key named in the message), then all open together, so no file
 * offramp of one mapping truncates its file before every part of every
 * other has opened.
 */
async function activateMappings(runtime: Runtime, mappings: readonly Mapping[], journal: Undo[]): Promise<void> {
  for (const m of mappings) await withContext(mappingAt(m), () => runtime.checkActivation(m.request));
  if (mappings.length === 0) return;
  const where = mappings.length === 1 ? mappingAt(mappings[0]) : `${[...new Set(mappings.map((m) => m.file))].join(', ')}: mappings`;
  await withContext(where, async () => void (await runtime.activateBindings(mappings.map((m) => m.request))));
  for (const { request } of mappings) journal.push(() => runtime.deactivate('binding', request.binding, request.instance));
}

/** Takes back one change a config file made. */
type Undo = () => void | Promise<unknown>;

/**
 * Loads the files in order, all or nothing: when one fails, what the files
 * published and activated so far is taken back (so with --data-dir a failed
 * start leaves the store as it was, and a corrected file is not refused as
 * differing from its own broken version), then the error is thrown.
 */
export async function loadConfigFiles(runtime: Runtime, paths: string[]): Promise<Declared> {
  const journal: Undo[] = [];
  const declared = emptyDeclared();
  try {
    // every file published before any mapping opens: a mistake in the last file touches nothing of the first
    const mappings: Mapping[] = [];
    for (const path of paths) mappings.push(...(await publishConfigFile(runtime, path, journal, declared)));
    await activateMappings(runtime, mappings, journal);
    return declared;
  } catch (err) {
    for (const undo of journal.reverse())
      await Promise.resolve()
        .then(undo)
        .catch(() => undefined);
    await runtime.persisted().catch(() => undefined);
    throw err;
  }
}

/**
 * An artefact that exists already (kept in the data dir, or declared by an
 * earlier file) may be declared again if it is the same; a different one is
 * an error, never a silent replacement of either.
 */
function checkSame(runtime: Runtime, kind: Kind, id: string, artefact: unknown): void {
  // compared as stored: a pipeline without links is stored with the chain it stands for
  if (canonical(runtime.repository.get(kind, id)) === canonical(runtime.repository.validate(kind, artefact))) return;
  throw conflict(
    `differs from the ${kind} '${id}' that exists already (kept in the data dir or declared earlier); delete it first (DELETE /${kind}/${id}) or give this one another id`,
  );
}

export async function withContext(where: string, action: () => void | Promise<void>): Promise<void> {
  try {
    await action();
  } catch (err) {
    if (err instanceof EddyError) throw new EddyError(err.code, `${where}: ${err.message}`);
    throw new Error(`${where}: ${(err as Error).message}`);
  }
}
