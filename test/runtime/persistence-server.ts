/**
 * A long-running `eddy server run` child for the persistence tests: started
 * on an ephemeral loopback port, stopped by SIGTERM or SIGKILL, and killed
 * by `killAll` after each test whatever happened.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EDDY } from '../helpers/cli';
import { expect } from 'chai';
import { call, eventually } from '../helpers/runtime';

export interface ServerChild {
  base: string;
  readonly out: { stdout: string; stderr: string };
  /** sends `signal` and resolves with the exit code (null when killed by the signal) */
  stop(signal: 'SIGTERM' | 'SIGKILL'): Promise<number | null>;
}

const children = new Set<ChildProcess>();

/** Starts `eddy server run ARGS --api-port 0` and waits (at most `startMs`) until its API listens. */
export async function startServer(args: string[], startMs = 10000): Promise<ServerChild> {
  const child = spawn(process.execPath, [EDDY, 'server', 'run', ...args, '--api-port', '0'], { env: { ...process.env, EDDY_LOG: 'info' }, stdio: 'pipe' });
  children.add(child);
  const out = { stdout: '', stderr: '' };
  child.stdout.on('data', (d) => (out.stdout += String(d)));
  child.stderr.on('data', (d) => (out.stderr += String(d)));
  let code: number | null | undefined;
  const exited = new Promise<number | null>((resolve) =>
    child.on('close', (c) => {
      children.delete(child);
      resolve((code = c));
    }),
  );
  const listening = () => /Listening at: (http:\/\/127\.0\.0\.1:\d+)/.exec(out.stderr)?.[1];
  await eventually(() => listening() !== undefined || code !== undefined, startMs, 'the API to listen');
  if (code !== undefined) throw new Error(`eddy exited with ${code} before listening: ${out.stderr}`);
  return {
    base: listening()!,
    out,
    stop(signal) {
      child.kill(signal);
      return exited;
    },
  };
}

export function killAll(): Promise<void> {
  const waits = [...children].map((c) => new Promise<void>((r) => (c.once('close', () => r()), c.kill('SIGKILL'))));
  return Promise.all(waits).then(() => undefined);
}

// ---- a flow published over REST: metronome -> passthrough -> stdout, and an unused pipeline ----

/** A fresh data dir for each test of the suite (read it through the returned function); after each, every server is killed and the dir removed. */
export function freshDataDir(): () => string {
  let dir = '';
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'eddy-persist-'))));
  afterEach(async () => {
    await killAll();
    rmSync(dir, { recursive: true, force: true });
  });
  return () => dir;
}

export const TICK = { id: 'tick', type: 'metronome', config: { interval: 50 } };
export const OUT = { id: 'out', type: 'stdout', codec: 'json' };
export const FLOW = {
  id: 'flow',
  links: {
    '/onramp/tick/{instance}/out': ['/pipeline/system::passthrough/{instance}/in'],
    '/pipeline/system::passthrough/{instance}/out': ['/offramp/out/{instance}/in'],
  },
};
export const SPARE = { id: 'spare', interface: { inputs: ['in'], outputs: ['out'] }, nodes: [], links: { in: ['out'] } };

export async function created(base: string, path: string, body: unknown = {}): Promise<void> {
  const reply = await call(base, 'POST', path, { body });
  expect(reply.status, `POST ${path}: ${reply.text}`).to.equal(201);
}

/** Publishes a metronome -> passthrough -> stdout flow and an unused pipeline, and activates the flow. */
export async function setUp(server: ServerChild): Promise<void> {
  await created(server.base, '/onramp', TICK);
  await created(server.base, '/offramp', OUT);
  await created(server.base, '/pipeline', SPARE);
  await created(server.base, '/binding', FLOW);
  await created(server.base, '/binding/flow/main');
}
