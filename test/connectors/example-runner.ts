import { spawn, type ChildProcess } from 'node:child_process';
import { EDDY } from '../helpers/cli';
import { eventually } from '../helpers/runtime';

/** An eddy child process, with its output so far. */
export interface EddyProcess {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** stdout lines that parse as JSON */
  events(): unknown[];
  /**
   * The first match of `pattern` on stderr (the runtime logs at info), once
   * it is there: how a test learns the port a connector given port 0 bound.
   * Fails at once when the process exits first, naming what it said.
   */
  logged(pattern: RegExp, ms?: number): Promise<RegExpExecArray>;
  /** SIGTERM, then the exit code */
  stop(): Promise<number | null>;
}

/** `eddy server run -f FILE --no-api` as a child process. */
export function runExample(file: string): EddyProcess {
  return runEddyProcess([EDDY, 'server', 'run', '-f', file, '--no-api']);
}

/** `node ARGS` (the eddy command or scripts/start.js, with theirs) logging at info; killed after `killAfterMs`. */
export function runEddyProcess(args: string[], killAfterMs = 20000): EddyProcess {
  const child = spawn(process.execPath, args, { env: { ...process.env, EDDY_LOG: 'info' }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
  const exited = new Promise<number | null>((r) => child.once('close', (code) => r(code)));
  const killer = setTimeout(() => child.kill('SIGKILL'), killAfterMs);
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    events: () =>
      out
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as unknown),
    async logged(pattern, ms = 15000) {
      let match: RegExpExecArray | null = null;
      const exitedEarly = () => child.exitCode !== null || child.signalCode !== null;
      await eventually(() => (match = pattern.exec(err)) !== null || exitedEarly(), ms, `${pattern} on stderr`).catch((e: unknown) => {
        throw new Error(`${(e as Error).message}; stderr so far: ${err}`);
      });
      if (match === null) throw new Error(`eddy exited (${child.exitCode ?? child.signalCode}) before logging ${pattern}; stderr: ${err}`);
      return match;
    },
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      const code = await exited;
      clearTimeout(killer);
      return code;
    },
  };
}
