import type { Server } from 'node:http';
import { API_FLAG_USAGE, apiOptionsFromFlags, takeApiFlag, type ApiFlags } from './api/options';
import { listenLazily } from './api/listen';
import { loadConfigFiles } from './config/load';
import { Runtime } from './runtime/runtime';
import { LevelStore } from './runtime/store';
import { PathPolicy } from './runtime/policy';
import { version } from './version';
import { TEST_USAGE, testCommand, UsageError } from './testing/cli';
import { TAP_USAGE, tapCommand } from './api/tap-command';
import { parseWorkers, startClusterRuntime } from './workers/cli';
import { STATUS_USAGE, statusCommand } from './console/status';
import { TOP_USAGE, topCommand } from './console/top';
import { flagValue } from './core/argv';

const USAGE = `usage: eddy server run [-f FILE ...] [--no-api] [--api-host HOST] [--api-port PORT]
                       [--data-dir DIR] [--allow-path DIR ...] [--allow-exit] [--workers N|auto]
                       ${API_FLAG_USAGE}
       ${TEST_USAGE}
       ${STATUS_USAGE}
       ${TOP_USAGE}
       ${TAP_USAGE}
       eddy --version`;

interface RunOptions {
  files: string[];
  api: boolean;
  host: string;
  port: number;
  /** where artefacts and instances are kept across restarts; nothing is kept when absent */
  dataDir?: string;
  /** roots that published artefacts' paths must lie in */
  allowPaths: string[];
  /** artefacts that can stop the process are allowed with the API beyond loopback */
  allowExit: boolean;
  /** the API's access and input-limit flags (src/api/options.ts), when any is given */
  apiFlags?: ApiFlags;
  /** processes running the flows (docs/workers.md); 1, the default, runs everything in this process */
  workers: number;
}

export function parseRunArgs(args: string[]): RunOptions {
  const options: RunOptions = { files: [], api: true, host: '127.0.0.1', port: 9898, allowPaths: [], allowExit: false, workers: 1 };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    const value = () => flagValue(args, ++i, arg);
    if (arg === '-f' || arg === '--file') {
      options.files.push(value());
      // `-f a.yaml b.yaml` takes every following non-option argument too
      while (args[i + 1] !== undefined && !args[i + 1].startsWith('-')) options.files.push(args[++i]);
    } else if (arg === '--no-api' || arg === '-n') options.api = false;
    else if (arg === '--api-host') options.host = value();
    else if (arg === '--api-port') {
      options.port = Number(value());
      if (!Number.isInteger(options.port) || options.port < 0 || options.port > 65535) throw new Error(`--api-port: not a port: ${args[i]}`);
    }
    // persistence and what published artefacts may reach
    else if (arg === '--data-dir') options.dataDir = value();
    else if (arg === '--allow-path') options.allowPaths.push(value());
    else if (arg === '--allow-exit') options.allowExit = true;
    else if (arg === '--workers') options.workers = parseWorkers(value());
    else if (!takeApiFlag(arg, value, () => (options.apiFlags ??= {}))) throw new Error(`unknown argument '${arg}'`);
  }
  return options;
}

async function serverRun(args: string[]): Promise<number> {
  const options = parseRunArgs(args);
  // before anything starts: refuses a non-loopback --api-host without a token (exit 2)
  const apiOptions = options.api ? apiOptionsFromFlags(options.apiFlags ?? {}, options.host, process.env) : undefined;
  process.stderr.write(`eddy version: ${version}\n`);
  let store: LevelStore | undefined;
  try {
    if (options.dataDir !== undefined) store = await LevelStore.open(options.dataDir);
  } catch (err) {
    process.stderr.write(`error: ${(err as Error).message}\n`);
    return 1;
  }
  const policy = new PathPolicy({ allowPaths: options.allowPaths, allowExit: options.allowExit, apiHost: options.api ? options.host : undefined });
  let runtime: Runtime;
  try {
    runtime = options.workers > 1 ? await startClusterRuntime(options.workers, { store, policy }) : new Runtime({ store, policy });
  } catch (err) {
    process.stderr.write(`error: ${(err as Error).message}\n`);
    await store?.close();
    return 1;
  }
  let server: Server | undefined;
  let exiting = false;
  const exit = async (code: number) => {
    if (exiting) return;
    exiting = true;
    server?.close();
    server?.closeAllConnections();
    await runtime.shutdown();
    process.exit(code);
  };
  runtime.exitRequests.subscribe(({ code }) => void exit(code));
  process.once('SIGINT', () => void exit(0));
  process.once('SIGTERM', () => void exit(0));
  try {
    // what the data dir kept comes back first, then the files, then the API opens
    await runtime.start();
    await loadConfigFiles(runtime, options.files);
    await runtime.persisted();
  } catch (err) {
    process.stderr.write(`error: ${(err as Error).message}\n`);
    await runtime.shutdown();
    return 1;
  }
  if (options.api) {
    try {
      // express is required on the first request, not here: `--no-api` never loads it, and the flows do not wait for it
      server = await listenLazily(
        () => (require('./api/server') as typeof import('./api/server')).createApi(runtime, apiOptions), // eslint-disable-line @typescript-eslint/no-require-imports
        options.host,
        options.port,
      );
    } catch (err) {
      process.stderr.write(`error: ${(err as Error).message}\n`);
      await runtime.shutdown();
      return 1;
    }
    const address = server.address();
    const port = typeof address === 'object' && address ? address.port : options.port;
    process.stderr.write(`Listening at: http://${options.host}:${port}\n`);
  }
  return -1; // keep running until an exit request or a signal
}

export async function main(argv: string[]): Promise<number> {
  if (argv[0] === '--version' || argv[0] === '-V') {
    process.stdout.write(`eddy ${version}\n`);
    return 0;
  }
  if (argv[0] === 'server' && argv[1] === 'run') {
    try {
      return await serverRun(argv.slice(2));
    } catch (err) {
      process.stderr.write(`error: ${(err as Error).message}\n${USAGE}\n`);
      return 2;
    }
  }
  if (argv[0] === 'test') {
    try {
      return await testCommand(argv.slice(1), (text) => process.stdout.write(text));
    } catch (err) {
      if (!(err instanceof UsageError)) {
        process.stderr.write(`error: ${(err as Error).message}\n`);
        return 1;
      }
      process.stderr.write(`error: ${err.message}\nusage: ${TEST_USAGE}\n`);
      return 2;
    }
  }
  if (argv[0] === 'tap') {
    try {
      return await tapCommand(argv.slice(1), process.stdout, process.stderr);
    } catch (err) {
      process.stderr.write(`error: ${(err as Error).message}\nusage: ${TAP_USAGE}\n`);
      return 2;
    }
  }
  // a running eddy, seen through its API
  if (argv[0] === 'status') return statusCommand(argv.slice(1), process.env, (t) => process.stdout.write(t), (t) => process.stderr.write(t));
  if (argv[0] === 'top') return topCommand(argv.slice(1), process.env);
  process.stderr.write(`${USAGE}\n`);
  return argv.length === 0 || argv[0] === '--help' || argv[0] === '-h' ? 0 : 2;
}

if (require.main === module) {
  main(process.argv.slice(2)).then((code) => {
    if (code >= 0) process.exit(code);
  });
}
