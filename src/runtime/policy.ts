/**
 * What a published artefact may reach outside the event flow: the files and
 * directories it names, and whether it may stop the process. The Repository
 * asks the policy at publish, so a refused artefact is never stored; the
 * answer is a 400 naming the field.
 *
 * - `--allow-path DIR` (repeatable): every path must lie inside one of the
 *   roots, after `..` and the symlinks of its existing part are resolved.
 * - Without `--allow-path`, paths are unrestricted while the API listens on
 *   loopback only (or not at all); once it listens beyond loopback, every
 *   path is refused, since anyone who reaches the API could otherwise read and
 *   truncate any file the process can.
 * - Beyond loopback, artefacts that can stop the process (the exit offramp,
 *   and the benchmark and file parts that end the run) are refused unless
 *   `--allow-exit` is given.
 *
 * Which fields are paths, and which configs can stop the process, each type
 * declares itself: `path` on a field of its config schema (schema/paths.ts),
 * `stopsProcess` on a ramp type (connectors/connector.ts).
 */
import { lstatSync, readlinkSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, sep } from 'node:path';
import { invalid } from '../core/errors';
import { MissingPackageError } from '../core/packages';
import type { TypeRegistry } from '../core/registry';
import type { ProcessStop } from '../connectors/connector';
import { codecConfig, type CodecSpec } from '../codecs/spec';
import type { JsonSchema } from '../schema/json-schema';
import { pathFields, type PathUse } from '../schema/paths';
import type { Artefact, RampArtefact } from './artefacts';
import type { Registries } from './registries';
import type { Kind } from './urls';

/** What the Repository asks at publish; throws a 400 naming the field to refuse. */
export interface PublishPolicy {
  /** `registries`: the types the artefact's parts name, which declare their path fields and whether they can stop the process */
  check(kind: Kind, artefact: Artefact, registries: Registries): void;
}

export interface PolicyOptions {
  /** roots that paths must lie in; none: unrestricted on loopback, nothing allowed beyond */
  allowPaths?: string[];
  /** artefacts that can stop the process are allowed beyond loopback too */
  allowExit?: boolean;
  /** the address the API is bound to; absent when there is no API */
  apiHost?: string;
}

/**
 * Why an artefact can stop the process, or undefined when it cannot: its
 * ramp type says so from the config (`stopsProcess`, connectors/connector.ts).
 */
function exitCapability(kind: Kind, artefact: Artefact, registries: Registries): ProcessStop | undefined {
  if (kind !== 'onramp' && kind !== 'offramp') return undefined;
  const ramp = artefact as RampArtefact;
  return rampType(registries, kind, ramp.type)?.stopsProcess?.(ramp.config ?? {});
}

export function isLoopback(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h === '::1' || /^127(\.\d{1,3}){3}$/.test(h) || /^::ffff:127(\.\d{1,3}){3}$/.test(h);
}

export class PathPolicy implements PublishPolicy {
  /** the roots as given (for messages) and resolved (for the check) */
  private readonly roots: { given: string; real: string }[];
  private readonly exposed: boolean;

  constructor(private readonly options: PolicyOptions = {}) {
    this.roots = (options.allowPaths ?? []).map((given) => ({ given, real: realPath(given) }));
    this.exposed = options.apiHost !== undefined && !isLoopback(options.apiHost);
  }

  check(kind: Kind, artefact: Artefact, registries: Registries): void {
    for (const { field, value } of pathsOf(registries, kind, artefact)) this.checkPath(field, value);
    const exit = exitCapability(kind, artefact, registries);
    if (exit && this.exposed && !this.options.allowExit) {
      throw invalid(`${exit.field}: refused: ${exit.what}, and the API listens beyond loopback (${this.options.apiHost}); start with --allow-exit to allow it`);
    }
  }

  private checkPath(field: string, path: string): void {
    if (this.roots.length === 0) {
      if (!this.exposed) return;
      throw invalid(`${field}: '${path}' is refused: the API listens beyond loopback (${this.options.apiHost}) and no --allow-path is given`);
    }
    const real = realPath(path);
    if (this.roots.some((root) => within(root.real, real))) return;
    const resolved = real === path ? '' : ` (resolves to ${real})`;
    throw invalid(`${field}: '${path}'${resolved} is outside the allowed paths (${this.roots.map((r) => r.given).join(', ')})`);
  }
}

/** The path fields an artefact sets, with their names as a 400 gives them and how eddy uses them. */
export function pathsOf(registries: Registries, kind: Kind, artefact: Artefact): { field: string; value: string; use: PathUse }[] {
  const found: { field: string; value: string; use: PathUse }[] = [];
  visitPaths(registries, kind, artefact, (field, value, use) => void found.push({ field, value, use }));
  return found;
}

/**
 * A registered type, or undefined when the name is none (the schema check
 * refuses it later, naming the field) or its optional package is missing
 * (the type's own lookup at publish says which).
 */
function lookUp<T>(registry: TypeRegistry<T>, name: unknown): T | undefined {
  if (typeof name !== 'string' || !registry.has(name)) return undefined;
  try {
    return registry.get(name);
  } catch (err) {
    if (err instanceof MissingPackageError) return undefined;
    throw err;
  }
}

function rampType(registries: Registries, kind: 'onramp' | 'offramp', name: unknown) {
  return kind === 'onramp' ? lookUp(registries.onramps, name) : lookUp(registries.offramps, name);
}

/**
 * Calls `visit` with each path field an artefact sets, as a string, by the
 * schemas of the types it names (`path` on a field, schema/paths.ts): its
 * name as a 400 gives it, its value, how eddy uses it, and a setter that
 * replaces the value. Safe on an artefact not validated yet (config files
 * resolve relative paths before publishing): what is not shaped as expected
 * is skipped, and the schema check refuses it later.
 */
export function visitPaths(
  registries: Registries,
  kind: Kind,
  artefact: unknown,
  visit: (field: string, value: string, use: PathUse, set: (value: string) => void) => void,
): void {
  const object = (v: unknown): Record<string, unknown> | undefined =>
    v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  const collect = (config: unknown, schema: JsonSchema | undefined, prefix: string) => {
    for (const { keys, use } of pathFields(schema)) {
      let holder = object(config);
      for (const key of keys.slice(0, -1)) holder = object(holder?.[key]);
      const last = keys[keys.length - 1];
      const value = holder?.[last];
      if (holder === undefined || typeof value !== 'string') continue;
      const target = holder;
      visit(`${prefix}${keys.join('.')}`, value, use, (v) => (target[last] = v));
    }
  };
  const body = object(artefact);
  if (body === undefined) return;
  if (kind === 'onramp' || kind === 'offramp') {
    collect(body.config, rampType(registries, kind, body.type)?.configSchema, 'config.');
    const codec = object(body.codec);
    if (codec !== undefined) collect(codecConfig(codec as CodecSpec), lookUp(registries.codecs, codec.name)?.configSchema, 'codec.config.');
  }
  if (kind === 'pipeline' && Array.isArray(body.nodes)) {
    for (const [i, node] of (body.nodes as unknown[]).entries()) {
      collect(object(node)?.config, lookUp(registries.operators, object(node)?.type)?.configSchema, `nodes[${i}].config.`);
    }
  }
}

/**
 * The absolute path with `..` and every symlink of its existing part
 * resolved, step by step as the system would: `a/link/../b` is `b` beside the
 * link's target, not `a/b`, and a dangling symlink leads where it points (a
 * file offramp would create its target). What does not exist yet cannot be a
 * symlink and is joined as written.
 */
export function realPath(path: string, depth = 0): string {
  if (depth > 40) throw invalid(`'${path}': too many levels of symbolic links`);
  const absolute = isAbsolute(path) ? path : `${process.cwd()}${sep}${path}`;
  const parts = absolute.split(sep).filter((p) => p !== '' && p !== '.');
  let current: string = sep;
  for (const [i, part] of parts.entries()) {
    if (part === '..') {
      current = dirname(current);
      continue;
    }
    const next = join(current, part);
    const stat = lstatOrUndefined(next);
    if (!stat?.isSymbolicLink()) {
      current = next;
      continue;
    }
    // resolve the link's target (itself maybe relative, with links and ..), then carry on below it
    const link = readlinkSync(next);
    const target = isAbsolute(link) ? link : `${current}${sep}${link}`;
    // joined as text, not with join(): join would fold a `..` lexically across a symlink
    return realPath([target, ...parts.slice(i + 1)].join(sep), depth + 1);
  }
  return current;
}

function lstatOrUndefined(path: string) {
  try {
    return lstatSync(path);
  } catch {
    return undefined;
  }
}

function within(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (!isAbsolute(rel) && rel !== '..' && !rel.startsWith(`..${sep}`));
}
