/**
 * Runs one connector type in a child process (fixtures/ramp-child.js) with a
 * harness, and reports what the suite asserts: whether it started, the
 * counters once the events passed, what was left after shutdown, and whether
 * the child exited by itself.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChildIo, OfframpHarness, OnrampHarness, Prepared } from './harness';
import { REPORT_MARKER, type ChildStatus, type Command, type Leftovers, type Refusal, type Reply, type Side } from './protocol';

const CHILD = join(__dirname, 'fixtures', 'ramp-child.js');
/** How long the good and bad events may take to pass (a crononome ticks once a second). */
const EVENTS_MS = 10_000;
/** For the child to load the runtime, publish and activate. */
const START_MS = 30_000;
/** After `stop`, the child must have exited by then; else it is killed and the run fails. */
export const EXIT_DEADLINE_MS = 20_000;

export interface RunReport {
  /** the harness's unopenable config: how its activation ended */
  refusal?: Refusal;
  /** why the unopenable activation could not even be tried */
  refusalError?: string;
  /** why it could not start (prepare, publish or activation failed) */
  startError?: string;
  /** why the events did not pass as expected within EVENTS_MS */
  eventsError?: string;
  /** the counters once the events passed (or when waiting gave up) */
  status?: ChildStatus;
  /** what the child found left after shutdown; absent if it printed no report */
  leftovers?: Leftovers;
  /** the child ended without being killed */
  exitedByItself: boolean;
  exitCode: number | null;
  stdout: string;
  stderr: string;
}

export interface Expectations {
  /** wait for at least one decode or send error */
  error: boolean;
}

export interface RunOptions {
  /** the suite's self-test: plant a leak in the child before stopping it */
  leak?: boolean;
  exitDeadlineMs?: number;
}

class Child {
  readonly process: ChildProcess;
  stdout = '';
  stderr = '';
  private seq = 0;
  private readonly waiting = new Map<number, (reply: Reply) => void>();
  readonly exited: Promise<number | null>;

  constructor() {
    this.process = spawn(process.execPath, [CHILD], {
      stdio: ['pipe', 'pipe', 'pipe', 'ipc'],
      env: { ...process.env, EDDY_LOG: process.env.EDDY_LOG ?? 'silent' },
    });
    this.process.stdout!.on('data', (d) => (this.stdout += String(d)));
    this.process.stderr!.on('data', (d) => (this.stderr += String(d)));
    // the child's stdin stays open until it has exited: a stdin onramp must let go of it by itself
    this.process.stdin!.on('error', () => undefined);
    this.process.on('message', (reply: Reply) => {
      this.waiting.get(reply.seq)?.(reply);
      this.waiting.delete(reply.seq);
    });
    this.exited = new Promise((resolve) => this.process.once('exit', (code) => resolve(code)));
  }

  ask(command: Command, timeoutMs = 10_000): Promise<Reply> {
    const seq = ++this.seq;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(seq);
        reject(new Error(`the child did not answer '${command.cmd}' within ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiting.set(seq, (reply) => {
        clearTimeout(timer);
        resolve(reply);
      });
      this.process.send({ ...command, seq }, (err) => {
        if (err) {
          clearTimeout(timer);
          this.waiting.delete(seq);
          reject(err);
        }
      });
    });
  }

  async status(): Promise<ChildStatus> {
    const reply = await this.ask({ cmd: 'status' });
    if (!reply.ok || !reply.status) throw new Error(reply.error ?? 'no status');
    return reply.status;
  }

  io(): ChildIo {
    return {
      send: async (data, meta) => {
        const reply = await this.ask({ cmd: 'send', data, meta });
        if (!reply.ok) throw new Error(reply.error);
      },
      stdin: (text) => void this.process.stdin!.write(text),
      stdout: () => this.stdout,
      stderr: () => this.stderr,
      status: () => this.status(),
    };
  }

  leftovers(): Leftovers | undefined {
    const line = this.stdout.split('\n').find((l) => l.startsWith(REPORT_MARKER));
    return line === undefined ? undefined : (JSON.parse(line.slice(REPORT_MARKER.length)) as Leftovers);
  }
}

/** Waits until the events passed: counters and the harness's own check. */
async function eventsPassed(io: ChildIo, prepared: Prepared, expect: Expectations): Promise<{ status: ChildStatus; error?: string }> {
  const deadline = Date.now() + EVENTS_MS;
  let status = await io.status();
  for (;;) {
    const missing: string[] = [];
    if (status.counters.out < 1) missing.push('an event out');
    if (expect.error && status.counters.error < 1) missing.push('an error counted for the bad event');
    if (prepared.arrived && !prepared.arrived(io, status)) missing.push('the good event at its destination');
    if (missing.length === 0) return { status };
    if (Date.now() > deadline) return { status, error: `after ${EVENTS_MS} ms still waiting for ${missing.join(', ')}` };
    await new Promise((r) => setTimeout(r, 25));
    status = await io.status();
  }
}

/** One type, one side, one child: start, drive, wait, stop, collect. */
export async function runInChild(
  side: Side,
  type: string,
  harness: OnrampHarness | OfframpHarness,
  expect: Expectations,
  options: RunOptions = {},
): Promise<RunReport> {
  const dir = mkdtempSync(join(tmpdir(), `eddy-compliance-${side}-${type}-`));
  let prepared: Prepared | undefined;
  const child = new Child();
  const report: RunReport = { exitedByItself: false, exitCode: null, stdout: '', stderr: '' };
  try {
    if (harness.unopenable) {
      // first, while nothing else runs in the child: what it leaves behind shows in the final report too
      try {
        const broken = await harness.unopenable.prepare(dir);
        try {
          const tried = await child.ask({ cmd: 'try', side, type, ramp: broken.ramp }, START_MS);
          if (!tried.ok) throw new Error(tried.error);
          report.refusal = tried.refusal;
        } finally {
          await broken.close();
        }
      } catch (err) {
        report.refusalError = (err as Error).message;
      }
    }
    try {
      prepared = await harness.prepare(dir);
      // the child loads the runtime first: allow for a slow start on a loaded machine
      const started = await child.ask({ cmd: 'start', side, type, ramp: prepared.ramp }, START_MS);
      if (!started.ok) throw new Error(started.error);
    } catch (err) {
      report.startError = (err as Error).message;
    }
    if (prepared && report.startError === undefined) {
      const io = child.io();
      try {
        await prepared.drive(io);
        const passed = await eventsPassed(io, prepared, expect);
        report.status = passed.status;
        report.eventsError = passed.error;
        if (options.leak) await child.ask({ cmd: 'leak' });
      } catch (err) {
        report.eventsError = (err as Error).message;
      }
    }
    // stop even when something failed, so the resource check still tells what it can
    if (child.process.connected) child.process.send({ cmd: 'stop', seq: 0 });
    let killer: NodeJS.Timeout | undefined;
    const killed = new Promise<'killed'>((resolve) => {
      killer = setTimeout(() => {
        child.process.kill('SIGKILL');
        resolve('killed');
      }, options.exitDeadlineMs ?? EXIT_DEADLINE_MS);
    });
    const outcome = await Promise.race([child.exited, killed]);
    clearTimeout(killer);
    report.exitedByItself = outcome !== 'killed';
    report.exitCode = outcome === 'killed' ? null : outcome;
    if (outcome === 'killed') await child.exited;
  } finally {
    child.process.stdin?.end();
    await prepared?.close().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  }
  report.stdout = child.stdout;
  report.stderr = child.stderr;
  report.leftovers = child.leftovers();
  return report;
}
