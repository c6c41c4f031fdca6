/**
 * Preprocessors turn received bytes into frames on the way in;
 * postprocessors turn encoded frames into bytes on the way out.
 * Instances keep state (a partial line, a reassembly buffer), so each stream
 * of a ramp (a file, a TCP connection) gets its own chain.
 */
export interface FrameContext {
  /** ingest time of the frame; the ingest-ns preprocessor may replace it */
  ingestNs: bigint;
}

export interface Preprocessor {
  /**
   * Takes one chunk and returns the complete frames it finishes (maybe none).
   * Throws on bad input; an error may carry `frames` (see `ProcessorError`),
   * the good frames of the same chunk, which are still delivered.
   */
  process(chunk: Buffer, ctx: FrameContext): Buffer[];
  /** At the end of the stream: frames still buffered (a last line without a newline). */
  finish?(ctx: FrameContext): Buffer[];
}

export interface Postprocessor {
  process(frame: Buffer, ctx: FrameContext): Buffer[];
  finish?(ctx: FrameContext): Buffer[];
}

/** Processor config as written in an artefact: a name, or `{name, config}`. */
export type ProcessorSpec = string | { name: string; config?: Record<string, unknown> };

export interface PreprocessorType {
  readonly name: string;
  /** it cuts a byte stream into frames (lines, length prefixes): it can stand in for a type's own framing */
  readonly splits?: boolean;
  create(config: Record<string, unknown>): Preprocessor;
}

export interface PostprocessorType {
  readonly name: string;
  create(config: Record<string, unknown>): Postprocessor;
}

export function processorName(spec: ProcessorSpec): string {
  return typeof spec === 'string' ? spec : spec.name;
}

export function processorConfig(spec: ProcessorSpec): Record<string, unknown> {
  return typeof spec === 'string' ? {} : spec.config ?? {};
}

/**
 * Runs frames through processors in order, each frame through `process`;
 * with `finish`, each processor also flushes what it buffered (the end of a
 * stream), and that too runs through the processors after it.
 */
export function runProcessors(
  processors: readonly (Preprocessor | Postprocessor)[],
  frames: Buffer[],
  ctx: FrameContext,
  finish = false,
): Buffer[] {
  for (const processor of processors) {
    const next: Buffer[] = [];
    for (const frame of frames) for (const out of processor.process(frame, ctx)) next.push(out);
    if (finish) for (const out of processor.finish?.(ctx) ?? []) next.push(out);
    frames = next;
  }
  return frames;
}

/** An error from a processor that still produced some good frames. */
export type ProcessorError = Error & { frames?: Buffer[] };
