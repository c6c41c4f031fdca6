import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';
import { Observable } from 'rxjs';
import type { Frame, OnrampType } from '../connector';
import { readMaybeXz } from '../_shared/read-source';

interface FileOnrampConfig {
  source: string;
  close_on_done: boolean;
  sleep_on_done: number;
}

/**
 * file: reads a file (xz when the name ends in `.xz`) line by line, one frame
 * per line without its terminator. The stream is paused while the circuit
 * breaker is triggered. At the end it waits `sleep_on_done` ms, then asks the
 * runtime to exit with status 0 if `close_on_done`, else the source completes.
 */
export const fileOnramp: OnrampType<FileOnrampConfig> = {
  name: 'file',
  defaultCodec: 'json',
  configSchema: {
    type: 'object',
    additionalProperties: false,
    required: ['source'],
    properties: {
      source: { type: 'string', minLength: 1, description: 'path of the file to read' },
      close_on_done: { type: 'boolean', default: false, description: 'stop the runtime when the file is read' },
      sleep_on_done: { type: 'integer', minimum: 0, default: 0, description: 'ms to wait after the end before closing' },
    },
  },
  create(config, ctx) {
    const originUri = `svc-file://${ctx.hostname}/${config.source.replace(/^\//, '')}`;
    return {
      frames: new Observable<Frame>((subscriber) => {
        let stream: Readable | undefined;
        let closed = false;
        let doneTimer: NodeJS.Timeout | undefined;
        const gate = ctx.breaker.changes.subscribe((open) => (open ? stream?.resume() : stream?.pause()));
        const open = async (): Promise<Readable> =>
          config.source.endsWith('.xz') ? Readable.from([await readMaybeXz(config.source)]) : createReadStream(config.source);
        open().then(
          (s) => {
            if (closed) return void s.destroy();
            stream = s;
            let carry: Buffer | null = null;
            s.on('data', (chunk: Buffer | string) => {
              let data = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
              if (carry) data = Buffer.concat([carry, data]);
              let start = 0;
              for (let i = data.indexOf(10); i !== -1; i = data.indexOf(10, start)) {
                const end = i > start && data[i - 1] === 13 ? i - 1 : i;
                subscriber.next({ stream: 0, data: data.subarray(start, end), originUri });
                start = i + 1;
              }
              carry = start < data.length ? Buffer.from(data.subarray(start)) : null;
              if (!ctx.breaker.isOpen) s.pause();
            });
            s.on('error', (err) => subscriber.error(new Error(`file ${config.source}: ${err.message}`)));
            s.on('end', () => {
              if (carry) subscriber.next({ stream: 0, data: carry, originUri });
              subscriber.next({ stream: 0, end: true, originUri });
              doneTimer = setTimeout(() => {
                if (config.close_on_done) ctx.requestExit(0, `file onramp ${ctx.url} read all of ${config.source}`);
                else subscriber.complete();
              }, config.sleep_on_done);
            });
            if (!ctx.breaker.isOpen) s.pause();
          },
          (err: Error) => subscriber.error(new Error(`file ${config.source}: ${err.message}`)),
        );
        return () => {
          closed = true;
          gate.unsubscribe();
          clearTimeout(doneTimer);
          stream?.destroy();
        };
      }),
    };
  },
};
