import { createReadStream } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { Observable, type Subscription } from '../../core/rx';
import type { Frame, OnrampType } from '../connector';
import { readMaybeXz } from '../_shared/read-source';
import { s } from '../../schema/typed';
import { duration, durationMs } from '../../schema/duration';
import type { Static } from '../../schema/typed';

const SLEEP_ON_DONE = { default: 0, zero: 'closes at once' } as const;

const configSchema = s.object(
  {
    source: s.string({ path: 'read', minLength: 1, description: 'path of the file to read' }),
    close_on_done: s.boolean({ default: false, description: 'stop the runtime when the file is read' }),
    sleep_on_done: duration('how long to wait after the end before closing', SLEEP_ON_DONE),
  },
  { description: 'Reads a file (xz when its name ends in .xz), one event per line.', required: ['source'] },
);

/**
 * file: reads a file (xz when the name ends in `.xz`) and hands its bytes to
 * the machinery, whose `lines` preprocessor cuts them into one frame per
 * line: the same splitter a user names in `preprocessors`, so the file gives
 * the same events with or without `preprocessors: [lines]`. The file is
 * opened when the instance is created, so a missing file fails the
 * activation. At the end it waits `sleep_on_done` ms, then asks the runtime
 * to exit with status 0 if `close_on_done`, else the source completes.
 */
export const fileOnramp: OnrampType<Static<typeof configSchema>> = {
  name: 'file',
  defaultCodec: 'json',
  framing: 'lines',
  example: { source: 'events.json', close_on_done: true },
  configSchema,
  stopsProcess: (config) =>
    config.close_on_done === true ? { field: 'config.close_on_done', what: 'close_on_done stops the process at the end of the file' } : undefined,
  async create(config, ctx) {
    const originUri = `svc-file://${ctx.hostname}/${config.source.replace(/^\//, '')}`;
    // opened now: a missing or unreadable file fails the activation, not a later read
    let handle: FileHandle | undefined;
    let whole: Buffer | undefined;
    if (config.source.endsWith('.xz')) whole = await readMaybeXz(config.source);
    else handle = await open(config.source, 'r');
    let stream: Readable | undefined;
    let paused = false;
    const frames = new Observable<Frame>((subscriber) => {
      let doneTimer: Subscription | undefined;
      const s = whole ? Readable.from([whole]) : handle ? handle.createReadStream({ autoClose: true }) : createReadStream(config.source);
      handle = undefined; // the stream owns it now
      stream = s;
      if (paused) s.pause();
      s.on('data', (chunk: Buffer | string) => subscriber.next({ stream: 0, data: typeof chunk === 'string' ? Buffer.from(chunk) : chunk, originUri }));
      s.on('error', (err: Error) => subscriber.error(new Error(`file ${config.source}: ${err.message}`)));
      s.on('end', () => {
        subscriber.next({ stream: 0, end: true, originUri });
        // on the runtime's scheduler: a runtime in virtual time waits in virtual time
        doneTimer = ctx.scheduler.schedule(
          () => {
            if (config.close_on_done) ctx.requestExit(0, `file onramp ${ctx.url} read all of ${config.source}`);
            else subscriber.complete();
          },
          durationMs(config.sleep_on_done, 'sleep_on_done', SLEEP_ON_DONE),
        );
      });
      return () => {
        doneTimer?.unsubscribe();
        s.destroy();
        stream = undefined;
      };
    });
    return {
      frames,
      // the same file read again gives the same events in the same order (it is expected to only grow)
      replayable: true,
      pause: () => {
        paused = true;
        stream?.pause();
      },
      resume: () => {
        paused = false;
        stream?.resume();
      },
      // never subscribed (the activation failed later): the handle is still ours
      close: () => handle?.close(),
    };
  },
};
