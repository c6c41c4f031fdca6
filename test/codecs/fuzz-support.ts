import fc from 'fast-check';

/**
 * Inputs for fuzzing decoders: purely random bytes find the cheap checks;
 * valid samples with a few bytes flipped, inserted, deleted or cut off get
 * past the first byte and into the parser's depths.
 */

/**
 * One fixed seed for every fuzz property, so a run is reproducible and
 * bounded in what it tries. A deeper hunt on one machine:
 * `EDDY_FUZZ_SEED=<n> EDDY_FUZZ_SCALE=<factor> npx mocha …`.
 */
export const FUZZ_SEED = Number(process.env.EDDY_FUZZ_SEED ?? 20_261_121);

/** A test's run count, scaled by EDDY_FUZZ_SCALE (default 1). */
export const fuzzRuns = (runs: number): number => Math.max(1, Math.round(runs * Number(process.env.EDDY_FUZZ_SCALE ?? 1)));

interface Edit {
  kind: 'flip' | 'insert' | 'delete' | 'truncate';
  at: number;
  byte: number;
}

const edit: fc.Arbitrary<Edit> = fc.record({
  kind: fc.constantFrom('flip', 'insert', 'delete', 'truncate'),
  at: fc.nat(),
  byte: fc.integer({ min: 0, max: 255 }),
});

function applyEdits(bytes: Buffer, edits: Edit[]): Buffer {
  let out = Buffer.from(bytes);
  for (const { kind, at, byte } of edits) {
    const i = out.length === 0 ? 0 : at % (out.length + (kind === 'insert' ? 1 : 0));
    if (kind === 'flip' && out.length > 0) out[i] = byte;
    else if (kind === 'insert') out = Buffer.concat([out.subarray(0, i), Buffer.of(byte), out.subarray(i)]);
    else if (kind === 'delete' && out.length > 0) out = Buffer.concat([out.subarray(0, i), out.subarray(i + 1)]);
    else if (kind === 'truncate') out = out.subarray(0, i);
  }
  return out;
}

/** A valid sample with up to `maxEdits` edits. */
export function mutated(samples: fc.Arbitrary<Buffer>, maxEdits = 4): fc.Arbitrary<Buffer> {
  return fc.tuple(samples, fc.array(edit, { minLength: 1, maxLength: maxEdits })).map(([bytes, edits]) => applyEdits(bytes, edits));
}

export const randomBytes = (maxLength = 200): fc.Arbitrary<Buffer> => fc.uint8Array({ maxLength }).map((a) => Buffer.from(a));

/** Random bytes, valid samples, and mutated samples, in roughly equal parts. */
export function fuzzInput(samples: fc.Arbitrary<Buffer>): fc.Arbitrary<Buffer> {
  return fc.oneof(randomBytes(), samples, mutated(samples));
}

/** What a decoder or processor did with one input: a value, or the error it threw. */
export type Outcome = { value: unknown } | { error: unknown };

export function outcome(run: () => unknown): Outcome {
  try {
    return { value: run() };
  } catch (error) {
    return { error };
  }
}
