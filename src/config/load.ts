import { dirname } from 'node:path';
import { readYamlFile } from './yaml-file';
import { expandFlows } from './flow';
import { resolveRelativePaths } from './paths';
import type { SubstitutionSources } from './substitute';
import { EddyError, conflict, invalid } from '../core/errors';
import { didYouMean } from '../core/suggest';
import type { BindingRequest, Runtime } from '../runtime/runtime';
import type { InstancePort, Kind } from '../runtime/urls';
import type { Artefact } from '../runtime/artefacts';
import { SECTIONS, addDeclarations, at, canonical, emptyDeclared, mappingTarget, mappingValues, type ConfigFile, type Declared } from './declared';

export type { ConfigFile, Declared };

/**
 * Parses a YAML or JSON config file (YAML is a superset of JSON), `${NAME}`
 * references replaced first, checking its top-level shape (`configDocument`);
 * its relative paths made absolute against the file's folder (paths.ts).
 * With `text`, that is the file's content (read already: standard input)
 * and `path` names it; a relative path is then taken from `dirname(path)`,
 * the working directory for a bare name. With `sources`, `${NAME}` and
 * `${file:PATH}` take their values there.
 */
// eslint-disable-next-line @typescript-eslint/require-await -- exported as a promise, which a bad file rejects; the reading is synchronous today
export async function readConfigFile(path: string, options: { text?: string; sources?: SubstitutionSources } = {}): Promise<ConfigFile> {
  return resolveRelativePaths(configDocument(readYamlFile(path, { substitute: true, ...options }), path), dirname(path));
}

/**
 * A parsed config document (a file's, or a body sent to `POST /config`)
 * with its top-level shape checked and its `flow` entries expanded into
 * bindings and mappings. `name` starts every message: the file, or '' for
 * a request body, whose messages then start with the artefact.
 */
export function configDocument(doc: unknown, name: string): ConfigFile {
  if (doc === null || doc === undefined) return {};
  if (typeof doc !== 'object' || Array.isArray(doc)) throw invalid(at(name, 'the top level must be a map of sections'));
  for (const [key, value] of Object.entries(doc)) {
    if (key === 'flow') continue; // expandFlows reads it
    if (key === 'mapping') {
      if (value !== null && (typeof value !== 'object' || Array.isArray(value))) throw invalid(at(name, 'mapping must be a map'));
    } else if ((SECTIONS as readonly string[]).includes(key)) {
      if (value !== null && !Array.isArray(value)) throw invalid(at(name, `${key} must be a list of ${key} artefacts`));
    } else {
      const sections = [...SECTIONS, 'mapping', 'flow'];
      throw invalid(at(name, `unknown section '${key}'${didYouMean(key, sections)} (sections: ${sections.join(', ')})`));
    }
  }
  return expandFlows(name, doc);
}

/** A parsed config document and the name its messages start with (see `configDocument`). */
export interface ConfigSource {
  readonly name: string;
  readonly config: ConfigFile;
}

/** An artefact by kind and id, as the answer of `POST /config` lists it. */
export interface ArtefactRef {
  kind: Kind;
  id: string;
}

/** What applying config documents did (or, in a dry run, would do). */
export interface Applied {
  /** artefacts new to the repository, in the order published */
  published: ArtefactRef[];
  /** artefacts that existed already, the same as declared (compared as JSON, key order aside) */
  unchanged: ArtefactRef[];
  /** the binding instances the mappings activated (`/binding/{id}/{instance}`) */
  activated: string[];
  /** mappings whose instance already ran with the same links, left as it was */
  running: string[];
  /** what the documents declare, for a later reload to compare with (reload.ts) */
  declared: Declared;
  /**
   * A dry run only: the pipeline, offramp and onramp instances the
   * activation would open, each once (`eddy validate` checks the files
   * they would read and write).
   */
  opened: InstancePort[];
}

export interface ApplyOptions {
  /** check everything and change nothing: `Applied` says what would be published and activated */
  dryRun?: boolean;
  /** asked of each artefact before anything else (the API refuses secrets in clear text); throws to refuse */
  check?: (kind: Kind, artefact: unknown) => void;
}

/** One apply under way: what it has published or checked so far, and what it did. */
interface Applying {
  readonly options: ApplyOptions;
  /** `kind/id` -> the artefact as this apply published it (or, in a dry run, would) */
  readonly planned: Map<string, Artefact>;
  readonly applied: Applied;
  /** how to take back each change made so far */
  readonly journal: Undo[];
}

function applying(options: ApplyOptions = {}, journal: Undo[] = [], declared = emptyDeclared()): Applying {
  return { options, planned: new Map(), applied: { published: [], unchanged: [], activated: [], running: [], declared, opened: [] }, journal };
}

/**
 * Publishes every artefact of a config file and activates its mappings, with
 * the same calls the REST API makes. An error names the file, the artefact
 * and the field. `journal` collects how to take each change back (the file
 * itself takes nothing back: `loadConfigFiles` does).
 */
export async function loadConfigFile(runtime: Runtime, path: string, journal: Undo[] = [], declared: Declared = emptyDeclared()): Promise<Declared> {
  const state = applying({}, journal, declared);
  const mappings = await publishConfig(runtime, { name: path, config: await readConfigFile(path) }, state);
  await activateMappings(runtime, mappings, state);
  return declared;
}

/** A mapping of a config file, to activate once every file is published. */
interface Mapping {
  readonly source: string;
  readonly key: string;
  readonly request: BindingRequest;
}

/** `FILE: mapping 'KEY'`: where a message about one mapping comes from. */
const mappingAt = (m: Mapping) => at(m.source, `mapping '${m.key}'`);

/** The artefact this apply publishes, or the repository's: what its mappings will run. */
function lookup(runtime: Runtime, state: Applying): (kind: Kind, id: string) => Artefact {
  return (kind, id) => state.planned.get(`${kind}/${id}`) ?? runtime.repository.get(kind, id);
}

/** Publishes the artefacts of one document and returns its mappings, not yet activated (in a dry run, validates them only). */
async function publishConfig(runtime: Runtime, source: ConfigSource, state: Applying): Promise<Mapping[]> {
  const { name, config } = source;
  const { planned, applied, journal, options } = state;
  for (const kind of SECTIONS) {
    for (const [i, artefact] of (config[kind] ?? []).entries()) {
      const id = (artefact as { id?: unknown } | null)?.id;
      await withContext(at(name, `${kind} ${typeof id === 'string' ? `'${id}'` : `#${i + 1}`}`), () => {
        options.check?.(kind, artefact);
        const ours = typeof id === 'string' ? planned.get(`${kind}/${id}`) : undefined;
        if (ours) return checkSame(runtime, kind, id as string, ours, artefact); // declared twice by this apply
        if (typeof id === 'string' && runtime.repository.has(kind, id)) {
          checkSame(runtime, kind, id, runtime.repository.get(kind, id), artefact);
          applied.unchanged.push({ kind, id });
          return;
        }
        const published = options.dryRun ? runtime.repository.validate(kind, artefact) : runtime.publish(kind, artefact);
        if (!options.dryRun) journal.push(() => void runtime.unpublish(kind, published.id));
        planned.set(`${kind}/${published.id}`, published);
        applied.published.push({ kind, id: published.id });
      });
    }
  }
  const mappings: Mapping[] = [];
  for (const [key, params] of Object.entries(config.mapping ?? {})) {
    await withContext(at(name, `mapping '${key}'`), () => {
      const { binding, instance } = mappingTarget(key);
      const values = mappingValues(params);
      const request = { binding, instance, params: values };
      // kept from a previous run (--data-dir): the same mapping is already running; another one is an error
      const stored = runtime.store?.storedInstance(`/binding/${binding}/${instance}`);
      if (stored) {
        if (canonical(stored.params) !== canonical(values))
          throw conflict(`already running with other parameters ${JSON.stringify(stored.params)} (kept in the data dir); deactivate it first (DELETE ${key})`);
        applied.running.push(key);
        return;
      }
      // running already (activated over the API, or by an earlier apply): the same if it runs the very links these values give
      if (runtime.instancesOf('binding', binding).includes(instance)) {
        const running = runtime.getInstance('binding', binding, instance);
        if (canonical(running) !== canonical(runtime.checkActivation(request, lookup(runtime, state))))
          throw conflict(`already running with other links (GET ${key} shows them); deactivate it first (DELETE ${key})`);
        applied.running.push(key);
        return;
      }
      mappings.push({ source: name, key, request });
    });
  }
  // what it declared, from the same parse, for a later reload to compare with (reload.ts)
  addDeclarations(applied.declared, name, config);
  return mappings;
}

/**
 * Activates the mappings as one activation: each is checked first (its
 * file and key named in the message), then all open together, so no file
 * offramp of one mapping truncates its file before every part of every
 * other has opened. A dry run stops after the checks, the activation's own
 * before it opens anything included (`Runtime.planBindings`).
 */
async function activateMappings(runtime: Runtime, mappings: readonly Mapping[], state: Applying): Promise<void> {
  for (const m of mappings) await withContext(mappingAt(m), () => void runtime.checkActivation(m.request, lookup(runtime, state)));
  const urls = mappings.map((m) => `/binding/${m.request.binding}/${m.request.instance}`);
  if (mappings.length === 0) return;
  const sources = [...new Set(mappings.map((m) => m.source))];
  const where = mappings.length === 1 ? mappingAt(mappings[0]) : at(sources.join(', '), 'mappings');
  const requests = mappings.map((m) => m.request);
  if (state.options.dryRun) {
    await withContext(where, () => void state.applied.opened.push(...runtime.planBindings(requests, lookup(runtime, state))));
    state.applied.activated.push(...urls);
    return;
  }
  await withContext(where, async () => {
    await runtime.activateBindings(requests);
  });
  for (const { request } of mappings) state.journal.push(() => runtime.deactivate('binding', request.binding, request.instance));
  state.applied.activated.push(...urls);
}

/** Takes back one change a config file made. */
type Undo = () => Promise<unknown> | undefined;

/**
 * Loads the files in order, all or nothing: when one fails, what the files
 * published and activated so far is taken back (so with --data-dir a failed
 * start leaves the store as it was, and a corrected file is not refused as
 * differing from its own broken version), then the error is thrown.
 */
export async function loadConfigFiles(runtime: Runtime, paths: string[]): Promise<Declared> {
  const sources: ConfigSource[] = [];
  for (const path of paths) sources.push({ name: path, config: await readConfigFile(path) });
  return (await applyConfig(runtime, sources)).declared;
}

/**
 * Applies config documents all or nothing, as one change of the runtime
 * (`Runtime.exclusive`: no activation or deactivation asked for meanwhile
 * runs in between): every artefact of every document is published first
 * (one the same as an existing artefact is left as it is, a different one
 * is a conflict), then every mapping is checked, then all of them are
 * activated as one activation. When anything fails, what was published and
 * activated is taken back, inside the same change, before the error is
 * thrown: the runtime is as it was. `eddy server run -f` and `POST /config`
 * both apply through here.
 */
export async function applyConfig(runtime: Runtime, sources: readonly ConfigSource[], options: ApplyOptions = {}): Promise<Applied> {
  const state = applying(options);
  try {
    return await runtime.exclusive(async () => {
      try {
        // every document published before any mapping opens: a mistake in the last one touches nothing of the first
        const mappings: Mapping[] = [];
        for (const source of sources) mappings.push(...(await publishConfig(runtime, source, state)));
        await activateMappings(runtime, mappings, state);
        return state.applied;
      } catch (err) {
        for (const undo of [...state.journal].reverse())
          await Promise.resolve()
            .then(undo)
            .catch(() => undefined);
        throw err;
      }
    });
  } catch (err) {
    // the store writes of what was taken back follow the change: the store is as it was once this rejects
    await runtime.persisted().catch(() => undefined);
    throw err;
  }
}

/**
 * An artefact that exists already (kept in the data dir, declared by an
 * earlier file, published over the API) may be declared again if it is the
 * same; a different one is an error, never a silent replacement of either.
 * The same as written, or as stored (a pipeline without links is stored
 * with its chain spelled out).
 */
function checkSame(runtime: Runtime, kind: Kind, id: string, existing: Artefact, artefact: unknown): void {
  if (canonical(existing) === canonical(artefact)) return;
  if (canonical(existing) === canonical(runtime.repository.validate(kind, artefact))) return;
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
