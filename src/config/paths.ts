/**
 * Relative paths in a config file are taken from the file's folder, as
 * `${file:PATH}` is and as a case file's `pipeline:` is: a config runs the
 * same from any working directory. They are made absolute when the file is
 * read, so the artefact published (and shown by the API, compared by a
 * reload) holds the absolute path; an artefact published over the REST API
 * keeps paths as sent, taken from the server's working directory. A
 * pipeline file a case file names (`eddy test`) is read the same way.
 */
import { isAbsolute, resolve } from 'node:path';
import { visitPaths } from '../runtime/policy';
import { Registries } from '../runtime/registries';
import type { Kind } from '../runtime/urls';
import { SECTIONS, type ConfigFile } from './declared';

/**
 * The types whose path fields are resolved: the builtin ones, since a file
 * is read before (and apart from) the runtime it is applied to; made on the
 * first file read, each type's module loaded when an artefact names it.
 */
let builtins: Registries | undefined;

/** The config with every relative path field of its artefacts made absolute against `dir`, in place. */
export function resolveRelativePaths(config: ConfigFile, dir: string): ConfigFile {
  for (const kind of SECTIONS) for (const artefact of config[kind] ?? []) resolveArtefactPaths(kind, artefact, dir);
  return config;
}

/** One artefact (not validated yet) with its relative path fields made absolute against `dir`, in place: a pipeline file `eddy test` reads too. */
export function resolveArtefactPaths(kind: Kind, artefact: unknown, dir: string): void {
  visitPaths((builtins ??= Registries.withBuiltins()), kind, artefact, (_field, value, _use, set) => {
    // an empty path stays as written: the type's own check names the field
    if (value !== '' && !isAbsolute(value)) set(resolve(dir, value));
  });
}
