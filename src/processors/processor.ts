import type { JsonSchema } from '../schema/json-schema';

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

/**
 * What every processor type declares about its config. `configSchema` is
 * the one place the config is described: publishing checks a ramp's
 * processor configs against it (unknown keys and wrong types are a 400
 * naming the field), its top-level `description` is the type's one-line
 * summary, and its `default`s are the values `create` uses for absent keys
 * (see `withDefaults`). `create` trusts a config that passed the schema; it
 * does not check it again.
 */
interface ProcessorTypeBase {
  readonly name: string;
  readonly configSchema: JsonSchema;
}

export interface PreprocessorType extends ProcessorTypeBase {
  /** it cuts a byte stream into frames (lines, length prefixes): it can stand in for a type's own framing */
  readonly splits?: boolean;
  create(config: Record<string, unknown>): Preprocessor;
}

export interface PostprocessorType extends ProcessorTypeBase {
  create(config: Record<string, unknown>): Postprocessor;
}

export function processorName(spec: ProcessorSpec): string {
  return typeof spec === 'string' ? spec : spec.name;
}

export function processorConfig(spec: ProcessorSpec): Record<string, unknown> {
  return typeof spec === 'string' ? {} : (spec.config ?? {});
}

/**
 * Runs frames through processors in order, each frame through `process`;
 * with `finish`, each processor also flushes what it buffered (the end of a
 * stream), and that too runs through the processors after it.
 *
 * A processor that throws on one frame does not cost the others: the good
 * frames it still made (`ProcessorError.frames`) and every other frame go on
 * through the rest of the chain. The first error is then thrown with the
 * chain's output as its `frames` (and a count of any further errors in its
 * message), so the caller reports it once and still delivers the good frames.
 */
export function runProcessors(processors: readonly (Preprocessor | Postprocessor)[], frames: Buffer[], ctx: FrameContext, finish = false): Buffer[] {
  let first: ProcessorError | undefined;
  let more = 0;
  // a failed call still yields the good frames its error carries
  const failed = (error: unknown): Buffer[] => {
    const failure: ProcessorError = error instanceof Error ? error : new Error(String(error));
    if (first === undefined) first = failure;
    else more++;
    return failure.frames ?? [];
  };
  for (const processor of processors) {
    const next: Buffer[] = [];
    for (const frame of frames) {
      let out: Buffer[];
      try {
        out = processor.process(frame, ctx);
      } catch (error) {
        out = failed(error);
      }
      for (const made of out) next.push(made);
    }
    if (finish && processor.finish) {
      let out: Buffer[];
      try {
        out = processor.finish(ctx);
      } catch (error) {
        out = failed(error);
      }
      for (const made of out) next.push(made);
    }
    frames = next;
  }
  if (first === undefined) return frames;
  const message = more > 0 ? `${first.message} (and ${more} more error${more > 1 ? 's' : ''} in the same read)` : first.message;
  throw Object.assign(new Error(message), { frames });
}

/** An error from a processor that still produced some good frames. */
export type ProcessorError = Error & { frames?: Buffer[] };
