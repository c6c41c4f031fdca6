/**
 * Environment variables and secret files in config files: `${NAME}`,
 * `${NAME:-default}`, `${file:PATH}` and `$$`, replaced in the file's text
 * before it is parsed, as Vector and Benthos do, so a variable works in any
 * position (a port, a list, a key) and the parsed config holds plain values.
 *
 * Decisions (docs/config-files.md says the same to users):
 * - `${NAME:-default}` takes the default when NAME is unset or empty (the
 *   shell's `:-`); `${NAME}` unset is an error naming the file, the line and
 *   the variable, so a start never runs with a silently empty password.
 * - A value with a line break is refused: the replacement is textual, and a
 *   newline would let a variable's value add YAML keys of its own.
 * - `${file:PATH}` reads a secret kept in a file (a Kubernetes or Docker
 *   secret), without its trailing line break; a relative PATH is taken from
 *   the config file's folder.
 * - `$$` is one literal `$`; a `$` followed by anything else stays as it is,
 *   so CEL and text holding a lone `$` need no escaping.
 * - A whole-line comment (`# ...`) is left as written.
 * - Only config files given to `eddy server run -f` are substituted, not
 *   artefacts published over the REST API: the API's caller is not the
 *   process owner, and must not read the server's environment.
 */
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { invalid } from '../core/errors';

/** Where the values come from (the process's environment and files by default; tests pass their own). */
export interface SubstitutionSources {
  env: Readonly<Record<string, string | undefined>>;
  readFile(path: string): string;
}

const DEFAULT_SOURCES: SubstitutionSources = {
  env: process.env,
  readFile: (path) => readFileSync(path, 'utf8'),
};

/** `$$`, or `${` up to the next `}` (a reference, checked by REFERENCE). */
const TOKEN = /\$\$|\$\{([^}\n]*)\}?/g;
/** The inside of `${...}`: a name with an optional `:-default`, or `file:PATH`. */
const REFERENCE = /^(?:([A-Za-z_][A-Za-z0-9_]*)(?::-(.*))?|file:(.+))$/s;

/** The text with every reference replaced; `file` (the config file's path) names errors and anchors relative secret paths. */
export function substituteVariables(text: string, file: string, sources: SubstitutionSources = DEFAULT_SOURCES): string {
  // a whole-line comment is left as written: it may well mention a ${NAME} it does not mean to use
  return text
    .split('\n')
    .map((line, i) => (/^\s*#/.test(line) ? line : substituteLine(line, `${file}:${i + 1}`, file, sources)))
    .join('\n');
}

function substituteLine(text: string, at: string, file: string, sources: SubstitutionSources): string {
  return text.replace(TOKEN, (token: string, inner: string | undefined) => {
    if (token === '$$') return '$';
    const where = (): string => at;
    if (!token.endsWith('}')) throw invalid(`${where()}: '${token}' is not closed by '}'`);
    const match = REFERENCE.exec(inner ?? '');
    if (!match) throw invalid(`${where()}: '${token}' is not a variable reference (\${NAME}, \${NAME:-default} or \${file:PATH}; $$ for a literal $)`);
    // optional groups: a file reference has a path (and no name), a variable a name (and a fallback when given)
    const name = match[1];
    const fallback = match[2] as string | undefined;
    const path = match[3] as string | undefined;
    const value = path !== undefined ? readSecret(path, file, where, sources) : variable(name, fallback, where, sources);
    if (/[\r\n]/.test(value))
      throw invalid(`${where()}: the value of '${token}' holds a line break, which would change the file's structure; give it on one line`);
    return value;
  });
}

function variable(name: string, fallback: string | undefined, where: () => string, sources: SubstitutionSources): string {
  const value = sources.env[name];
  if (value !== undefined && value !== '') return value;
  if (fallback !== undefined) return fallback;
  if (value === '') return value;
  throw invalid(`${where()}: environment variable ${name} is not set (use \${${name}:-default} to give a default)`);
}

function readSecret(path: string, file: string, where: () => string, sources: SubstitutionSources): string {
  const full = resolve(dirname(file), path);
  try {
    return sources.readFile(full).replace(/\r?\n$/, '');
  } catch (err) {
    throw invalid(`${where()}: cannot read secret file ${full}: ${(err as Error).message}`);
  }
}
