/**
 * A worker's side of the connection listeners the primary holds for it
 * (balancer.ts): an onramp's `listenForConnections` asks the primary to
 * listen, and each connection the primary hands over is emitted on the
 * onramp's server as if it had accepted it; each one that closes is told
 * back, so that the primary knows how many each worker holds.
 */
import type { Server, Socket } from 'node:net';
import type { BoundListener, SharedListeners } from '../connectors/connector';
import type { FromWorker, ToWorker } from './protocol';

type Listened = Extract<ToWorker, { type: 'listened' }>;

export class WorkerListeners implements SharedListeners {
  /** each listening onramp's server, by its instance url */
  private readonly servers = new Map<string, Server>();
  private readonly pending = new Map<number, { resolve(port: number): void; reject(err: Error): void }>();
  private nextRequest = 0;

  constructor(private readonly send: (message: FromWorker) => void) {}

  async listen(instance: string, server: Server, host: string, port: number): Promise<BoundListener> {
    // known before the answer: the primary may hand over a connection in the same read as its answer
    this.servers.set(instance, server);
    const request = ++this.nextRequest;
    let bound: number;
    try {
      bound = await new Promise<number>((resolve, reject) => {
        this.pending.set(request, { resolve, reject });
        this.send({ type: 'listen', request, listener: instance, host, port });
      });
    } catch (err) {
      this.servers.delete(instance);
      throw err;
    }
    return {
      port: bound,
      close: () => {
        this.servers.delete(instance);
        this.send({ type: 'unlisten', listener: instance });
        return Promise.resolve();
      },
    };
  }

  /** The primary's answer to a `listen`. */
  listened(message: Listened): void {
    const waiting = this.pending.get(message.request);
    if (!waiting) return;
    this.pending.delete(message.request);
    if (message.ok) waiting.resolve(message.port);
    else waiting.reject(new Error(message.error));
  }

  /** A connection the primary accepted for `listener`: the onramp's server takes it as its own. */
  accepted(listener: string, socket: Socket | undefined): void {
    if (socket === undefined) return;
    const server = this.servers.get(listener);
    socket.once('close', () => this.send({ type: 'connection-closed', listener }));
    // closed meanwhile: the connection is ended (its client connects again, to a worker that listens)
    if (server === undefined) socket.destroy();
    else server.emit('connection', socket);
  }
}
