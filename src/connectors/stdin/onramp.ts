import { Observable } from '../../core/rx';
import type { Frame, OnrampType } from '../connector';
import { s } from '../../schema/typed';

/** stdin: standard input in chunks as they arrive (pair it with the lines preprocessor); paused while the breaker is triggered. */
export const stdin: OnrampType<Record<string, never>> = {
  name: 'stdin',
  defaultCodec: 'string',
  example: {},
  configSchema: s.object({}, { description: 'Reads standard input in chunks as they arrive (add the lines preprocessor for one event per line).' }),
  create(_config, ctx) {
    const originUri = `svc-stdin://${ctx.hostname}`;
    return {
      frames: new Observable<Frame>((subscriber) => {
        const input = process.stdin;
        const onData = (chunk: Buffer) => subscriber.next({ stream: 0, data: chunk, originUri });
        const onEnd = () => {
          subscriber.next({ stream: 0, end: true, originUri });
          subscriber.complete();
        };
        input.on('data', onData);
        input.once('end', onEnd);
        return () => {
          input.off('data', onData);
          input.off('end', onEnd);
          input.pause();
        };
      }),
      pause: () => void process.stdin.pause(),
      resume: () => void process.stdin.resume(),
    };
  },
};
