import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { invalid } from '../core/errors';
import { yamlErrorMessage } from '../core/yaml-error';
import { substituteVariables, type SubstitutionSources } from './substitute';

/**
 * Reads a YAML or JSON file (YAML is a superset of JSON); errors name the file
 * and say whether it was unreadable or malformed. With `substitute`, `${NAME}`
 * and the other references of substitute.ts are replaced in the text first.
 * With `text`, that is the file's content (read already: standard input),
 * and `path` only names it; `sources` are where the references take their
 * values (the process's environment and files by default).
 */
export function readYamlFile(path: string, options: { substitute?: boolean; text?: string; sources?: SubstitutionSources } = {}): unknown {
  let text: string;
  try {
    text = options.text ?? readFileSync(path, 'utf8');
  } catch (err) {
    throw invalid(`${path}: cannot read: ${(err as Error).message}`);
  }
  if (options.substitute) text = substituteVariables(text, path, options.sources);
  try {
    return parseYaml(text);
  } catch (err) {
    throw invalid(`${path}: not valid YAML or JSON: ${yamlErrorMessage(err, text)}`);
  }
}
