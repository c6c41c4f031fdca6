/**
 * Hot reload of the config files (`eddy server run -f FILE --watch`, and
 * SIGHUP): the files are read again and compared with what they declared
 * when last loaded, and only the difference is applied (docs/config-files.md,
 * "Reloading"):
 *
 * - an artefact whose declaration is unchanged (compared as JSON, key order
 *   aside) keeps running untouched, and so does every mapping whose binding
 *   and parts are unchanged;
 * - a mapping that uses a changed or removed artefact is deactivated (its
 *   sources stop, what is in flight drains, its sinks close), the artefacts
 *   are unpublished and published again, and the mapping activated again;
 * - the whole new set is validated first (every changed or added artefact,
 *   every mapping): a file that does not read or validate changes nothing,
 *   and the error names the file, the artefact and the field;
 * - a mapping whose only changes are pipelines it runs between unchanged
 *   onramps and offramps keeps running: each changed pipeline's instance is
 *   swapped in place (`swapInPlace`, runtime/swap.ts), the onramps paused
 *   meanwhile, never stopped;
 * - an artefact the files changed but something else uses (an instance
 *   activated over the REST API) is refused the same way: the reload would
 *   have to stop what it does not own.
 *
 * `POST /config?replace=true` plans and checks with the same functions
 * (config/load.ts), from what the runtime runs of the document instead of
 * what the files declared before.
 */
import { EddyError, conflict, notFound } from '../core/errors';
import type { Logger } from '../core/logger';
import type { Runtime } from '../runtime/runtime';
import type { Artefact, BindingArtefact } from '../runtime/artefacts';
import { instanceUrl, parseLinkUrl, type Kind } from '../runtime/urls';
import { readConfigFile } from './document';
import { addDeclarations, at, withContext, canonical, emptyDeclared, type Declared, type DeclaredArtefact, type DeclaredMapping } from './declared';

export type { Declared, DeclaredArtefact, DeclaredMapping };

/** Reads and checks the files' shape (not the artefacts' schemas: `checkReload` does that). */
export async function readDeclared(paths: string[]): Promise<Declared> {
  const declared = emptyDeclared();
  for (const file of paths) addDeclarations(declared, file, await readConfigFile(file));
  return declared;
}

/** The changes a reload makes, in the order it makes them. */
export interface ReloadPlan {
  /** mapping keys to deactivate first */
  deactivate: string[];
  /** `kind/id` to unpublish (changed or removed), bindings first */
  unpublish: DeclaredArtefact[];
  /** artefacts to publish (changed or added), pipelines first */
  publish: DeclaredArtefact[];
  /** mappings to activate last (those deactivated that remain, and new ones), in file order */
  activate: DeclaredMapping[];
  /** changed pipelines replaced while they run (`Runtime.replacePipeline`), after the artefacts and before the activations */
  swap: DeclaredArtefact[];
  /** mappings left running whose changed pipelines `swap` replaces in place */
  swapped: DeclaredMapping[];
  /** how many artefacts and mappings are left as they are */
  unchanged: number;
}

const PUBLISH_ORDER: readonly Kind[] = ['pipeline', 'offramp', 'onramp', 'binding'];

/** What it takes to go from `before` to `after` (pure: nothing is touched). */
export function planReload(before: Declared, after: Declared): ReloadPlan {
  const changed = new Map<string, DeclaredArtefact>(); // each by its declaration in `before`
  for (const [key, old] of before.artefacts) if (after.artefacts.get(key)?.canonical !== old.canonical) changed.set(key, old);
  const added = [...after.artefacts].filter(([key]) => !before.artefacts.has(key)).map(([, d]) => d);
  const touched = (m: DeclaredMapping, decl: Declared): boolean => {
    if (changed.has(`binding/${m.binding}`)) return true;
    const binding = decl.artefacts.get(`binding/${m.binding}`)?.artefact as BindingArtefact | undefined;
    return partsOf(binding).some((part) => changed.has(part));
  };
  const deactivate: string[] = [];
  let unchanged = 0;
  for (const [key, old] of before.mappings) {
    const next = after.mappings.get(key);
    if (!next || canonical(next.params) !== canonical(old.params) || touched(old, before)) deactivate.push(key);
    else unchanged++;
  }
  const activate = [...after.mappings.values()].filter((m) => !before.mappings.has(m.key) || deactivate.includes(m.key));
  const byKind = (decls: DeclaredArtefact[], order: readonly Kind[]) => decls.sort((a, b) => order.indexOf(a.kind) - order.indexOf(b.kind));
  unchanged += before.artefacts.size - changed.size;
  return {
    deactivate,
    unpublish: byKind([...changed.values()], [...PUBLISH_ORDER].reverse()),
    publish: byKind([...changed.keys()].flatMap((key) => after.artefacts.get(key) ?? []).concat(added), PUBLISH_ORDER),
    activate,
    swap: [],
    swapped: [],
    unchanged,
  };
}

const keyOf = (d: DeclaredArtefact) => `${d.kind}/${d.id}`;

/**
 * The plan with the least disruption the runtime allows: a mapping it
 * would restart only because pipelines it runs changed (its binding and
 * values the same, and every changed part of it a pipeline) keeps running
 * instead, each changed pipeline swapped in place, when every running
 * instance of that pipeline is either such a mapping's, between onramps and
 * offramps (`Runtime.pipelineSwapBlocker`), or one the plan stops anyway.
 * Anything else is restarted as the plan said.
 */
export function swapInPlace(runtime: Runtime, plan: ReloadPlan, before: Declared, after: Declared): ReloadPlan {
  const unpublishing = new Set(plan.unpublish.map(keyOf));
  // changed pipelines: unpublished and published again (not removed, not new)
  const changed = new Map(plan.publish.filter((d) => d.kind === 'pipeline' && unpublishing.has(keyOf(d))).map((d) => [keyOf(d), d]));
  const restarting = new Set(plan.deactivate);
  const candidates = new Map<string, string[]>();
  for (const key of plan.deactivate) {
    const old = before.mappings.get(key);
    const next = after.mappings.get(key);
    if (!old || !next || canonical(old.params) !== canonical(next.params) || unpublishing.has(`binding/${next.binding}`)) continue;
    if (!runtime.instancesOf('binding', next.binding).includes(next.instance)) continue;
    const parts = partsOf(runtime.getInstance('binding', next.binding, next.instance) as BindingArtefact).filter((p) => unpublishing.has(p));
    if (parts.length > 0 && parts.every((p) => changed.has(p))) candidates.set(key, parts);
  }
  const swappable = ({ id, artefact }: DeclaredArtefact): boolean => {
    return runtime.instancesOf('pipeline', id).every((instance) => {
      const url = instanceUrl('pipeline', id, instance);
      const users = runtime.usersOf(url);
      if (users.length !== 1) return false;
      if (!candidates.has(users[0])) return restarting.has(users[0]);
      try {
        return runtime.pipelineSwapBlocker(url, artefact) === undefined;
      } catch {
        return false; // an invalid artefact: checkReload names its field
      }
    });
  };
  const ok = new Map([...changed].map(([part, d]) => [part, swappable(d)]));
  const kept = [...candidates].filter(([, parts]) => parts.every((p) => ok.get(p)));
  const swapped = new Set(kept.map(([key]) => key));
  if (swapped.size === 0) return plan;
  const swap = new Set(kept.flatMap(([, parts]) => parts));
  return {
    ...plan,
    deactivate: plan.deactivate.filter((key) => !swapped.has(key)),
    unpublish: plan.unpublish.filter((d) => !swap.has(keyOf(d))),
    publish: plan.publish.filter((d) => !swap.has(keyOf(d))),
    activate: plan.activate.filter((m) => !swapped.has(m.key)),
    swap: plan.publish.filter((d) => swap.has(keyOf(d))),
    swapped: [...after.mappings.values()].filter((m) => swapped.has(m.key)),
  };
}

/** The `kind/id` of every artefact a binding links (system artefacts included). */
function partsOf(binding: { links?: unknown } | undefined): string[] {
  if (!binding || typeof binding.links !== 'object' || binding.links === null) return [];
  const parts = new Set<string>();
  for (const [src, dsts] of Object.entries(binding.links)) {
    for (const url of [src, ...(Array.isArray(dsts) ? (dsts as unknown[]) : [])]) {
      const path = String(url)
        .replace(/^svc:\/\/[^/]*/, '')
        .split('/');
      if (path.length >= 3) parts.add(`${path[1]}/${path[2]}`);
    }
  }
  return [...parts];
}

/**
 * The plan, plus what the files declare that does not run although the
 * last reload left it unchanged: a step of an earlier reload failed (a port
 * was taken), or it was deactivated over the API. A reload makes the
 * runtime match the files, so a fixed cause is picked up by the next one.
 */
export function catchUp(runtime: Runtime, plan: ReloadPlan, after: Declared): ReloadPlan {
  const publishing = new Set(plan.publish);
  const missing = [...after.artefacts.values()].filter((d) => !publishing.has(d) && !runtime.repository.has(d.kind, d.id));
  const activating = new Set(plan.activate);
  const stopped = [...after.mappings.values()].filter((m) => !activating.has(m) && !runtime.instancesOf('binding', m.binding).includes(m.instance));
  if (missing.length === 0 && stopped.length === 0) return plan;
  return {
    ...plan,
    publish: [...plan.publish, ...missing].sort((a, b) => PUBLISH_ORDER.indexOf(a.kind) - PUBLISH_ORDER.indexOf(b.kind)),
    activate: [...after.mappings.values()].filter((m) => activating.has(m) || stopped.includes(m)),
    unchanged: plan.unchanged - missing.length - stopped.length,
  };
}

/**
 * Checks a plan against the runtime before anything changes: every artefact
 * to publish or swap validates, every mapping to activate or to swap the
 * pipelines of links ports that exist, and no artefact to unpublish is used
 * by an instance the plan does not stop itself. `declaredBy` says whose
 * mappings those are in the message (`the files'`, `the document's`).
 */
export function checkReload(runtime: Runtime, plan: ReloadPlan, declaredBy = "the files'"): void {
  const publishing = new Map<string, Artefact>();
  for (const d of [...plan.publish, ...plan.swap]) {
    try {
      publishing.set(`${d.kind}/${d.id}`, runtime.repository.validate(d.kind, d.artefact));
    } catch (err) {
      if (err instanceof EddyError) throw new EddyError(err.code, at(d.file, `${d.kind} '${d.id}': ${err.message}`));
      throw err;
    }
  }
  // what the deactivated mappings' bindings run: those instances go away with them
  const stopping = new Set<string>(plan.deactivate);
  for (const key of plan.deactivate) {
    const [, , binding, instance] = key.split('/');
    if (!runtime.instancesOf('binding', binding).includes(instance)) continue;
    const resolved = runtime.getInstance('binding', binding, instance) as BindingArtefact;
    for (const [src, dsts] of Object.entries(resolved.links)) {
      for (const url of [src, ...dsts]) {
        const end = parseLinkUrl(url, 'source', 'reload');
        stopping.add(instanceUrl(end.kind, end.artefact, end.instance));
      }
    }
  }
  // every mapping to activate links ports that exist, with the artefacts as they will be: a refused link stops nothing
  const unpublishing = new Set(plan.unpublish.map((d) => `${d.kind}/${d.id}`));
  const artefactAfter = (kind: Kind, id: string): Artefact => {
    const next = publishing.get(`${kind}/${id}`);
    if (next) return next;
    if (unpublishing.has(`${kind}/${id}`)) throw notFound(`${kind} '${id}' not found`);
    return runtime.repository.get(kind, id);
  };
  for (const m of [...plan.activate, ...plan.swapped]) {
    try {
      runtime.checkActivation({ binding: m.binding, instance: m.instance, params: m.params }, artefactAfter);
    } catch (err) {
      if (err instanceof EddyError) throw new EddyError(err.code, at(m.file, `mapping '${m.key}': ${err.message}`));
      throw err;
    }
  }
  for (const d of plan.unpublish) {
    if (!runtime.repository.has(d.kind, d.id)) continue;
    const others = runtime
      .instancesOf(d.kind, d.id)
      .map((i) => instanceUrl(d.kind, d.id, i))
      .filter((url) => !stopping.has(url));
    if (others.length > 0)
      throw conflict(at(d.file, `${d.kind} '${d.id}' changed, but ${others.join(', ')} runs it and is not one of ${declaredBy} mappings: deactivate it first`));
  }
}

/** What a reload did; `errors` holds what failed while applying (the rest was applied). */
export interface ReloadResult {
  plan: ReloadPlan;
  errors: string[];
}

/**
 * Applies a checked plan: deactivations first (each drains its flow), then
 * the artefacts, then the pipelines swapped in place, then the activations. A step that fails (a port taken by
 * something else since) is reported and the others go on: what it concerns
 * stays stopped until a fixed file is reloaded.
 */
export async function applyReload(runtime: Runtime, plan: ReloadPlan): Promise<ReloadResult> {
  const errors: string[] = [];
  const attempt = async (where: string, step: () => unknown): Promise<void> => {
    try {
      await withContext(where, async () => {
        await step();
      });
    } catch (err) {
      errors.push((err as Error).message);
    }
  };
  for (const key of plan.deactivate) {
    const [, , binding, instance] = key.split('/');
    if (runtime.instancesOf('binding', binding).includes(instance)) await attempt(`mapping '${key}'`, () => runtime.deactivate('binding', binding, instance));
  }
  for (const d of plan.unpublish)
    if (runtime.repository.has(d.kind, d.id)) await attempt(`${d.file}: ${d.kind} '${d.id}'`, () => runtime.unpublish(d.kind, d.id));
  for (const d of plan.publish) await attempt(`${d.file}: ${d.kind} '${d.id}'`, () => runtime.publish(d.kind, d.artefact));
  for (const d of plan.swap) await attempt(`${d.file}: ${d.kind} '${d.id}'`, () => runtime.replacePipeline(d.artefact));
  for (const m of plan.activate) await attempt(`${m.file}: mapping '${m.key}'`, () => runtime.activate('binding', m.binding, m.instance, m.params));
  await runtime.persisted().catch((err: unknown) => errors.push(err instanceof Error ? err.message : String(err)));
  return { plan, errors };
}

/**
 * Reloads a set of files on demand (`reload()`, serialised), remembering
 * what they declared at the last reload that read and validated.
 */
export class ConfigReloader {
  private running: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly runtime: Runtime,
    private readonly paths: string[],
    private declared: Declared,
    private readonly logger: Logger,
  ) {}

  /** Reads the files again and applies the difference; resolves with what was done, or rejects (nothing changed) when the files do not read or validate. */
  reload(): Promise<ReloadResult> {
    const next = this.running.then(() => this.reloadNow());
    this.running = next.catch(() => undefined);
    return next;
  }

  private async reloadNow(): Promise<ReloadResult> {
    let after: Declared;
    let plan: ReloadPlan;
    try {
      after = await readDeclared(this.paths);
      plan = swapInPlace(this.runtime, catchUp(this.runtime, planReload(this.declared, after), after), this.declared, after);
      checkReload(this.runtime, plan);
    } catch (err) {
      this.logger.error(`reload refused, nothing changed: ${(err as Error).message}`);
      throw err;
    }
    const result = await applyReload(this.runtime, plan);
    this.declared = after;
    const summary = `${plan.unchanged} unchanged, ${plan.unpublish.length} artefacts replaced or removed, ${plan.publish.length} published, ${plan.deactivate.length} mappings stopped, ${plan.activate.length} activated, ${plan.swap.length} pipelines swapped in place`;
    if (result.errors.length === 0) this.logger.info(`reloaded ${this.paths.join(', ')}: ${summary}`);
    else this.logger.error(`reloaded ${this.paths.join(', ')} with errors (${summary}): ${result.errors.join('; ')}`);
    return result;
  }
}
