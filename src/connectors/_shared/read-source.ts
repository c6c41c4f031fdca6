import { readFile } from 'node:fs/promises';
import type * as Lzma from '@napi-rs/lzma';
import { lazyPackage } from '../../core/packages';
import { lines } from '../../processors/pre/lines';

const lzma = lazyPackage<typeof Lzma>('@napi-rs/lzma', 'reading an .xz file');

/** Reads a whole file, decompressing it when its name ends in `.xz`. */
export async function readMaybeXz(path: string): Promise<Buffer> {
  const raw = await readFile(path);
  return path.endsWith('.xz') ? lzma().xz.decompress(raw) : raw;
}

/**
 * Splits text into lines with the `lines` preprocessor (the one splitter
 * every line-based source shares), trimming a `\r` before each `\n`; a final
 * terminator makes no empty line.
 */
export function splitLines(data: Buffer): Buffer[] {
  const splitter = lines.create({ max_length: Math.max(1, data.length) });
  const pieces = [...splitter.process(data, NO_TIME), ...(splitter.finish?.(NO_TIME) ?? [])];
  return pieces.map((line) => (line.length > 0 && line[line.length - 1] === 13 ? line.subarray(0, line.length - 1) : line));
}

const NO_TIME = { ingestNs: 0n };

/** The non-empty lines of a file (xz when named `.xz`): the payloads of a replaying source. */
export async function readPayloadLines(path: string): Promise<Buffer[]> {
  return splitLines(await readMaybeXz(path)).filter((line) => line.length > 0);
}
