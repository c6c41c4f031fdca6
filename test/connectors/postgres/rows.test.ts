/**
 * The postgres offramp's rows: the fast path for a stream of one shape
 * (RowBuilder) against the general one (toRow), for random streams of
 * events of a few shapes, near-shapes and invalid records. No server.
 */
import { expect } from 'chai';
import { RowBuilder, toRow } from '../../../src/connectors/postgres/offramp';
import { mulberry32 } from '../../helpers/random';

type Outcome = { columns: string[]; params: unknown[]; bytes: number } | { error: string };

function outcome(build: () => { columns: string[]; params: unknown[]; bytes: number }): Outcome {
  try {
    const { columns, params, bytes } = build();
    return { columns: [...columns], params, bytes };
  } catch (err) {
    return { error: (err as Error).message };
  }
}

describe('postgres offramp rows: one shape after another', () => {
  const shapes: (() => unknown)[] = [
    // the common stream: the same records in the same order
    () => ({ id: { fieldType: 'INT8', name: 'id', value: 1 }, host: { fieldType: 'TEXT', name: 'host', value: 'web-1' } }),
    () => ({ id: { fieldType: 'INT8', name: 'id', value: 2 }, host: { fieldType: 'TEXT', name: 'host', value: null } }),
    // the same keys in another order, another name, another fieldType, a missing name
    () => ({ host: { fieldType: 'TEXT', name: 'host', value: 'b' }, id: { fieldType: 'INT8', name: 'id', value: 3 } }),
    () => ({ id: { fieldType: 'INT8', name: 'ident', value: 4 }, host: { fieldType: 'TEXT', name: 'host', value: 'c' } }),
    () => ({ id: { fieldType: 'TEXT', name: 'id', value: 5 }, host: { fieldType: 'TEXT', name: 'host', value: 'd' } }),
    () => ({ id: { fieldType: 'INT8', value: 6 }, host: { fieldType: 'TEXT', name: 'host', value: 'e' } }),
    // one record more, one less
    () => ({ id: { fieldType: 'INT8', name: 'id', value: 7 }, host: { fieldType: 'TEXT', name: 'host', value: 'f' }, ok: { fieldType: 'BOOL', value: true } }),
    () => ({ id: { fieldType: 'INT8', name: 'id', value: 8 } }),
    // invalid: a value the type refuses, a record without value, not a record, two records naming one column, not an object
    () => ({ id: { fieldType: 'INT8', name: 'id', value: 9 }, host: { fieldType: 'BYTEA', name: 'host', value: 12 } }),
    () => ({ id: { fieldType: 'INT8', name: 'id' }, host: { fieldType: 'TEXT', name: 'host', value: 'g' } }),
    () => ({ id: { fieldType: 'INT8', name: 'id', value: 10 }, host: 'web' }),
    () => ({ id: { fieldType: 'INT8', name: 'id', value: 11 }, host: { fieldType: 'TEXT', name: 'id', value: 'h' } }),
    () => ({ id: null, host: { fieldType: 'TEXT', name: 'host', value: 'i' } }),
    () => [{ fieldType: 'INT8', name: 'id', value: 12 }],
    () => 'text',
    () => Buffer.from('{}'),
    // a JSON value and a timestamp
    () => ({
      id: { fieldType: 'JSONB', name: 'id', value: { a: [1, 2] } },
      host: { fieldType: 'TIMESTAMPTZ', name: 'host', value: 1_700_000_000_000_000_000 },
    }),
  ];

  it('gives what toRow gives, rows and errors, for random streams of shapes (fast path on repeats)', () => {
    for (let seed = 1; seed <= 200; seed++) {
      const next = mulberry32(seed);
      const builder = new RowBuilder();
      // mostly the first shape, as a real stream; the others now and then
      for (let i = 0; i < 60; i++) {
        const pick = next() % 3 === 0 ? next() % shapes.length : 0;
        const member = next() % 2 === 0 ? undefined : i;
        const data = shapes[pick]();
        const expected = outcome(() => toRow(data, member));
        expect(
          outcome(() => builder.build(data, member)),
          `seed ${seed}, event ${i}, shape ${pick}`,
        ).to.deep.equal(expected);
      }
    }
  });
});
