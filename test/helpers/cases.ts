import { join } from 'node:path';

/** The example pipeline the testing tests and the README run against. */
export const ERRORS_BY_HOST = join(__dirname, '../../../examples/pipelines/errors-by-host.yaml');

/** A case file text whose one case wrongly expects batches of two from the example pipeline (it batches by three). */
export function wrongBatchCase(name = 'expects batches of two'): string {
  return `
pipeline: ${JSON.stringify(ERRORS_BY_HOST)}
cases:
  - name: ${name}
    values:
      a: { level: error, host: h, msg: one }
      b: { level: error, host: h, msg: two }
      c: { level: error, host: h, msg: three }
    events:
      x: { batch: [{ level: error, host: h, msg: one }, { level: error, host: h, msg: two }] }
    in:  { in: "-a-b-c--|" }
    out: { out: "---x----|" }
`;
}
