/**
 * What every section of the reliability report shares: eddy as a child
 * process (`node bin/eddy server run ...`), waiting for a condition with a
 * deadline, counting the lines of a file that is still being written, the
 * RSS of a process, and temporary directories.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, readSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

/** The repository root (this file runs as dist/bench/reliability/*.js). */
export const REPO = resolve(__dirname, '..', '..', '..');
export const EDDY = join(REPO, 'bin', 'eddy');

/** A number from the environment: the benchmarks' own reader. */
export { envNumber } from '../data';

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Polls `condition` every `everyMs` until it holds; rejects with `what` after `timeoutMs`. */
export async function waitFor(condition: () => boolean, timeoutMs: number, what: string, everyMs = 20): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** A running eddy child process. Its output is read line by line; only a tail of each stream is kept. */
export interface EddyProcess {
  child: ChildProcess;
  pid: number;
  exited: Promise<Exit>;
  /** set once the process has exited */
  exit?: Exit;
  stderrTail(): string;
  stdoutTail(): string;
  /** SIGKILL unless it already exited; resolves when it has */
  kill(): Promise<Exit>;
}

const TAIL = 8192;

/**
 * Starts `node bin/eddy <args>`; `onStdoutLine` sees every line of its
 * standard output (metrics, the stdout offramp). EDDY_LOG defaults to warn.
 */
export function startEddy(args: string[], onStdoutLine?: (line: string) => void, env: NodeJS.ProcessEnv = {}): EddyProcess {
  const child = spawn(process.execPath, [EDDY, ...args], {
    cwd: REPO,
    env: { ...process.env, EDDY_LOG: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (child.pid === undefined) throw new Error('could not start bin/eddy');
  let stdout = '';
  let stderr = '';
  let partial = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => {
    stdout = (stdout + d).slice(-TAIL);
    if (!onStdoutLine) return;
    const lines = (partial + d).split('\n');
    partial = lines.pop()!;
    for (const line of lines) onStdoutLine(line);
  });
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr = (stderr + d).slice(-TAIL)));
  const proc: EddyProcess = {
    child,
    pid: child.pid,
    exited: new Promise<Exit>((r) =>
      child.on('exit', (code, signal) => {
        proc.exit = { code, signal };
        r(proc.exit);
      }),
    ),
    stderrTail: () => stderr,
    stdoutTail: () => stdout,
    kill: () => {
      if (!proc.exit) child.kill('SIGKILL');
      return proc.exited;
    },
  };
  return proc;
}

/** Resolves with the exit, or SIGKILLs the process after `timeoutMs` and rejects. */
export async function exitWithin(proc: EddyProcess, timeoutMs: number, what: string): Promise<Exit> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      void proc.kill();
      reject(new Error(`${what}: no exit within ${timeoutMs} ms (stderr: ${proc.stderrTail().slice(-500)})`));
    }, timeoutMs);
  });
  try {
    return await Promise.race([proc.exited, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Counts the lines of a file that another process is appending to, reading
 * only what was added since the last call. A file that does not exist yet
 * has 0 lines; a file that shrank (truncated by a restart) is read again.
 */
export class LineCounter {
  private offset = 0;
  private count = 0;
  private readonly chunk = Buffer.alloc(1 << 20);

  constructor(readonly path: string) {}

  lines(): number {
    let size: number;
    try {
      size = statSync(this.path).size;
    } catch {
      return this.count;
    }
    if (size < this.offset) {
      this.offset = 0;
      this.count = 0;
    }
    if (size === this.offset) return this.count;
    const fd = openSync(this.path, 'r');
    try {
      for (;;) {
        const n = readSync(fd, this.chunk, 0, this.chunk.length, this.offset);
        if (n === 0) break;
        for (let i = 0; i < n; i++) if (this.chunk[i] === 0x0a) this.count++;
        this.offset += n;
      }
    } finally {
      closeSync(fd);
    }
    return this.count;
  }
}

/** Resident set size of a live process in bytes, from /proc/<pid>/status (Linux); undefined when not available. */
export function rssBytes(pid: number): number | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const m = /^VmRSS:\s+(\d+)\s+kB$/m.exec(status);
    return m ? Number(m[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** A fresh temporary directory; `remove` deletes it (unless RELIABILITY_KEEP is set, to look at what a run left). */
export function tempDir(prefix: string): { path: string; remove(): void } {
  const path = mkdtempSync(join(tmpdir(), `eddy-reliability-${prefix}-`));
  return {
    path,
    remove: () => {
      if (!process.env.RELIABILITY_KEEP) rmSync(path, { recursive: true, force: true });
    },
  };
}

/** The `count` fields of eddy's metrics lines on stdout, keyed `<ramp or pipeline>|<port or node|direction|port>`. */
export class MetricsReader {
  readonly counts = new Map<string, number>();

  /** Feed every stdout line; lines that are not metrics are ignored. */
  line = (line: string): void => {
    if (!line.startsWith('{') || !line.includes('"measurement"')) return;
    let m: { measurement?: string; tags?: Record<string, string>; fields?: { count?: number } };
    try {
      m = JSON.parse(line) as typeof m;
    } catch {
      return;
    }
    const tags = m.tags ?? {};
    const count = m.fields?.count;
    if (typeof count !== 'number') return;
    if (m.measurement === 'ramp_events') this.counts.set(`${tags.ramp}|${tags.port}`, count);
    else if (m.measurement === 'ramp_bytes') this.counts.set(`${tags.ramp}|bytes`, count);
    else if (m.measurement === 'events') this.counts.set(`${tags.pipeline}|${tags.node}|${tags.direction}|${tags.port}`, count);
  };

  get(key: string): number | undefined {
    return this.counts.get(key);
  }
}

/** A config file's text with `${NAME}` placeholders filled; an unknown placeholder is an error. */
export function fill(text: string, vars: Record<string, string | number>): string {
  return text.replace(/\$\{([A-Z_0-9]+)\}/g, (whole, name: string) => {
    if (!(name in vars)) throw new Error(`unknown placeholder ${whole}`);
    return String(vars[name]);
  });
}

export const fmt = (n: number, digits = 0): string => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

/**
 * Reads the complete lines appended to a file since the last call (a line
 * still being written waits for its newline). For files whose lines are
 * parsed, where `LineCounter` only counts.
 */
export class NewLines {
  private offset = 0;
  private partial = '';

  constructor(readonly path: string) {}

  read(): string[] {
    let size: number;
    try {
      size = statSync(this.path).size;
    } catch {
      return [];
    }
    if (size <= this.offset) return [];
    const fd = openSync(this.path, 'r');
    const buffer = Buffer.alloc(size - this.offset);
    try {
      let got = 0;
      while (got < buffer.length) {
        const n = readSync(fd, buffer, got, buffer.length - got, this.offset + got);
        if (n === 0) break;
        got += n;
      }
      this.offset += got;
      const lines = (this.partial + buffer.subarray(0, got).toString('utf8')).split('\n');
      this.partial = lines.pop()!;
      return lines;
    } finally {
      closeSync(fd);
    }
  }
}

/**
 * How often each event id 1..size was seen, from lines `{"id":n}`; lines
 * that are not such an object are counted apart (`other`).
 */
export class IdTally {
  readonly seen: Uint32Array;
  lines = 0;
  other = 0;
  distinct = 0;

  constructor(readonly size: number) {
    this.seen = new Uint32Array(size + 1);
  }

  add(lines: string[]): void {
    for (const line of lines) {
      if (line === '') continue;
      this.lines++;
      let id: unknown;
      try {
        id = (JSON.parse(line) as { id?: unknown }).id;
      } catch {
        id = undefined;
      }
      if (typeof id !== 'number' || !Number.isInteger(id) || id < 1 || id > this.size) {
        this.other++;
        continue;
      }
      if (this.seen[id]++ === 0) this.distinct++;
    }
  }

  /** lines beyond the first of their id */
  get duplicated(): number {
    return this.lines - this.other - this.distinct;
  }

  /** ids in 1..upTo never seen */
  missing(upTo = this.size): number[] {
    const out: number[] = [];
    for (let id = 1; id <= upTo; id++) if (this.seen[id] === 0) out.push(id);
    return out;
  }

  /** the largest id seen, 0 when none */
  maxId(): number {
    for (let id = this.size; id >= 1; id--) if (this.seen[id] > 0) return id;
    return 0;
  }
}

/** A file of `count` lines `{"id":n}`, n = 1..count: the events of the runs that count what arrived. */
export function writeIdFile(path: string, count: number): void {
  const parts: string[] = [];
  for (let id = 1; id <= count; id++) parts.push(`{"id":${id}}\n`);
  writeFileSync(path, parts.join(''));
}

/** `1-3, 7, 9-12` for a sorted list of ids, at most `max` ranges. */
export function ranges(ids: number[], max = 6): string {
  const out: string[] = [];
  for (let i = 0; i < ids.length;) {
    let j = i;
    while (j + 1 < ids.length && ids[j + 1] === ids[j] + 1) j++;
    out.push(i === j ? `${ids[i]}` : `${ids[i]}-${ids[j]}`);
    i = j + 1;
  }
  return out.length > max ? `${out.slice(0, max).join(', ')}, … (${out.length} ranges)` : out.join(', ');
}
