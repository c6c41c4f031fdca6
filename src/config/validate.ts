/**
 * `eddy validate`: every check `eddy server run -f` makes of config files,
 * with no side effect. The files are applied as a dry run (`applyConfig`)
 * to a fresh runtime that has no API, no data dir and no running instance:
 * every artefact is validated, each mapping checked, and their activation
 * planned as a start plans it (ids, links, ports, the transactional and
 * checkpoint checks); that step is where a start begins to open sockets and
 * files, and validate stops there. What opening would find out
 * first is checked without opening: the files a flow reads must exist and be
 * readable, the files and folders it writes must be writable or creatable.
 *
 * What it cannot know without side effects (docs/config-files.md): a port
 * another program holds, a broker or database that does not answer or
 * refuses the credentials, a codec registry that is down.
 */
import { accessSync, constants, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { invalid } from '../core/errors';
import { createLogger } from '../core/logger';
import { maskUrlCredentials } from '../core/redact';
import type { PathUse } from '../schema/paths';
import type { Artefact } from '../runtime/artefacts';
import { PathPolicy, pathsOf } from '../runtime/policy';
import type { Registries } from '../runtime/registries';
import { Runtime } from '../runtime/runtime';
import type { Kind } from '../runtime/urls';
import { SECTIONS } from './declared';
import { applyConfig, withContext, type ConfigSource } from './load';
import { readConfigs } from './read-files';

export interface ValidateOptions {
  /** the config files, in the order a start would load them; `-` is standard input */
  files: string[];
  /** roots the files that artefacts use must lie in (`server run --allow-path`) */
  allowPaths: string[];
}

/** Where validate writes, and how it reads standard input. */
export interface ValidateIo {
  out: (text: string) => void;
  err: (text: string) => void;
  stdin: () => Promise<string>;
}

/** Checks the files together, as one start loads them; prints `FILE: ok (...)` per file and returns 0, or the first error and 1. */
export async function validateConfigFiles(options: ValidateOptions, io: ValidateIo): Promise<number> {
  try {
    const configs = await readConfigs(options.files, io.stdin);
    const policy = options.allowPaths.length > 0 ? new PathPolicy({ allowPaths: options.allowPaths }) : undefined;
    const runtime = new Runtime({ logger: createLogger('silent'), policy }).publishSystem();
    const { declared, opened } = await applyConfig(runtime, configs, { dryRun: true });
    for (const at of opened) {
      // as declared, its relative paths made absolute; a system artefact is declared by no file, and names no path
      const entry = declared.artefacts.get(`${at.kind}/${at.artefact}`);
      if (entry !== undefined)
        await withContext(`${entry.file}: ${at.kind} '${at.artefact}'`, () => checkPaths(runtime.registries, at.kind, entry.artefact as Artefact));
    }
    for (const { name, config } of configs) io.out(`${name}: ok (${summary(config)})\n`);
    return 0;
  } catch (err) {
    // the same words a start stops with (server-run.ts): a message may name a URL with credentials
    io.err(`error: ${maskUrlCredentials((err as Error).message)}\n`);
    return 1;
  }
}

/** `2 onramps, 1 pipeline, 1 mapping`: what a file declares (its flows as their bindings and mappings). */
function summary(config: ConfigSource['config']): string {
  const counts: [string, number][] = [
    ...SECTIONS.map((kind): [string, number] => [kind, config[kind]?.length ?? 0]),
    ['mapping', Object.keys(config.mapping ?? {}).length],
  ];
  const parts = counts.filter(([, n]) => n > 0).map(([what, n]) => `${n} ${what}${n === 1 ? '' : 's'}`);
  return parts.length > 0 ? parts.join(', ') : 'nothing declared';
}

/** The paths an instance would open: what it reads must be readable, what it writes writable or creatable. */
function checkPaths(registries: Registries, kind: Kind, artefact: Artefact): void {
  for (const { field, value, use } of pathsOf(registries, kind, artefact)) {
    const problem = use === 'read' ? unreadable(value) : unwritable(value, use);
    if (problem !== undefined) throw invalid(`${field}: ${problem}`);
  }
}

function unreadable(path: string): string | undefined {
  try {
    accessSync(path, constants.R_OK);
    return undefined;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return `cannot read '${path}': ${code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'no read permission' : (err as Error).message}`;
  }
}

function unwritable(path: string, written: Exclude<PathUse, 'read'>): string | undefined {
  const stat = statSync(path, { throwIfNoEntry: false });
  if (stat !== undefined) {
    if (written === 'file' && stat.isDirectory()) return `'${path}' is a directory, not a file to write`;
    return writable(path) ? undefined : `cannot write '${path}': no write permission`;
  }
  // a file is created in its folder, which must exist; a tree with the folders leading to it, from the nearest one that exists
  let folder = dirname(path);
  while (written === 'tree' && folder !== dirname(folder) && statSync(folder, { throwIfNoEntry: false }) === undefined) folder = dirname(folder);
  const parent = statSync(folder, { throwIfNoEntry: false });
  if (parent === undefined) return `cannot create '${path}': its folder '${folder}' does not exist`;
  if (!parent.isDirectory()) return `cannot create '${path}': '${folder}' is not a folder`;
  return writable(folder) ? undefined : `cannot create '${path}': no write permission in '${folder}'`;
}

function writable(path: string): boolean {
  try {
    accessSync(path, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}
