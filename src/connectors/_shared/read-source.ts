import { readFile } from 'node:fs/promises';
import { xz } from '@napi-rs/lzma';

/** Reads a whole file, decompressing it when its name ends in `.xz`. */
export async function readMaybeXz(path: string): Promise<Buffer> {
  const raw = await readFile(path);
  return path.endsWith('.xz') ? xz.decompress(raw) : raw;
}

/** Splits text into lines on `\n`, trimming a `\r` before it; a final terminator makes no empty line. */
export function splitLines(data: Buffer): Buffer[] {
  const lines: Buffer[] = [];
  let start = 0;
  for (let i = data.indexOf(10); i !== -1; i = data.indexOf(10, start)) {
    const end = i > start && data[i - 1] === 13 ? i - 1 : i;
    lines.push(data.subarray(start, end));
    start = i + 1;
  }
  if (start < data.length) lines.push(data.subarray(start));
  return lines;
}

/** The non-empty lines of a file (xz when named `.xz`): the payloads of a replaying source. */
export async function readPayloadLines(path: string): Promise<Buffer[]> {
  return splitLines(await readMaybeXz(path)).filter((line) => line.length > 0);
}
