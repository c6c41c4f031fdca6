import { join } from 'node:path';
import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from 'node:worker_threads';

export interface GetReply {
  status: number;
  body: string;
}

/**
 * An HTTP GET that blocks the calling thread until it is answered: a worker
 * thread fetches, and this thread waits on a shared flag (Atomics.wait) and
 * then takes the reply off the port without the event loop.
 *
 * Why: decoding is synchronous (the onramp machinery decodes a frame and
 * emits its event in one step, which keeps events in order and lets linked
 * and acking onramps settle each message as it is decoded), yet a frame may
 * carry a schema id not seen before. Fetching it here stalls the process for
 * one registry round trip, once per new id; ids of the configured subject
 * are fetched before the first frame (see SchemaRegistry.prefetch), so this
 * happens only for schemas registered while eddy runs.
 */
export class SyncGet {
  private worker?: Worker;
  private port?: MessagePort;
  private readonly flag = new Int32Array(new SharedArrayBuffer(4));
  private seq = 0;

  get(url: string, headers: Record<string, string>, timeoutMs: number): GetReply {
    const port = this.start();
    const seq = ++this.seq;
    port.postMessage({ seq, url, headers, timeoutMs });
    // the worker aborts at timeoutMs; the margin covers its own start
    const deadline = Date.now() + timeoutMs + 2000;
    for (;;) {
      const current = Atomics.load(this.flag, 0);
      // replies to earlier requests that timed out here are read and passed over
      for (let message = receiveMessageOnPort(port); message; message = receiveMessageOnPort(port)) {
        // what get-worker.ts answers: the response, or why there is none
        const reply = message.message as { seq: number; error: string } | { seq: number; error?: undefined; status: number; body: string };
        if (reply.seq !== seq) continue;
        if (reply.error !== undefined) throw new Error(reply.error);
        return { status: reply.status, body: reply.body };
      }
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no answer within ${timeoutMs} ms`);
      Atomics.wait(this.flag, 0, current, left);
    }
  }

  private start(): MessagePort {
    if (this.port) return this.port;
    const { port1, port2 } = new MessageChannel();
    this.worker = new Worker(join(__dirname, 'get-worker.js'), { workerData: { port: port2, flag: this.flag }, transferList: [port2] });
    // neither keeps the process alive: it ends when eddy does
    this.worker.unref();
    port1.unref();
    return (this.port = port1);
  }
}
