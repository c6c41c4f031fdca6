import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { invalid } from '../core/errors';

/** Reads a YAML or JSON file (YAML is a superset of JSON); errors name the file and say whether it was unreadable or malformed. */
export function readYamlFile(path: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw invalid(`${path}: cannot read: ${(err as Error).message}`);
  }
  try {
    return parseYaml(text);
  } catch (err) {
    throw invalid(`${path}: not valid YAML or JSON: ${(err as Error).message.split('\n')[0]}`);
  }
}
