import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { AGGREGATE_FUNCTIONS } from '../../../src/pipeline/aggregate/functions';
import { COLLECT_DEFAULT_LIMIT, COLLECT_MAX_LIMIT } from '../../../src/pipeline/aggregate/collect';
import { DISTINCT_STANDARD_ERROR, EXACT_LIMIT } from '../../../src/pipeline/aggregate/distinct';
import { PERCENTILE_RELATIVE_ERROR } from '../../../src/pipeline/aggregate/percentile';

const doc = readFileSync(join(__dirname, '../../../../docs/aggregate-functions.md'), 'utf8');

describe('docs/aggregate-functions.md', () => {
  it('has a table row for every function, with its arguments as the registry declares them', () => {
    const rows = doc.split('\n').filter((line) => line.startsWith('| `'));
    const calls = rows.map((row) => /^\| `([a-z_]+)\(([^)]*)\)`/.exec(row)?.slice(1, 3));
    const documented = calls.map((c) => `${c?.[0]}(${c?.[1]})`);
    const declared = [...AGGREGATE_FUNCTIONS.values()].map(
      (f) =>
        `${f.name}(${[...Array.from({ length: f.eventArgs }, (_, i) => (f.name === 'count_if' ? 'cond' : i === 0 ? 'x' : `x${i}`)), ...f.constants].join(', ')})`,
    );
    expect(documented).to.deep.equal(declared);
  });

  it('states the bounds the code has', () => {
    expect(doc).to.include(`${(PERCENTILE_RELATIVE_ERROR * 100).toFixed(4)} %`); // 0.0488 %
    expect(doc).to.include(`${(DISTINCT_STANDARD_ERROR * 100).toFixed(2)} %`); // 0.81 %
    expect(doc).to.include(`Up to **${EXACT_LIMIT}** distinct values`);
    expect(doc).to.include(`from 1 to ${COLLECT_MAX_LIMIT.toLocaleString('en-US')}`);
    expect(doc).to.include(`default ${COLLECT_DEFAULT_LIMIT}`);
  });
});
