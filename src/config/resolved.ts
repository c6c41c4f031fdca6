/**
 * `eddy config`: what config files come to once read, as a start publishes
 * them: `${NAME}` and `${file:PATH}` replaced, relative paths made absolute,
 * `flow` entries expanded into bindings and mappings, a link-less
 * pipeline's chain spelt out, and the schema defaults of every ramp, codec
 * and operator config filled in. The files are applied as a dry run to a
 * fresh runtime that opens nothing (as `eddy validate` does), so a file
 * that does not validate is an error, with the message a start would give.
 *
 * Secrets are shown as "***" (docs/config-files.md says the same):
 * - what the REST API masks: every field a type's schema marks secret
 *   (`writeOnly`: passwords, tokens, keys) and the password of a URL;
 * - every string that holds a value taken from a secret file (`${file:PATH}`);
 * - every string that holds the value of a variable named like a secret
 *   (its name holds PASSWORD, PASSWD, PASS, TOKEN, SECRET, KEY or CREDENTIAL).
 * Other variables are shown with their values: seeing them is what the
 * command is for (a port, a host, a file name).
 */
import { readFileSync } from 'node:fs';
import { stringify as toYaml } from 'yaml';
import { createLogger } from '../core/logger';
import { REDACTED, maskUrlCredentials } from '../core/redact';
import type { Artefact, PipelineArtefact, RampArtefact } from '../runtime/artefacts';
import { Runtime } from '../runtime/runtime';
import type { Kind } from '../runtime/urls';
import { SECTIONS, mappingValues, type ConfigFile } from './declared';
import { applyConfig, type ConfigSource } from './load';
import { readConfigs } from './read-files';
import type { SubstitutionSources } from './substitute';

export interface ConfigOptions {
  /** the config files, in the order a start would load them; `-` is standard input */
  files: string[];
  /** JSON instead of YAML */
  json: boolean;
}

/** Where `eddy config` writes, the environment it substitutes from, and how it reads standard input. */
export interface ConfigIo {
  out: (text: string) => void;
  err: (text: string) => void;
  env: NodeJS.ProcessEnv;
  stdin: () => Promise<string>;
}

/** A variable whose value is a secret, by its name. */
const SECRET_NAME = /PASS|TOKEN|SECRET|KEY|CREDENTIAL/i;

/**
 * Prints each file resolved: YAML, one document per file after a `# FILE`
 * comment line; with `json`, one JSON object of each file's config by its
 * name. Returns 0, or prints the error and returns 1.
 */
export async function printResolvedConfigs(options: ConfigOptions, io: ConfigIo): Promise<number> {
  try {
    const secrets = new Set<string>();
    const configs = await readConfigs(options.files, io.stdin, recordingSources(io.env, secrets));
    const runtime = new Runtime({ logger: createLogger('silent') }).publishSystem();
    await applyConfig(runtime, configs, { dryRun: true });
    const resolved = configs.map((c) => ({ name: c.name, config: maskValues(resolveConfig(runtime, c), secrets) }));
    if (options.json) io.out(`${JSON.stringify(Object.fromEntries(resolved.map((r) => [r.name, r.config])), null, 2)}\n`);
    else io.out(resolved.map((r) => `# ${r.name}\n${toYaml(r.config)}`).join('---\n'));
    return 0;
  } catch (err) {
    io.err(`error: ${maskUrlCredentials((err as Error).message)}\n`);
    return 1;
  }
}

/** The process's sources of `${...}` values, noting each value that is a secret by where it came from. */
function recordingSources(env: NodeJS.ProcessEnv, secrets: Set<string>): SubstitutionSources {
  const note = (value: string | undefined) => {
    if (value !== undefined && value !== '') secrets.add(value);
  };
  return {
    // a proxy, so only the variables the files use are looked at
    env: new Proxy(env, {
      get(target, name) {
        const value = target[name as string];
        if (typeof name === 'string' && SECRET_NAME.test(name)) note(value);
        return value;
      },
    }),
    readFile(path) {
      const text = readFileSync(path, 'utf8');
      note(text.replace(/\r?\n$/, ''));
      return text;
    },
  };
}

/** One file's sections as published, in the order a start publishes them, then its mappings with their values. */
function resolveConfig(runtime: Runtime, { config }: ConfigSource): ConfigFile {
  const resolved: ConfigFile = {};
  for (const kind of SECTIONS) {
    const artefacts = config[kind] ?? [];
    if (artefacts.length > 0) resolved[kind] = artefacts.map((a) => withDefaults(runtime, kind, a));
  }
  if (config.mapping !== undefined) resolved.mapping = Object.fromEntries(Object.entries(config.mapping).map(([key, values]) => [key, mappingValues(values)]));
  return resolved;
}

/** The artefact as it is published (validated: a pipeline's chain spelt out) with its configs' defaults filled in, secrets masked as the API masks them. */
function withDefaults(runtime: Runtime, kind: Kind, declared: unknown): Artefact {
  const { repository } = runtime;
  const artefact = repository.validate(kind, declared);
  if (kind === 'onramp' || kind === 'offramp') {
    const ramp = artefact as RampArtefact;
    ramp.config = orAbsent(ramp.config, repository.rampConfig(kind, ramp));
    if (typeof ramp.codec === 'object' && ramp.codec.config !== undefined) ramp.codec.config = repository.codecConfig(ramp.codec);
  }
  if (kind === 'pipeline') {
    const pipeline = artefact as PipelineArtefact;
    pipeline.nodes = pipeline.nodes.map((node, i) => ({
      ...node,
      config: orAbsent(node.config, repository.operatorConfig(node.type, node.config, `nodes[${i}]`)),
    }));
  }
  return repository.redacted(kind, artefact);
}

/** The config with its defaults; still absent when it was and the type has no defaults (`config: {}` says nothing). */
function orAbsent(given: Record<string, unknown> | undefined, filled: Record<string, unknown>): Record<string, unknown> | undefined {
  return given === undefined && Object.keys(filled).length === 0 ? undefined : filled;
}

/** The value with every string that holds one of `secrets` replaced by "***". */
function maskValues<T>(value: T, secrets: ReadonlySet<string>): T {
  if (secrets.size === 0) return value;
  const mask = (v: unknown): unknown => {
    if (typeof v === 'string' || typeof v === 'number') return [...secrets].some((s) => String(v).includes(s)) ? REDACTED : v;
    if (Array.isArray(v)) return v.map(mask);
    if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, mask(x)]));
    return v;
  };
  return mask(value) as T;
}
