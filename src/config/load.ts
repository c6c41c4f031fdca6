import { conflict } from '../core/errors';
import type { BindingRequest, Runtime } from '../runtime/runtime';
import type { InstancePort, Kind } from '../runtime/urls';
import type { Artefact } from '../runtime/artefacts';
import {
  SECTIONS,
  addDeclarations,
  at,
  canonical,
  emptyDeclared,
  mappingTarget,
  mappingValues,
  withContext,
  type ConfigFile,
  type Declared,
  type DeclaredArtefact,
} from './declared';
import { readConfigFile, type ConfigSource } from './document';
import { checkReload, planReload, swapInPlace, type ReloadPlan } from './reload';

export type { ConfigFile, ConfigSource, Declared };
export { configDocument, readConfigFile } from './document';
export { withContext };

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
  /** mappings whose instance already ran with the same links, left as it was (with `replace`: left running, its pipelines maybe swapped) */
  running: string[];
  /** `replace` only: artefacts that existed with another declaration and are replaced by this one */
  replaced: ArtefactRef[];
  /** `replace` only: running binding instances deactivated and activated again (they use a replaced artefact, or their values changed) */
  restarted: string[];
  /** `replace` only: pipeline instances replaced in place, their onramps and offramps running on (runtime/swap.ts) */
  swapped: string[];
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
  /**
   * An artefact that differs from the existing one replaces it by the
   * reload rules instead of being refused (`POST /config?replace=true`):
   * see `replaceConfig`.
   */
  replace?: boolean;
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
  return {
    options,
    planned: new Map(),
    applied: { published: [], unchanged: [], activated: [], running: [], replaced: [], restarted: [], swapped: [], declared, opened: [] },
    journal,
  };
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

/** Runs `action` on each artefact of a document, section by section, its message prefixed with the document and the artefact (its id, or its place when it has none). */
async function eachArtefact(source: ConfigSource, action: (kind: Kind, id: string | undefined, artefact: unknown) => void | Promise<void>): Promise<void> {
  for (const kind of SECTIONS) {
    for (const [i, artefact] of (source.config[kind] ?? []).entries()) {
      const id = (artefact as { id?: unknown } | null)?.id;
      const known = typeof id === 'string' ? id : undefined;
      await withContext(at(source.name, `${kind} ${known !== undefined ? `'${known}'` : `#${i + 1}`}`), () => action(kind, known, artefact));
    }
  }
}

/** Publishes the artefacts of one document and returns its mappings, not yet activated (in a dry run, validates them only). */
async function publishConfig(runtime: Runtime, source: ConfigSource, state: Applying): Promise<Mapping[]> {
  const { name, config } = source;
  const { planned, applied, journal, options } = state;
  await eachArtefact(source, (kind, id, artefact) => {
    options.check?.(kind, artefact);
    if (id !== undefined) {
      const ours = planned.get(`${kind}/${id}`);
      if (ours) return checkSame(runtime, kind, id, ours, artefact); // declared twice by this apply
      if (runtime.repository.has(kind, id)) {
        checkSame(runtime, kind, id, runtime.repository.get(kind, id), artefact);
        applied.unchanged.push({ kind, id });
        return;
      }
    }
    const published = options.dryRun ? runtime.repository.validate(kind, artefact) : runtime.publish(kind, artefact);
    if (!options.dryRun) journal.push(() => void runtime.unpublish(kind, published.id));
    planned.set(`${kind}/${published.id}`, published);
    applied.published.push({ kind, id: published.id });
  });
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
        if (options.replace) {
          await replaceConfig(runtime, sources, state);
          return state.applied;
        }
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

/** The same as `checkSame` would take it; an artefact that does not validate is not (the plan's checks name its field). */
function isSame(runtime: Runtime, kind: Kind, existing: Artefact, artefact: unknown): boolean {
  try {
    checkSame(runtime, kind, '', existing, artefact);
    return true;
  } catch {
    return false;
  }
}

/**
 * `POST /config?replace=true`: the documents applied by the reload rules
 * (reload.ts), a changed artefact replacing the existing one instead of
 * being refused. The plan goes from what the runtime runs of what the
 * documents declare (`runningDeclared`) to what they declare, so an
 * artefact or mapping they do not declare is never touched; it is checked
 * whole before anything changes (`checkReload`: an artefact that does not
 * validate, a link to a port that does not exist, a changed artefact that
 * an instance outside the documents runs, each refuses it all). A dry run
 * stops there. Then, as a reload: the mappings to restart are deactivated
 * (each drains its flow), changed artefacts unpublished and published
 * again, new ones published, pipelines swapped in place (runtime/swap.ts),
 * mappings activated; each step is journaled, so a failure takes it all
 * back (`applyConfig`).
 */
async function replaceConfig(runtime: Runtime, sources: readonly ConfigSource[], state: Applying): Promise<void> {
  const { applied, options, journal } = state;
  const after = applied.declared;
  for (const source of sources) {
    await eachArtefact(source, (kind, _id, artefact) => options.check?.(kind, artefact));
    addDeclarations(after, source.name, source.config);
  }
  const declared = [...after.artefacts.values()];
  const before = runningDeclared(runtime, after);
  const plan = swapInPlace(runtime, planReload(before, after), before, after);
  checkReload(runtime, plan, "the document's");
  if (!options.dryRun) {
    for (const key of plan.deactivate) {
      const { binding, instance } = mappingTarget(key);
      const params = runtime.activatedWith(binding, instance);
      await withContext(`mapping '${key}'`, async () => {
        await runtime.deactivate('binding', binding, instance);
      });
      journal.push(() => runtime.activate('binding', binding, instance, params));
    }
    for (const d of plan.unpublish) {
      const old = runtime.unpublish(d.kind, d.id);
      journal.push(() => void runtime.publish(d.kind, old));
    }
    for (const d of plan.publish) {
      await withContext(at(d.file, `${d.kind} '${d.id}'`), () => void runtime.publish(d.kind, d.artefact));
      journal.push(() => void runtime.unpublish(d.kind, d.id));
    }
    for (const d of plan.swap) {
      const old = runtime.repository.get('pipeline', d.id);
      await withContext(at(d.file, `${d.kind} '${d.id}'`), async () => {
        await runtime.replacePipeline(d.artefact);
      });
      journal.push(() => runtime.replacePipeline(old));
    }
    const request = (m: ReloadPlan['activate'][number]) => ({ binding: m.binding, instance: m.instance, params: m.params });
    await activateMappings(
      runtime,
      plan.activate.map((m) => ({ source: m.file, key: m.key, request: request(m) })),
      state,
    );
  }
  answer(runtime, plan, declared, applied);
}

/** What a replace did (or would do), in the lists of `Applied`. */
function answer(runtime: Runtime, plan: ReloadPlan, declared: readonly DeclaredArtefact[], applied: Applied): void {
  const key = (d: DeclaredArtefact) => `${d.kind}/${d.id}`;
  const ref = (d: DeclaredArtefact): ArtefactRef => ({ kind: d.kind, id: d.id });
  const unpublished = new Set(plan.unpublish.map(key));
  const touched = new Set([...plan.publish, ...plan.swap].map(key));
  const restarting = new Set(plan.deactivate);
  const swappedBy = new Set(plan.swapped.map((m) => m.key));
  applied.published = plan.publish.filter((d) => !unpublished.has(key(d))).map(ref);
  applied.replaced = [...plan.swap, ...plan.publish.filter((d) => unpublished.has(key(d)))].map(ref);
  applied.unchanged = declared.filter((d) => !touched.has(key(d))).map(ref);
  applied.activated = plan.activate.filter((m) => !restarting.has(m.key)).map((m) => m.key);
  applied.restarted = plan.activate.filter((m) => restarting.has(m.key)).map((m) => m.key);
  applied.swapped = plan.swap.flatMap((d) =>
    runtime
      .instancesOf('pipeline', d.id)
      .map((i) => `/pipeline/${d.id}/${i}`)
      .filter((url) => runtime.usersOf(url).some((u) => swappedBy.has(u))),
  );
  const activating = new Set(plan.activate.map((m) => m.key));
  applied.running = [...applied.declared.mappings.keys()].filter((k) => !activating.has(k));
}

/**
 * What the runtime runs of what `after` declares, as the `before` of a
 * reload plan: each declared artefact that exists, as the repository holds
 * it (the same as declared when `checkSame` takes it so), and each declared
 * mapping whose instance runs, with the values it runs with. The binding of
 * such a mapping that the documents do not declare goes into both sides,
 * the same, so that what it links is known. Nothing else is in either
 * side: nothing else is touched.
 */
function runningDeclared(runtime: Runtime, after: Declared): Declared {
  const before = emptyDeclared();
  for (const [key, d] of after.artefacts) {
    if (!runtime.repository.has(d.kind, d.id)) continue;
    const existing = runtime.repository.get(d.kind, d.id);
    before.artefacts.set(key, { ...d, artefact: existing, canonical: isSame(runtime, d.kind, existing, d.artefact) ? d.canonical : canonical(existing) });
  }
  for (const [key, m] of after.mappings) {
    if (!runtime.instancesOf('binding', m.binding).includes(m.instance)) continue;
    before.mappings.set(key, { ...m, params: runtime.activatedWith(m.binding, m.instance) });
    if (after.artefacts.has(`binding/${m.binding}`)) continue;
    const existing = runtime.repository.get('binding', m.binding);
    const d: DeclaredArtefact = { kind: 'binding', id: m.binding, artefact: existing, file: m.file, canonical: canonical(existing) };
    before.artefacts.set(`binding/${m.binding}`, d);
    after.artefacts.set(`binding/${m.binding}`, d);
  }
  return before;
}
