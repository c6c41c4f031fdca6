import { spawn } from 'node:child_process';
import { join } from 'node:path';

export const EDDY = join(__dirname, '../../../bin/eddy');

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  timeoutMs?: number;
  stdin?: string;
  signalAfterMs?: number;
  signalWhen?: (output: { stdout: string; stderr: string }) => boolean;
  /** environment variables added to (or, undefined, removed from) the test process's own */
  env?: Record<string, string | undefined>;
  /** the working directory (default: the test process's own) */
  cwd?: string;
}

/** Runs the eddy command in a child process, killing it after `timeoutMs`. */
export function runEddy(args: string[], options: RunOptions = {}): Promise<Run> {
  return runNode([EDDY, ...args], options);
}

/** Runs node with `args` in a child process, killing it after `timeoutMs`. */
export function runNode(args: string[], options: RunOptions = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { env: { ...process.env, EDDY_LOG: 'info', ...options.env }, stdio: 'pipe', cwd: options.cwd });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer | string) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer | string) => (stderr += d.toString()));
    if (options.stdin !== undefined) child.stdin.end(options.stdin);
    const killer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 15000);
    const signal = options.signalAfterMs !== undefined ? setTimeout(() => child.kill('SIGTERM'), options.signalAfterMs) : undefined;
    const poll = options.signalWhen
      ? setInterval(() => {
          if (options.signalWhen!({ stdout, stderr })) {
            clearInterval(poll);
            child.kill('SIGTERM');
          }
        }, 50)
      : undefined;
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(killer);
      clearTimeout(signal);
      clearInterval(poll);
      resolve({ code, stdout, stderr });
    });
  });
}
