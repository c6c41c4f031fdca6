/**
 * The primary's connection listeners for the workers' tcp onramps
 * (docs/workers.md, "Connections"): one listening socket per onramp
 * instance, shared by every worker that runs it; each connection goes to
 * the worker holding the fewest open ones, so a worker restarted after a
 * death takes the new connections until it holds as many as the others.
 * (node:cluster's own sharing hands connections round the workers in turn,
 * whatever each holds: long-lived connections that all reconnected to the
 * survivor while a worker was down stayed there, and round-robin kept
 * giving the survivor half of the new ones.)
 */
import { createServer, type Server, type Socket } from 'node:net';
import { present } from '../core/errors';
import type { Logger } from '../core/logger';
import { listen } from '../connectors/_shared/net';
import type { ToWorker } from './protocol';

/** Sends a message with a socket to a worker; false when the worker is not there to take it. */
export type SendToWorker = (worker: number, message: ToWorker, socket?: Socket) => boolean;

/** One onramp instance's listening socket and, per worker that listens through it, the connections it holds. */
class SharedListener {
  /** worker id → connections handed to it and not closed yet */
  readonly open = new Map<number, number>();
  /** the worker chosen last: among workers holding as few, the next one after it is chosen (so ties go round) */
  private last = -1;

  constructor(
    readonly url: string,
    readonly server: Server,
    readonly port: number,
  ) {}

  /** The worker with the fewest open connections (undefined: none listens). */
  pick(): number | undefined {
    // [worker, open connections], by worker
    const workers = [...this.open].sort(([a], [b]) => a - b);
    const start = workers.findIndex(([w]) => w > this.last);
    let chosen: [worker: number, open: number] | undefined;
    for (let i = 0; i < workers.length; i++) {
      const candidate = workers[(Math.max(start, 0) + i) % workers.length];
      if (chosen === undefined || candidate[1] < chosen[1]) chosen = candidate;
    }
    if (chosen === undefined) return undefined;
    this.last = chosen[0];
    return chosen[0];
  }
}

export class ConnectionBalancer {
  /** by onramp instance url: the same in every worker that runs it */
  private readonly listeners = new Map<string, SharedListener>();
  /** listeners being bound: a second worker asking meanwhile waits for the same socket */
  private readonly binding = new Map<string, Promise<SharedListener>>();

  constructor(
    private readonly send: SendToWorker,
    private readonly logger: Logger,
  ) {}

  /** Worker `worker` listens for `url`: the first binds host:port, the others share it. Resolves with the port. */
  async listen(worker: number, url: string, host: string, port: number): Promise<number> {
    const shared = this.listeners.get(url) ?? (await (this.binding.get(url) ?? this.bind(url, host, port)));
    shared.open.set(worker, 0);
    return shared.port;
  }

  /** Worker `worker` no longer listens for `url`; with no worker left the socket is closed (the port is free again). */
  unlisten(worker: number, url: string): void {
    const shared = this.listeners.get(url);
    if (!shared) return;
    shared.open.delete(worker);
    if (shared.open.size > 0) return;
    this.listeners.delete(url);
    // stops accepting at once; the connections were handed over and are the workers'
    shared.server.close();
  }

  /** A connection handed to `worker` closed. */
  closed(worker: number, url: string): void {
    const shared = this.listeners.get(url);
    const open = shared?.open.get(worker);
    if (shared !== undefined && open !== undefined && open > 0) shared.open.set(worker, open - 1);
  }

  /** A worker died: it listens for nothing and holds nothing any more (its connections died with it). */
  gone(worker: number): void {
    for (const url of [...this.listeners.keys()]) this.unlisten(worker, url);
  }

  /** The connections each worker holds, per onramp instance url (for the log and tests). */
  holding(): Record<string, Record<number, number>> {
    return Object.fromEntries([...this.listeners].map(([url, s]) => [url, Object.fromEntries(s.open)]));
  }

  /** Closes every listening socket (at shutdown, once the workers are gone). */
  close(): void {
    for (const shared of this.listeners.values()) shared.server.close();
    this.listeners.clear();
  }

  private bind(url: string, host: string, port: number): Promise<SharedListener> {
    // nothing is read here: the socket goes to a worker as accepted
    const server = createServer({ pauseOnConnect: true });
    const binding = listen(server, host, port).then((bound) => {
      server.on('error', (err) => this.logger.error(`${url}: listening socket: ${err.message}`));
      const shared = new SharedListener(url, server, bound);
      server.on('connection', (socket: Socket) => this.hand(shared, socket));
      this.listeners.set(url, shared);
      return shared;
    });
    this.binding.set(url, binding);
    const done = () => this.binding.delete(url);
    binding.then(done, done);
    return binding;
  }

  private hand(shared: SharedListener, socket: Socket): void {
    socket.on('error', () => socket.destroy());
    const worker = shared.pick();
    if (worker === undefined || !this.send(worker, { type: 'connection', listener: shared.url }, socket)) {
      socket.destroy();
      return;
    }
    // pick() chose it among the workers shared.open counts
    shared.open.set(worker, present(shared.open.get(worker), `the connections of worker ${worker}`) + 1);
  }
}
