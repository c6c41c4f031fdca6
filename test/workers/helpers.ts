/**
 * Helpers of the --workers tests: a two-worker server child (the
 * persistence suites' startServer with `--workers 2`), the workers' pids
 * from GET /health, and a loopback TCP collector the workers' tcp offramps
 * connect to (one connection per worker, so it can tell the workers apart).
 */
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { call } from '../helpers/runtime';
import { startServer, type ServerChild } from '../runtime/persistence-server';

export { killAll } from '../runtime/persistence-server';

/** Three processes start: on a loaded machine that takes several times one process's start. */
export const START_MS = 60000;

export function startWorkers(args: string[] = []): Promise<ServerChild> {
  return startServer(['--workers', '2', ...args], START_MS);
}

export interface HealthEntry {
  url: string;
  state: string;
  reason?: string;
  worker?: number;
  pid?: number;
}

export async function health(base: string): Promise<{ status: number; entries: HealthEntry[] }> {
  const reply = await call(base, 'GET', '/health');
  return { status: reply.status, entries: (reply.body as { instances: HealthEntry[] }).instances };
}

/** The workers running `url`, from GET /health. */
export async function workersRunning(base: string, url: string): Promise<number[]> {
  return (await health(base)).entries
    .filter((e) => e.url === url)
    .map((e) => e.worker!)
    .sort();
}

export async function workerPids(base: string): Promise<number[]> {
  return (await health(base)).entries.filter((e) => e.url.startsWith('/worker/')).map((e) => e.pid!);
}

/** The pid of worker `id` while GET /health shows it running; undefined while it is down. */
export async function runningPid(base: string, id: number): Promise<number | undefined> {
  const entry = (await health(base)).entries.find((e) => e.url === `/worker/${id}`);
  return entry?.state === 'running' ? entry.pid : undefined;
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export interface Collector {
  port: number;
  /** the lines received, per connection */
  readonly connections: string[][];
  lines(): string[];
  close(): Promise<void>;
}

/** A TCP server on loopback that keeps every line it receives, per connection. */
export async function collector(): Promise<Collector> {
  const connections: string[][] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    const lines: string[] = [];
    connections.push(lines);
    let rest = '';
    socket.setEncoding('utf8').on('data', (d: string) => {
      const parts = (rest + d).split('\n');
      rest = parts.pop()!;
      lines.push(...parts.filter((l) => l.length > 0));
    });
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    connections,
    lines: () => connections.flat(),
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** A flow over the API: onramp → system::passthrough → offramp, as one binding. */
export function flow(id: string, onramp: string, offramp: string) {
  return {
    id,
    links: {
      [`/onramp/${onramp}/{instance}/out`]: ['/pipeline/system::passthrough/{instance}/in'],
      '/pipeline/system::passthrough/{instance}/out': [`/offramp/${offramp}/{instance}/in`],
    },
  };
}
