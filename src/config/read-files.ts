import { invalid } from '../core/errors';
import { readConfigFile, type ConfigSource } from './load';
import type { SubstitutionSources } from './substitute';

/** The name standard input (`-`) has in messages; relative paths in it are taken from the working directory. */
export const STDIN_NAME = '<stdin>';

/**
 * Reads config files in order (`readConfigFile`), `-` from standard input
 * (`eddy validate`, `eddy config`), which can be read once.
 */
export async function readConfigs(files: readonly string[], stdin: () => Promise<string>, sources?: SubstitutionSources): Promise<ConfigSource[]> {
  if (files.filter((f) => f === '-').length > 1) throw invalid('- (standard input) is named more than once: it can be read once');
  const configs: ConfigSource[] = [];
  for (const file of files) {
    const name = file === '-' ? STDIN_NAME : file;
    const text = file === '-' ? await stdin() : undefined;
    configs.push({ name, config: await readConfigFile(name, { text, sources }) });
  }
  return configs;
}
