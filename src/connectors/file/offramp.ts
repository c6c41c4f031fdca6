import { constants, createWriteStream } from 'node:fs';
import { access, open, stat, truncate, type FileHandle } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import type { OfframpContext, OfframpType, Sink } from '../connector';
import type { CheckpointedSink } from '../../core/checkpoint';
import { BufferedWriter } from '../_shared/buffered-writer';
import { s } from '../../schema/typed';
import type { Static } from '../../schema/typed';

const configSchema = s.object(
  {
    file: s.string({
      path: 'file',
      minLength: 1,
      description:
        'path to write; created, or truncated if it exists (unless append, or this process wrote it before: a reloaded or reactivated flow appends), when the activation has opened every part',
    }),
    append: s.boolean({
      default: false,
      description: 'add lines at the end of an existing file instead of truncating it at activation (a restart or reactivation keeps earlier output)',
    }),
    fsync: s.boolean({
      default: false,
      description: 'ack an event only once the file is fsynced (survives a power loss, not only a process kill); one fsync per flush, not per event',
    }),
  },
  { description: 'Writes each event to a file, one line per event.', required: ['file'] },
);

type FileOfframpConfig = Static<typeof configSchema>;

const NEWLINE = Buffer.from('\n');

/**
 * file: one payload per line. Opened in two phases, so a failed activation
 * leaves the file untouched: `create` proves the file can be written (an
 * existing file is opened for writing without truncating it; for a new one
 * its directory must exist and be writable) and `commit`, once every part of
 * the activation has opened, truncates or creates it. With `append: true`
 * nothing is truncated: lines are added at the end of what the file holds,
 * so a restarted server (`--data-dir`) or a reactivation keeps earlier
 * output.
 *
 * An event is acked once its bytes are written to the file (the stream's
 * write callback), with `fsync: true` once they are also fsynced: one fsync
 * per flush of the writer (the writes of one event-loop turn), not one per
 * event, and flushes that end while an fsync runs share the next one.
 */
export const fileOfframp: OfframpType<FileOfframpConfig> = {
  name: 'file',
  defaultCodec: 'json',
  autoAck: true,
  joinsCheckpoints: true,
  example: { file: 'out.json' },
  configSchema,
  // the stream's own buffer (its 'drain') is the backpressure: events waiting for their write are not capped by count
  maxInFlight: () => 1 << 20,
  async create(config, ctx) {
    // a file this process wrote before (its flow reloaded, or deactivated and activated again) is added to, never emptied
    const effective = { ...config, append: config.append || openedThisRun.has(resolve(config.file)) };
    const existing = await openExisting(effective.file, effective.append);
    return new FileSink(effective, ctx, existing);
  },
};

/**
 * The files (absolute paths) a file offramp of this process has committed.
 * One opened again in the same run, because its flow was edited and
 * reloaded or deactivated and activated again, is appended to: an edit of
 * a flow never empties what the flow wrote before. Only a file opened for
 * the first time in this run starts empty (unless `append`); a restart is
 * a new run (docs/connectors/file.md).
 */
const openedThisRun = new Set<string>();

/** The sink of one file offramp instance. */
class FileSink implements Sink {
  private writer: BufferedWriter | undefined;
  private committed = false;
  /** fed by a checkpointing qos::wal (core/checkpoint.ts): set before `commit` */
  private checkpoint: FileCheckpoint | undefined;
  readonly checkpointed: CheckpointedSink = {
    resumeAt: (length) => void (this.checkpoint = new FileCheckpoint(this.config.file, length)),
    position: () => this.resumed().position(),
    rewind: (length) => this.resumed().rewind(length),
  };

  constructor(
    private readonly config: FileOfframpConfig,
    private readonly ctx: OfframpContext,
    /** the file, opened without truncating it, when it existed at create */
    private existing: FileHandle | undefined,
  ) {}

  /** the checkpoint `resumeAt` set: the WAL calls that first */
  private resumed(): FileCheckpoint {
    if (this.checkpoint === undefined) throw new Error(`file offramp ${this.config.file}: position or rewind before resumeAt`);
    return this.checkpoint;
  }

  /** Every part of the activation opened: now truncate (unless appending) or create the file. */
  async commit(): Promise<void> {
    const file = this.config.file;
    const cannot = (err: unknown) => new Error(`file offramp: cannot open ${file}: ${(err as Error).message}`);
    let handle: FileHandle;
    if (this.checkpoint) {
      await this.existing?.close();
      this.existing = undefined;
      handle = await this.checkpoint.open(this.config.append).catch((err: unknown) => {
        throw cannot(err);
      });
    } else if (this.existing) {
      handle = this.existing;
      this.existing = undefined;
      try {
        // a FIFO or a device (/dev/stdout) cannot be and need not be truncated
        if (!this.config.append && (await handle.stat()).isFile()) await handle.truncate(0);
      } catch (err) {
        await handle.close().catch(() => undefined);
        throw cannot(err);
      }
    } else {
      try {
        handle = await open(file, this.config.append ? 'a' : 'w');
      } catch (err) {
        throw cannot(err);
      }
    }
    this.committed = true;
    openedThisRun.add(resolve(file));
    const stream = createWriteStream(file, { fd: handle });
    // a failed write (disk full, a device gone) fails its events; the sink stays down, its sources held
    stream.on('error', (err) => {
      this.ctx.logger.error(`file offramp ${this.ctx.url}: writing ${file} failed: ${err.message}; the offramp is down`);
      this.ctx.trigger();
    });
    const syncs = this.config.fsync ? new GroupedFsync(handle) : undefined;
    this.writer = new BufferedWriter(stream, syncs && (() => syncs.sync()));
    this.writer.watch({ full: this.ctx.trigger, drained: this.ctx.restore });
  }

  send(payloads: Buffer[]): Promise<void> {
    const writer = this.writer;
    if (!writer) throw new Error('file offramp: the file is not open');
    let written!: Promise<void>;
    // a line and its newline together: once the stream broke, the one promise rejects, and it is the one returned
    for (const payload of payloads) written = writer.write(payload, NEWLINE);
    if (payloads.length === 0) return Promise.resolve();
    this.checkpoint?.wrote(payloads, written);
    // every write of a turn shares one promise: the last one's is the event's
    return written;
  }

  /** Closes the file after its pending writes; before `commit` (a failed activation) it only lets go of the handle. */
  async close(): Promise<void> {
    if (!this.committed) {
      await this.existing?.close();
      this.existing = undefined;
      return;
    }
    await this.writer?.close(true);
  }
}

/**
 * A file offramp in a checkpointed flow: it opens at the length the last
 * checkpoint saved (cutting off what was written after it, which the flow
 * writes again) and always appends, so a rewind's truncate is followed by
 * writes at the new end, never at a stale offset with a hole before it.
 */
class FileCheckpoint {
  /** bytes in the file once every write handed to the writer is done */
  private length = 0;
  private lastWrite: Promise<void> = Promise.resolve();

  constructor(
    private readonly file: string,
    private readonly resume: number | undefined,
  ) {}

  /** Cuts the file to the checkpoint's length (or, with none yet, empties it unless `append`) and opens it to append. */
  async open(append: boolean): Promise<FileHandle> {
    const size = await stat(this.file).then(
      (info) => (info.isFile() ? info.size : undefined),
      () => 0,
    );
    if (size === undefined) throw new Error('a checkpointed file offramp writes a regular file (it cuts it back after a crash)');
    if (this.resume !== undefined && size < this.resume) {
      throw new Error(
        `the checkpoint says it held ${this.resume} bytes, it holds ${size}: it was cut or replaced outside eddy, so the flow cannot go on exactly`,
      );
    }
    this.length = this.resume ?? (append ? size : 0);
    if (size > this.length) await truncate(this.file, this.length);
    return open(this.file, 'a');
  }

  wrote(payloads: Buffer[], done: Promise<void>): void {
    for (const payload of payloads) this.length += payload.length + 1;
    // the send's own promise (the machinery handles its failure): no promise made per send here
    this.lastWrite = done;
  }

  /** Until the writes handed over are done; a failed one fails its events (the flow goes back to the checkpoint), the wait ends either way. */
  private async written(): Promise<void> {
    await this.lastWrite.catch(() => undefined);
  }

  async position(): Promise<number> {
    await this.written();
    return this.length;
  }

  async rewind(length: number): Promise<void> {
    await this.written();
    await truncate(this.file, length);
    this.length = length;
  }
}

/**
 * Opens an existing file for writing (appending, with `append`), without creating or truncating it;
 * for a file that does not exist yet, checks that its directory exists and
 * can be written, creating nothing. Throws naming the path and the cause.
 */
async function openExisting(file: string, append: boolean): Promise<FileHandle | undefined> {
  const cannot = (why: string) => new Error(`file offramp: cannot open ${file}: ${why}`);
  try {
    return await open(file, append ? constants.O_WRONLY | constants.O_APPEND : constants.O_WRONLY);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw cannot((err as Error).message);
  }
  const dir = dirname(resolve(file));
  let info;
  try {
    info = await stat(dir);
  } catch (err) {
    throw cannot((err as NodeJS.ErrnoException).code === 'ENOENT' ? `directory ${dir} does not exist` : (err as Error).message);
  }
  if (!info.isDirectory()) throw cannot(`${dir} is not a directory`);
  try {
    await access(dir, constants.W_OK | constants.X_OK);
  } catch {
    throw cannot(`directory ${dir} is not writable`);
  }
  return undefined;
}

/**
 * fsyncs one file for many callers: a caller arriving while an fsync runs
 * waits for the next one (the running one may have started before its
 * bytes were written), and all callers that arrived meanwhile share it.
 */
class GroupedFsync {
  private running: Promise<void> | undefined;
  private next: Promise<void> | undefined;

  constructor(private readonly handle: FileHandle) {}

  sync(): Promise<void> {
    if (!this.running) return (this.running = this.start());
    this.next ??= this.running.then(
      () => this.promote(),
      () => this.promote(),
    );
    return this.next;
  }

  private promote(): Promise<void> {
    this.next = undefined;
    return (this.running = this.start());
  }

  private start(): Promise<void> {
    const run = this.handle.sync();
    const clear = () => {
      if (this.running === run) this.running = undefined;
    };
    run.then(clear, clear);
    return run;
  }
}
