import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { invalid } from '../core/errors';
import { HttpError } from './http-error';
import { YAML_WORKER_MARK, type YamlAnswer, type YamlJob } from './yaml-worker';

/**
 * YAML request bodies are parsed on a worker thread, one at a time, each with
 * a time budget and the thread with a memory cap. Why: the yaml library is
 * slow on documents with many small nodes (measured here: ~1 MB of `-` lines
 * or of map keys takes 5 to 15 s, and a map's duplicate-key check is
 * quadratic), and a body limit small enough to keep every such document
 * under a second on the event loop would refuse ordinary ones. On the thread,
 * a document that takes too long is abandoned (the thread is terminated and
 * replaced) and the event loop keeps serving every other request. JSON
 * bodies do not need this: JSON.parse does tens of MB per second.
 */

export interface YamlLimits {
  maxDepth: number;
  maxAliasCount: number;
  maxExpandedBytes: number;
  timeoutMs: number;
}

/** Jobs waiting beyond this many are refused with 503, so a flood of slow documents cannot queue memory without bound. */
const MAX_QUEUED = 32;
const WORKER_MEMORY_MB = 256;

interface Pending {
  job: YamlJob;
  timeoutMs: number;
  resolve(value: unknown): void;
  reject(err: Error): void;
  timer?: NodeJS.Timeout;
}

/** The parser thread, and its start-up: a job is posted once it is online. */
interface Thread {
  worker: Worker;
  online: Promise<void>;
}

class YamlParser {
  private thread?: Thread;
  private readonly queue: Pending[] = [];
  private current?: Pending;
  private nextId = 1;

  parse(text: string, limits: YamlLimits): Promise<unknown> {
    if (this.queue.length >= MAX_QUEUED) {
      return Promise.reject(
        new HttpError(503, `body: ${MAX_QUEUED} YAML documents are already waiting to be parsed; retry later or send JSON`, { 'Retry-After': '1' }),
      );
    }
    return new Promise((resolve, reject) => {
      const { timeoutMs, ...rest } = limits;
      this.queue.push({ job: { id: this.nextId++, text, ...rest }, timeoutMs, resolve, reject });
      this.runNext();
    });
  }

  private runNext(): void {
    if (this.current) return;
    const pending = this.queue.shift();
    if (!pending) return;
    this.current = pending;
    const { worker, online } = this.ensureWorker();
    void online.then(() => {
      if (this.current !== pending || this.thread?.worker !== worker) return;
      // the budget starts once the thread is up: its start-up is not the document's fault
      pending.timer = setTimeout(() => {
        this.discardWorker();
        this.finish(pending, invalid(`body: the YAML document took more than ${pending.timeoutMs} ms to parse; send it as JSON or make it smaller`));
      }, pending.timeoutMs);
      worker.postMessage(pending.job);
    });
  }

  private finish(pending: Pending, outcome: Error | { value: unknown }): void {
    if (this.current !== pending) return;
    clearTimeout(pending.timer);
    this.current = undefined;
    if (outcome instanceof Error) pending.reject(outcome);
    else pending.resolve(outcome.value);
    this.runNext();
  }

  private ensureWorker(): Thread {
    if (this.thread) return this.thread;
    const worker = new Worker(join(__dirname, 'yaml-worker.js'), {
      workerData: YAML_WORKER_MARK,
      resourceLimits: { maxOldGenerationSizeMb: WORKER_MEMORY_MB },
    });
    const thread: Thread = { worker, online: new Promise((resolve) => worker.once('online', () => resolve())) };
    this.thread = thread;
    worker.on('message', (answer: YamlAnswer) => {
      const pending = this.current;
      if (pending?.job.id !== answer.id) return;
      this.finish(pending, answer.ok ? { value: answer.value } : invalid(answer.error));
    });
    const lost = (why: string) => {
      if (this.thread?.worker !== worker) return;
      this.discardWorker();
      if (this.current) this.finish(this.current, invalid(why));
    };
    worker.on('error', (err: Error) =>
      lost(
        (err as { code?: string }).code === 'ERR_WORKER_OUT_OF_MEMORY'
          ? `body: the YAML document needs more than ${WORKER_MEMORY_MB} MB to parse`
          : `body: the YAML parser failed: ${err.message}`,
      ),
    );
    worker.on('exit', (code) => lost(`body: the YAML parser stopped (exit code ${code})`));
    worker.unref(); // an idle parser never keeps the process alive (after the listeners: adding one refs it again)
    return thread;
  }

  private discardWorker(): void {
    const worker = this.thread?.worker;
    this.thread = undefined;
    void worker?.terminate();
  }
}

/** One parser thread per process, shared by every API in it. */
export const yamlParser = new YamlParser();
