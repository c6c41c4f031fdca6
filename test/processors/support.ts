import { builtinPostprocessors, builtinPreprocessors } from '../../src/processors';
import type { FrameContext, Postprocessor, Preprocessor } from '../../src/processors/processor';

export function pre(name: string, config: Record<string, unknown> = {}): Preprocessor {
  const type = builtinPreprocessors.find((candidate) => candidate.name === name);
  if (!type) throw new Error(`no preprocessor ${name}`);
  return type.create(config);
}

export function post(name: string, config: Record<string, unknown> = {}): Postprocessor {
  const type = builtinPostprocessors.find((candidate) => candidate.name === name);
  if (!type) throw new Error(`no postprocessor ${name}`);
  return type.create(config);
}

export const ctx = (ingestNs = 1_000_000_000n): FrameContext => ({ ingestNs });

/** Feeds chunks through a preprocessor and its finish, collecting every frame. */
export function runPre(processor: Preprocessor, chunks: Buffer[], context = ctx()): Buffer[] {
  const frames = chunks.flatMap((chunk) => processor.process(chunk, context));
  return [...frames, ...(processor.finish?.(context) ?? [])];
}

/** Cuts bytes at the given offsets (sorted, deduplicated, within bounds). */
export function splitAt(bytes: Buffer, cuts: number[]): Buffer[] {
  const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  const chunks: Buffer[] = [];
  let start = 0;
  for (const point of points) {
    chunks.push(bytes.subarray(start, point));
    start = point;
  }
  chunks.push(bytes.subarray(start));
  return chunks;
}
