/**
 * A config document read and its top-level shape checked: a file's
 * (`readConfigFile`) or a request body's (`configDocument`), before any
 * artefact is looked at (load.ts applies it, reload.ts compares it).
 */
import { dirname } from 'node:path';
import { readYamlFile } from './yaml-file';
import { expandFlows } from './flow';
import { resolveRelativePaths } from './paths';
import type { SubstitutionSources } from './substitute';
import { invalid } from '../core/errors';
import { didYouMean } from '../core/suggest';
import { SECTIONS, at, type ConfigFile } from './declared';

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
