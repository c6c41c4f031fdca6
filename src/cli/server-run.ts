import type { Server } from 'node:http';
import { availableParallelism } from 'node:os';
import { API_DEFAULTS, apiOptionsFromFlags, checkToken, MAX_DEPTH_CEILING, normalizeOrigin, type ApiFlags, type ApiOptions } from '../api/options';
import { apiTlsFlag, listenLazily, watchCertificates } from '../api/listen';
import type { CertificateWatch, ServerTlsConfig } from '../net/tls';
import { loadConfigFiles } from '../config/load';
import { ConfigReloader } from '../config/reload';
import { ConfigWatcher } from '../config/watch';
import { Runtime } from '../runtime/runtime';
import { LevelStore } from '../runtime/store';
import { PathPolicy } from '../runtime/policy';
import { maskUrlCredentials } from '../core/redact';
import { parseLogLevels, type LogFormat } from '../core/logger';
import { version } from '../version';
import { startClusterRuntime } from '../workers/start';
import { UsageError, defineCommand, optionsOf, type CommandLine } from './command';

const FLAGS = {
  file: {
    type: 'string',
    short: 'f',
    multiple: true,
    greedy: true,
    value: 'FILE',
    description: 'load a config file (YAML or JSON), in order; the arguments after it that do not start with - are files too',
  },
  watch: {
    type: 'boolean',
    short: 'w',
    description: 'reload the config files when one changes (SIGHUP reloads them too, with or without it; docs/config-files.md)',
  },
  'no-api': { type: 'boolean', short: 'n', description: 'run without the REST API' },
  'log-format': {
    type: 'string',
    value: 'FORMAT',
    env: 'EDDY_LOG_FORMAT',
    default: 'text',
    description: 'text, or json: one JSON object per log line (time, level, module, instance, msg, fields); levels come from EDDY_LOG (docs/observe.md)',
  },
  'api-host': { type: 'string', value: 'HOST', default: '127.0.0.1', description: 'the address the REST API listens on' },
  'api-port': { type: 'string', value: 'PORT', default: '9898', description: "the REST API's port; 0 takes a free one" },
  'api-token': {
    type: 'string',
    value: 'TOKEN',
    env: 'EDDY_API_TOKEN',
    description: 'every API request then needs Authorization: Bearer TOKEN',
  },
  'api-allow-origin': {
    type: 'string',
    multiple: true,
    value: 'ORIGIN',
    description: 'an origin (scheme://host[:port]) the API accepts besides its own address',
  },
  'api-max-body': {
    type: 'string',
    value: 'BYTES',
    default: String(API_DEFAULTS.maxBodyBytes),
    description: 'the largest request body (413 beyond)',
  },
  'api-max-depth': {
    type: 'string',
    value: 'N',
    default: String(API_DEFAULTS.maxDepth),
    description: `the deepest nesting of a request body (400 beyond), at most ${MAX_DEPTH_CEILING}`,
  },
  'api-tls-cert': {
    type: 'string',
    value: 'FILE',
    description: 'serve the API over HTTPS with this certificate (PEM; needs --api-tls-key); reloaded when the file changes',
  },
  'api-tls-key': { type: 'string', value: 'FILE', description: 'the private key (PEM) of --api-tls-cert; reloaded when the file changes' },
  'api-tls-ca': { type: 'string', value: 'FILE', description: 'CA certificates (PEM) that API clients may present a certificate signed by' },
  'api-tls-require-client-cert': { type: 'boolean', description: 'refuse API clients without a certificate signed by --api-tls-ca (mutual TLS)' },
  insecure: { type: 'boolean', description: 'allow a non-loopback --api-host without a token' },
  'api-allow-secrets': {
    type: 'boolean',
    description: 'let the API take artefacts that set a password or token in clear text (refused otherwise; the API shows them as "***" either way)',
  },
  'data-dir': {
    type: 'string',
    value: 'DIR',
    description: 'keep artefacts and running instances here across restarts (nothing is kept without it)',
  },
  'allow-path': { type: 'string', multiple: true, value: 'DIR', description: 'a directory the files that published artefacts use must lie in' },
  'allow-exit': { type: 'boolean', description: 'allow the parts that can stop the process when the API listens beyond loopback' },
  workers: {
    type: 'string',
    value: 'N|auto',
    default: '1',
    description: 'run the flows in N worker processes (auto: one per core); 1 runs them in this one',
  },
} as const;

export interface RunOptions {
  files: string[];
  /** reload the files when they change */
  watch: boolean;
  api: boolean;
  host: string;
  port: number;
  /** where artefacts and instances are kept across restarts; nothing is kept when absent */
  dataDir?: string;
  /** roots that published artefacts' paths must lie in */
  allowPaths: string[];
  /** artefacts that can stop the process are allowed with the API beyond loopback */
  allowExit: boolean;
  /** the API's access and input-limit flags, as given */
  apiFlags: ApiFlags;
  /** what the API is started with; absent with --no-api */
  apiOptions?: ApiOptions;
  /** the API's certificate: HTTPS; absent: plain HTTP */
  apiTls?: ServerTlsConfig;
  /** processes running the flows (docs/workers.md); 1, the default, runs everything in this process */
  workers: number;
  /** how log lines are written */
  logFormat: LogFormat;
}

/** `--workers N` (a whole number ≥ 1) or `auto` (one per core: os.availableParallelism()). */
export function parseWorkers(value: string): number {
  if (value === 'auto') return availableParallelism();
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(n) || n < 1) {
    throw new Error(`--workers: '${value}' is not a number of workers (a whole number >= 1, or auto)`);
  }
  return n;
}

/** A whole number from 1 to `max`, or an error naming the flag. */
function count(flag: string, text: string, max = Number.MAX_SAFE_INTEGER): number {
  const n = Number(text);
  if (!/^\d+$/.test(text) || n < 1 || n > max) throw new Error(`${flag}: not a whole number from 1 to ${max}: ${text}`);
  return n;
}

function runOptions(line: CommandLine<typeof FLAGS>, env: NodeJS.ProcessEnv): RunOptions {
  const { values } = line;
  const port = Number(values['api-port']);
  if (!/^\d+$/.test(values['api-port']) || port > 65535) throw new Error(`--api-port: not a port: ${values['api-port']}`);
  const api = !values['no-api'];
  const apiFlags: ApiFlags = {
    maxBodyBytes: count('--api-max-body', values['api-max-body']),
    maxDepth: count('--api-max-depth', values['api-max-depth'], MAX_DEPTH_CEILING),
  };
  const token = values['api-token'];
  const tokenFrom = line.source('api-token');
  // a token given as a flag is checked even with --no-api, as it always was; one in the environment only when the API runs
  if (token !== undefined && (api || tokenFrom !== 'EDDY_API_TOKEN')) {
    checkToken(token, tokenFrom);
    apiFlags.token = token;
  }
  if (values['api-allow-origin'].length > 0) apiFlags.allowOrigins = values['api-allow-origin'].map((o) => normalizeOrigin(o, '--api-allow-origin'));
  if (values.insecure) apiFlags.insecure = true;
  if (values['api-allow-secrets']) apiFlags.allowSecrets = true;
  const host = values['api-host'];
  const apiTls = tlsFlags(values['api-tls-cert'], values['api-tls-key'], values['api-tls-ca'], values['api-tls-require-client-cert']);
  if (values.watch && values.file.length === 0) throw new Error('--watch: no config file to watch (give one with -f FILE)');
  return {
    files: values.file,
    watch: values.watch,
    api,
    host,
    port,
    dataDir: values['data-dir'],
    allowPaths: values['allow-path'],
    allowExit: values['allow-exit'],
    apiFlags,
    // refuses a non-loopback --api-host without a token, before anything starts (exit 2)
    apiOptions: api ? apiOptionsFromFlags(apiFlags, host, env) : undefined,
    apiTls,
    workers: parseWorkers(values.workers),
    logFormat: logFormat(values['log-format'], env),
  };
}

/** `--log-format`; EDDY_LOG is read here too, so a level it cannot read stops the start with a message naming it. */
function logFormat(value: string, env: NodeJS.ProcessEnv): LogFormat {
  if (value !== 'text' && value !== 'json') throw new UsageError(`--log-format: text or json, not '${value}'`);
  parseLogLevels(env.EDDY_LOG ?? 'info');
  return value;
}

/** The --api-tls-* flags as a `tls` config; the files are read when the API starts. */
function tlsFlags(cert: string | undefined, key: string | undefined, ca: string | undefined, requireClientCert: boolean): ServerTlsConfig | undefined {
  if (cert === undefined && key === undefined) {
    const stray = ca !== undefined ? 'ca' : requireClientCert ? 'require_client_cert' : undefined;
    if (stray !== undefined) throw new Error(`${apiTlsFlag(stray)}: needs --api-tls-cert and --api-tls-key`);
    return undefined;
  }
  if (cert === undefined) throw new Error('--api-tls-key: needs --api-tls-cert');
  if (key === undefined) throw new Error('--api-tls-cert: needs --api-tls-key');
  return { cert, key, ...(ca === undefined ? {} : { ca }), require_client_cert: requireClientCert };
}

export const serverRunCommand = defineCommand({
  name: 'server run',
  summary: 'run the flows of config files, and the REST API',
  description:
    'Loads each config file in order, then serves the REST API (docs/rest-api.md) until an exit offramp, SIGINT or SIGTERM stops it (exit 0, ' +
    "or the exit offramp's status). Exit 1 when a config file, the data dir or the API port cannot be used; 2 for bad usage, and for a " +
    'non-loopback --api-host without a token. docs/command-line.md says more about each flag, docs/security.md about the API flags.',
  flags: FLAGS,
  options: runOptions,
  run: serverRun,
});

/** The options of `eddy server run ARGS`; an Error for bad usage. */
export function parseRunArgs(args: string[], env: NodeJS.ProcessEnv = {}): RunOptions {
  return optionsOf(serverRunCommand, args, env);
}

/** The error that stops the server, on stderr: a config file's flow that cannot start may name a URL with credentials (core/redact.ts). */
function failed(err: unknown): void {
  process.stderr.write(`error: ${maskUrlCredentials((err as Error).message)}\n`);
}

async function serverRun(options: RunOptions): Promise<number> {
  // the runtime's logger and every worker's read it from the environment
  process.env.EDDY_LOG_FORMAT = options.logFormat;
  process.stderr.write(`eddy version: ${version}\n`);
  let store: LevelStore | undefined;
  try {
    if (options.dataDir !== undefined) store = await LevelStore.open(options.dataDir);
  } catch (err) {
    failed(err);
    return 1;
  }
  const policy = new PathPolicy({ allowPaths: options.allowPaths, allowExit: options.allowExit, apiHost: options.api ? options.host : undefined });
  let runtime: Runtime;
  try {
    runtime = options.workers > 1 ? await startClusterRuntime(options.workers, { store, policy }) : new Runtime({ store, policy });
  } catch (err) {
    failed(err);
    await store?.close();
    return 1;
  }
  let server: Server | undefined;
  let watcher: ConfigWatcher | undefined;
  let certificates: CertificateWatch | undefined;
  let exiting = false;
  const exit = async (code: number) => {
    if (exiting) return;
    exiting = true;
    watcher?.stop();
    certificates?.stop();
    server?.close();
    server?.closeAllConnections();
    await runtime.shutdown();
    process.exit(code);
  };
  runtime.exitRequests.subscribe(({ code }) => void exit(code));
  process.once('SIGINT', () => void exit(0));
  process.once('SIGTERM', () => void exit(0));
  // nothing keeps the process alive any more (every source ended, no API): it stops as on SIGTERM, so what
  // operators hold (open windows, a batch) is flushed to the sinks instead of vanishing with the process
  process.once('beforeExit', () => void exit(0));
  try {
    // what the data dir kept comes back first, then the files, then the API opens
    await runtime.start();
    const declared = await loadConfigFiles(runtime, options.files);
    await runtime.persisted();
    if (options.files.length > 0)
      watcher = new ConfigWatcher(new ConfigReloader(runtime, options.files, declared, runtime.logger), options.files, runtime.logger).start(options.watch);
  } catch (err) {
    failed(err);
    await runtime.shutdown();
    return 1;
  }
  if (options.api) {
    try {
      // express is required on the first request, not here: `--no-api` never loads it, and the flows do not wait for it
      server = await listenLazily(
        () => (require('../api/server') as typeof import('../api/server')).createApi(runtime, options.apiOptions), // eslint-disable-line @typescript-eslint/no-require-imports -- express loads on the first request only
        options.host,
        options.port,
        options.apiTls,
      );
    } catch (err) {
      failed(err);
      await runtime.shutdown();
      return 1;
    }
    if (options.apiTls !== undefined) certificates = watchCertificates(server, options.apiTls, runtime.logger);
    const address = server.address();
    const port = typeof address === 'object' && address ? address.port : options.port;
    process.stderr.write(`Listening at: ${options.apiTls === undefined ? 'http' : 'https'}://${options.host}:${port}\n`);
  }
  return -1; // keep running until an exit request or a signal
}
