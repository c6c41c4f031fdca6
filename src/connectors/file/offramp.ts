import { createWriteStream } from 'node:fs';
import type { OfframpType } from '../connector';
import { BufferedWriter } from '../_shared/buffered-writer';

interface FileOfframpConfig {
  file: string;
}

const NEWLINE = Buffer.from('\n');

/** file: one payload per line; the file is created or truncated when the instance starts. */
export const fileOfframp: OfframpType<FileOfframpConfig> = {
  name: 'file',
  defaultCodec: 'json',
  autoAck: true,
  example: { file: 'out.json' },
  configSchema: {
    type: 'object',
    additionalProperties: false,
    required: ['file'],
    properties: { file: { type: 'string', minLength: 1, description: 'path to write' } },
  },
  async create(config, ctx) {
    const stream = createWriteStream(config.file, { flags: 'w' });
    await new Promise<void>((resolve, reject) => {
      stream.once('open', () => resolve());
      stream.once('error', (err) => reject(new Error(`file offramp: cannot open ${config.file}: ${err.message}`)));
    });
    const writer = new BufferedWriter(stream);
    writer.watch({ full: ctx.trigger, drained: ctx.restore });
    return {
      send(payloads) {
        for (const payload of payloads) {
          writer.write(payload);
          writer.write(NEWLINE);
        }
      },
      close: () => writer.close(true),
    };
  },
};
