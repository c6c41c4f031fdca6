/**
 * The thread behind SyncGet (./sync-get.ts): runs each HTTP GET it is sent
 * with fetch, posts the answer back on the port, then wakes the waiting
 * thread through the shared flag.
 */
import { workerData, type MessagePort } from 'node:worker_threads';

interface Request {
  seq: number;
  url: string;
  headers: Record<string, string>;
  timeoutMs: number;
}

const { port, flag } = workerData as { port: MessagePort; flag: Int32Array };

port.on('message', (request: Request) => {
  void answer(request).then((reply) => {
    port.postMessage(reply);
    Atomics.store(flag, 0, request.seq);
    Atomics.notify(flag, 0);
  });
});

async function answer({ seq, url, headers, timeoutMs }: Request): Promise<object> {
  try {
    const response = await fetch(url, { headers, signal: AbortSignal.timeout(timeoutMs) });
    return { seq, status: response.status, body: await response.text() };
  } catch (err) {
    const cause = (err as Error & { cause?: Error }).cause;
    return { seq, error: cause ? `${(err as Error).message}: ${cause.message}` : (err as Error).message };
  }
}
