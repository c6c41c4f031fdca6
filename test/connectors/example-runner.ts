import { spawn, type ChildProcess } from 'node:child_process';
import { EDDY } from '../helpers/cli';

/** `eddy server run -f FILE --no-api` as a child process, with its output so far. */
export interface EddyProcess {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** stdout lines that parse as JSON */
  events(): unknown[];
  /** SIGTERM, then the exit code */
  stop(): Promise<number | null>;
}

export function runExample(file: string): EddyProcess {
  const child = spawn(process.execPath, [EDDY, 'server', 'run', '-f', file, '--no-api'], { env: { ...process.env, EDDY_LOG: 'info' }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (err += d));
  const exited = new Promise<number | null>((r) => child.once('close', (code) => r(code)));
  const killer = setTimeout(() => child.kill('SIGKILL'), 20000);
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    events: () =>
      out
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as unknown),
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      const code = await exited;
      clearTimeout(killer);
      return code;
    },
  };
}
