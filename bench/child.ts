/**
 * Child processes of the benchmarks: run one, read its stdout, and sample
 * its CPU time from /proc to tell what a measured window cost.
 */
import { spawn } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { REPO } from './data';

const NODE = process.execPath;

/**
 * CPU seconds (user + system, all threads) a live process and its live
 * child processes (the workers of `--workers N`) have used, from /proc
 * (Linux; undefined elsewhere).
 */
export function cpuSeconds(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // fields after "(comm)": state is field 3, utime 14, stime 15, in clock ticks (USER_HZ, 100)
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const own = (Number(fields[11]) + Number(fields[12])) / 100;
    return own + childPids(pid).reduce((sum, child) => sum + (cpuSeconds(child) ?? 0), 0);
  } catch {
    return undefined;
  }
}

/** The children of every thread of `pid` (/proc/PID/task/TID/children; empty when the kernel does not list them). */
function childPids(pid: number): number[] {
  try {
    return readdirSync(`/proc/${pid}/task`).flatMap((tid) =>
      readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8')
        .split(' ')
        .filter((p) => p.trim() !== '')
        .map(Number),
    );
  } catch {
    return [];
  }
}

export interface ChildResult {
  out: string;
  /**
   * CPU seconds the child used in the `windowSecs` before the line with
   * `reportKey` appeared on its stdout (the blackhole's measured window),
   * from /proc samples every 50 ms; undefined when not available.
   */
  cpuInWindow(windowSecs: number): number | undefined;
  /** resident memory of the child and its children (VmRSS) at each 50 ms sample over the `windowSecs` before the report: [seconds into the window, bytes] */
  rssInWindow(windowSecs: number): [number, number][];
}

/** VmRSS of a process and its live children, from /proc; 0 when gone. */
function rssBytes(pid: number): number {
  let total = 0;
  for (const p of [pid, ...childPids(pid)]) {
    try {
      const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${p}/status`, 'utf8'))?.[1];
      if (kb !== undefined) total += Number(kb) * 1024;
    } catch {
      // gone meanwhile
    }
  }
  return total;
}

/** Runs a child process and returns its stdout; rejects on a non-zero exit or after `timeoutMs`. */
export function runChild(args: string[], timeoutMs: number, env: NodeJS.ProcessEnv = process.env, reportKey?: string): Promise<ChildResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(NODE, args, { cwd: REPO, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    const samples: [number, number][] = [];
    const rss: [number, number][] = [];
    let reportAt: number | undefined;
    const sample = () => {
      const cpu = cpuSeconds(child.pid);
      if (cpu === undefined) return;
      const now = performance.now();
      samples.push([now, cpu]);
      rss.push([now, rssBytes(child.pid!)]);
    };
    const sampler = reportKey ? setInterval(sample, 50) : undefined;
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      if (reportKey && reportAt === undefined && out.includes(`"${reportKey}"`)) {
        sample();
        // the window ends at this last sample (the report is printed as the window closes)
        reportAt = samples.length > 0 ? samples[samples.length - 1][0] : performance.now();
        clearInterval(sampler);
      }
    });
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      clearInterval(sampler);
      if (code !== 0) {
        reject(new Error(`${args.join(' ')} exited with ${signal ?? code}: ${err.trim().split('\n').slice(-3).join(' | ')}`));
        return;
      }
      const cpuAt = (t: number): number | undefined => {
        for (let i = 1; i < samples.length; i++) {
          const [t0, c0] = samples[i - 1];
          const [t1, c1] = samples[i];
          if (t0 <= t && t <= t1) return t1 === t0 ? c1 : c0 + ((c1 - c0) * (t - t0)) / (t1 - t0);
        }
        return undefined;
      };
      resolve({
        out,
        cpuInWindow: (windowSecs) => {
          if (reportAt === undefined) return undefined;
          const end = cpuAt(reportAt);
          const start = cpuAt(reportAt - windowSecs * 1000);
          return end === undefined || start === undefined ? undefined : end - start;
        },
        rssInWindow: (windowSecs) => {
          if (reportAt === undefined) return [];
          const from = reportAt - windowSecs * 1000;
          return rss.filter(([t]) => t >= from && t <= reportAt!).map(([t, bytes]) => [(t - from) / 1000, bytes]);
        },
      });
    });
  });
}

/** A loopback port nothing listens on right now, for a server a child process will bind. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}
