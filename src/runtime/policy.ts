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
 */
import { lstatSync, readlinkSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, sep } from 'node:path';
import { invalid } from '../core/errors';
import type { Artefact, RampArtefact } from './artefacts';
import { codecConfig, type CodecSpec } from '../codecs/spec';
import type { Kind } from './urls';

/** What the Repository asks at publish; throws a 400 naming the field to refuse. */
export interface PublishPolicy {
  check(kind: Kind, artefact: Artefact): void;
}

export interface PolicyOptions {
  /** roots that paths must lie in; none: unrestricted on loopback, nothing allowed beyond */
  allowPaths?: string[];
  /** artefacts that can stop the process are allowed beyond loopback too */
  allowExit?: boolean;
  /** the address the API is bound to; absent when there is no API */
  apiHost?: string;
}

/** A field of a config holding a path, as the keys leading to it. */
type PathField = readonly string[];

/**
 * Every config field of a builtin type that names a file or directory. A
 * test walks every registered schema for fields that look like paths, so a
 * new one cannot be forgotten here.
 */
export const RAMP_PATH_FIELDS: Record<'onramp' | 'offramp', Record<string, readonly PathField[]>> = {
  onramp: {
    file: [['source']],
    blaster: [['source']],
    cb: [['source']],
    postgres: [['cache', 'path']],
    nats: NATS_PATHS(),
    kafka: KAFKA_PATHS(),
    pubsub: [['pem']],
    rest: TLS_PATHS(),
    ws: TLS_PATHS(),
    tcp: TLS_PATHS(),
    otel: TLS_PATHS(),
  },
  offramp: {
    file: [['file']],
    kv: [['dir']],
    nats: NATS_PATHS(),
    kafka: KAFKA_PATHS(),
    logvendor: [['ca_file']],
    otel: TLS_PATHS(),
  },
};

export const OPERATOR_PATH_FIELDS: Record<string, readonly PathField[]> = {
  'qos::wal': [['dir']],
  'enrich::lookup': [['table', 'file']],
};

/** Codec config fields that name a file (`codec: {name, config}`), checked like a ramp's. */
export const CODEC_PATH_FIELDS: Record<string, readonly PathField[]> = {
  avro: [['schema_file']],
  protobuf: [['schema_file']],
};

/** A listener's `tls` (schema/fields.ts serverTls), and the otel offramp's client-side one (the same three files). */
function TLS_PATHS(): PathField[] {
  return ['cert', 'key', 'ca'].map((f) => ['tls', f]);
}

function NATS_PATHS(): PathField[] {
  return ['credentials_path', 'cert_path', 'key_path', 'root_cert'].map((f) => ['options', f]);
}

function KAFKA_PATHS(): PathField[] {
  return ['ssl.ca.location', 'ssl.certificate.location', 'ssl.key.location', 'ssl.keystore.location', 'ssl.crl.location'].map((f) => ['rdkafka_options', f]);
}

/** Why an artefact can stop the process, or undefined when it cannot. */
function exitCapability(kind: Kind, artefact: Artefact): { field: string; what: string } | undefined {
  if (kind !== 'onramp' && kind !== 'offramp') return undefined;
  const ramp = artefact as RampArtefact;
  const config = ramp.config ?? {};
  if (kind === 'offramp' && ramp.type === 'exit') return { field: 'type', what: 'the exit offramp stops the process on an event' };
  // only a measuring blackhole (the benchmark keys) ends the run; a plain one (no config) only acks and discards
  if (kind === 'offramp' && ramp.type === 'blackhole' && config.stop_after_secs !== undefined && config.stop_after_secs !== 0) {
    return { field: 'config.stop_after_secs', what: 'a blackhole with stop_after_secs stops the process when it has measured' };
  }
  if (kind === 'onramp' && ramp.type === 'cb') return { field: 'type', what: 'the cb onramp stops the process when its run is over' };
  if (kind === 'onramp' && ramp.type === 'file' && config.close_on_done === true)
    return { field: 'config.close_on_done', what: 'close_on_done stops the process at the end of the file' };
  return undefined;
}

export function isLoopback(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h === '::1' || /^127(\.\d{1,3}){3}$/.test(h) || /^::ffff:127(\.\d{1,3}){3}$/.test(h);
}

export class PathPolicy implements PublishPolicy {
  /** the roots as given (for messages) and resolved (for the check) */
  private readonly roots: Array<{ given: string; real: string }>;
  private readonly exposed: boolean;

  constructor(private readonly options: PolicyOptions = {}) {
    this.roots = (options.allowPaths ?? []).map((given) => ({ given, real: realPath(given) }));
    this.exposed = options.apiHost !== undefined && !isLoopback(options.apiHost);
  }

  check(kind: Kind, artefact: Artefact): void {
    for (const { field, value } of pathsOf(kind, artefact)) this.checkPath(field, value);
    const exit = exitCapability(kind, artefact);
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

/** The path-bearing fields an artefact sets, with their names as a 400 gives them, and whether eddy writes them (`Written`). */
export function pathsOf(kind: Kind, artefact: Artefact): Array<{ field: string; value: string; written: Written | undefined }> {
  const found: Array<{ field: string; value: string; written: Written | undefined }> = [];
  visitPaths(kind, artefact, (field, value, written) => void found.push({ field, value, written }));
  return found;
}

/**
 * A path eddy writes, and creates when missing: `file`, a file created in
 * a folder that must exist (a file offramp's); `tree`, created with the
 * folders leading to it (a directory of state). Every other path field
 * names a file eddy reads, which must exist (`eddy validate` checks both).
 */
export type Written = 'file' | 'tree';

const WRITTEN_PATHS = new Map<string, Written>([
  ['offramp file config.file', 'file'],
  ['offramp kv config.dir', 'tree'],
  ['onramp postgres config.cache.path', 'tree'],
  ['operator qos::wal config.dir', 'tree'],
]);

/**
 * Calls `visit` with each path-bearing field an artefact sets, as a string:
 * its name as a 400 gives it, its value, whether eddy writes it, and a
 * setter that replaces the value. Safe on an artefact not validated yet
 * (config files resolve relative paths before publishing): what is not
 * shaped as expected is skipped, and the schema check refuses it later.
 */
export function visitPaths(
  kind: Kind,
  artefact: unknown,
  visit: (field: string, value: string, written: Written | undefined, set: (value: string) => void) => void,
): void {
  const object = (v: unknown): Record<string, unknown> | undefined =>
    v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  const collect = (config: unknown, fields: readonly PathField[] | undefined, prefix: string, role: string) => {
    for (const keys of fields ?? []) {
      let holder = object(config);
      for (const key of keys.slice(0, -1)) holder = object(holder?.[key]);
      const last = keys[keys.length - 1];
      const value = holder?.[last];
      if (holder === undefined || typeof value !== 'string') continue;
      const target = holder;
      visit(`${prefix}${keys.join('.')}`, value, WRITTEN_PATHS.get(`${role} config.${keys.join('.')}`), (v) => (target[last] = v));
    }
  };
  const body = object(artefact);
  if (body === undefined) return;
  if ((kind === 'onramp' || kind === 'offramp') && typeof body.type === 'string') {
    const fields = Object.hasOwn(RAMP_PATH_FIELDS[kind], body.type) ? RAMP_PATH_FIELDS[kind][body.type] : undefined;
    collect(body.config, fields, 'config.', `${kind} ${body.type}`);
    const codec = object(body.codec);
    if (codec !== undefined && typeof codec.name === 'string' && Object.hasOwn(CODEC_PATH_FIELDS, codec.name))
      collect(codecConfig(codec as CodecSpec), CODEC_PATH_FIELDS[codec.name], 'codec.config.', `codec ${codec.name}`);
  }
  if (kind === 'pipeline' && Array.isArray(body.nodes)) {
    for (const [i, node] of (body.nodes as unknown[]).entries()) {
      const type = object(node)?.type;
      if (typeof type === 'string' && Object.hasOwn(OPERATOR_PATH_FIELDS, type))
        collect(object(node)!.config, OPERATOR_PATH_FIELDS[type], `nodes[${i}].config.`, `operator ${type}`);
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
