import { expect } from 'chai';
import fc from 'fast-check';
import { builtinPostprocessors, builtinPreprocessors } from '../../src/processors';
import type { Postprocessor, Preprocessor } from '../../src/processors/processor';
import { detectableFormats } from '../../src/processors/shared/compression';
import { fixture } from '../codecs/support';
import { FUZZ_SEED, fuzzRuns, mutated, outcome, randomBytes, type Outcome } from '../codecs/fuzz-support';
import { ctx, post, pre } from './support';

/**
 * Every preprocessor and postprocessor fed random and mutated bytes (issue
 * 11, item 6): each call returns frames or throws an Error whose message
 * starts with the processor's name (any good frames on its `frames`), never
 * anything else, and the processor goes on working after an error. Bounded:
 * a fixed seed and count.
 */

const RUNS = 100;

/** A few payloads to wrap in each processor's format. */
const PAYLOADS = ['', 'x', 'hello world\n', '{"a":1,"b":[true,null]}\n{"c":"d"}', 'a|b|c\0d\re\n'.repeat(20), 'z'.repeat(3000)].map((s) => Buffer.from(s));

/** Valid input of a preprocessor: the payloads through the postprocessor that writes its format. */
function validInputs(name: string): Buffer[] {
  const through = (postName: string, config: Record<string, unknown> = {}) =>
    PAYLOADS.flatMap((p) => post(postName, config).process(p, ctx(1_700_000_000_000_000_000n)));
  switch (name) {
    case 'base64':
    case 'gzip':
    case 'zlib':
    case 'xz2':
    case 'snappy':
    case 'lz4':
    case 'zstd':
    case 'ingest-ns':
    case 'length-prefixed':
    case 'textual-length-prefix':
      return through(name);
    case 'decompress':
      // every format as eddy writes it, the zstd CLI's own output, and every format's bare magic
      return [
        ...['gzip', 'zlib', 'xz2', 'snappy', 'lz4', 'zstd'].flatMap((format) => through(format)),
        fixture('compression', 'sample.txt.zst'),
        ...detectableFormats.flatMap((format) => format.magic.map((magic) => Buffer.from(magic))),
      ];
    case 'gelf-chunking':
    case 'gelf-chunking-tcp':
      return [...through('gelf-chunking', { chunk_size: 40 }), ...PAYLOADS];
    default:
      return PAYLOADS;
  }
}

/** Configs to run each preprocessor with: its defaults, and small limits where it has them. */
function configs(name: string): Record<string, unknown>[] {
  const properties = Object.keys(builtinPreprocessors.find((t) => t.name === name)!.configSchema.properties ?? {});
  const small: Record<string, unknown> = {};
  if (properties.includes('max_length')) small.max_length = 16;
  if (properties.includes('max_messages')) small.max_messages = 2;
  return Object.keys(small).length > 0 ? [{}, small] : [{}];
}

function checkCall(name: string, result: Outcome, what: string): Buffer[] {
  if ('error' in result) {
    const error = result.error as Error & { frames?: unknown };
    expect(error, `${what} threw`).to.be.an.instanceOf(Error);
    expect(error.message, `${what} message`)
      .to.be.a('string')
      .and.satisfy((m: string) => m.startsWith(name), `starts with ${name}`);
    if (error.frames !== undefined) {
      expect(error.frames, `${what} frames`).to.be.an('array');
      for (const frame of error.frames as unknown[]) expect(Buffer.isBuffer(frame), `${what} frame is a Buffer`).to.equal(true);
    }
    return (error.frames as Buffer[] | undefined) ?? [];
  }
  expect(result.value, `${what} returned`).to.be.an('array');
  for (const frame of result.value as unknown[]) expect(Buffer.isBuffer(frame), `${what} frame is a Buffer`).to.equal(true);
  return result.value as Buffer[];
}

describe('processor fuzzing: random and mutated bytes', () => {
  for (const type of builtinPreprocessors) {
    for (const config of configs(type.name)) {
      it(`preprocessor ${type.name} ${JSON.stringify(config)}: frames or an Error naming it, chunk after chunk, then finish`, () => {
        const valid = fc.constantFrom(...validInputs(type.name));
        const chunk = fc.oneof(randomBytes(), valid, mutated(valid));
        fc.assert(
          fc.property(fc.array(chunk, { minLength: 1, maxLength: 5 }), fc.bigInt({ min: 0n, max: 2n ** 63n }), (chunks, ingestNs) => {
            const processor: Preprocessor = pre(type.name, config);
            const context = ctx(ingestNs);
            for (const [i, bytes] of chunks.entries())
              checkCall(
                type.name,
                outcome(() => processor.process(bytes, context)),
                `process #${i}`,
              );
            if (processor.finish)
              checkCall(
                type.name,
                outcome(() => processor.finish!(context)),
                'finish',
              );
          }),
          { seed: FUZZ_SEED, numRuns: fuzzRuns(RUNS) },
        );
      });
    }
  }

  for (const type of builtinPostprocessors) {
    const config = type.name === 'gelf-chunking' ? { chunk_size: 8 } : {};
    it(`postprocessor ${type.name} ${JSON.stringify(config)}: frames or an Error naming it`, () => {
      fc.assert(
        fc.property(fc.array(randomBytes(1200), { minLength: 1, maxLength: 4 }), fc.bigInt({ min: -(2n ** 64n), max: 2n ** 64n }), (frames, ingestNs) => {
          const processor: Postprocessor = post(type.name, config);
          for (const [i, frame] of frames.entries()) {
            const result = outcome(() => processor.process(frame, ctx(ingestNs)));
            checkCall(type.name, result, `process #${i}`);
            // the one documented refusal: a frame needing more chunks than GELF allows
            if ('error' in result) expect((result.error as Error).message).to.match(/^gelf-chunking: a \d+-byte frame needs \d+ chunks, more than 128$/);
          }
        }),
        { seed: FUZZ_SEED, numRuns: fuzzRuns(type.name === 'xz2' ? 15 : 40) },
      );
    });
  }
});
