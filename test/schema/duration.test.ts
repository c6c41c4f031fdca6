import { expect } from 'chai';
import fc from 'fast-check';
import { SchemaValidator } from '../../src/schema/artefacts';
import { duration, durationMs, durationWords, type DurationUnit } from '../../src/schema/duration';
import type { JsonSchema } from '../../src/schema/json-schema';
import { s } from '../../src/schema/typed';

/** The message `value` is refused with, or undefined when it is accepted. */
function refusal(schema: JsonSchema, value: unknown): string | undefined {
  try {
    new SchemaValidator().check(schema, value, 'config');
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}

const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

describe('durations (src/schema/duration.ts): one field type for every time setting', () => {
  describe('durationMs: strings', () => {
    const table: [string, number][] = [
      ['500ms', 500],
      ['10s', 10_000],
      ['1m', 60_000],
      ['2h', 7_200_000],
      ['1d', 86_400_000],
      ['1.5s', 1500],
      ['0.5ms', 0.5],
      ['1m30s', 90_000],
      ['1h30m', 5_400_000],
      ['1d2h3m4s5ms', 93_784_005],
      ['30s1m', 90_000], // any order: the parts add up
    ];
    for (const [text, ms] of table)
      it(`${text} is ${ms} ms, whatever the unit of a bare number`, () => {
        for (const unit of ['ms', 's', 'ns'] as const) expect(durationMs(text, 'f', { unit })).to.equal(ms);
      });

    it('any combination of parts is the sum of its parts (property)', () => {
      fc.assert(
        fc.property(
          fc.array(fc.tuple(fc.integer({ min: 0, max: 1000 }), fc.constantFrom(...(Object.keys(UNIT_MS) as (keyof typeof UNIT_MS)[]))), {
            minLength: 1,
            maxLength: 5,
          }),
          (parts) => {
            const text = parts.map(([n, unit]) => `${n}${unit}`).join('');
            const sum = parts.reduce((total, [n, unit]) => total + n * UNIT_MS[unit], 0);
            if (sum === 0) expect(() => durationMs(text, 'f')).to.throw('f: ');
            else expect(durationMs(text, 'f')).to.equal(sum);
            // where 0 is allowed, it is 0
            expect(durationMs(text, 'f', { zero: 'off' })).to.equal(sum);
          },
        ),
      );
    });

    for (const bad of ['', '10', '10 s', 'ten seconds', '1x', 's', '1.s', '-1s', '1s ', ' 1s', '1sms', '1.5.5s']) {
      it(`refuses ${JSON.stringify(bad)}, naming the field and saying what a duration is`, () => {
        expect(() => durationMs(bad, 'nodes[2].config.timeout')).to.throw(
          `nodes[2].config.timeout: ${JSON.stringify(bad)} is not a duration; ${durationWords()}`,
        );
      });
    }

    it('refuses what is not a number or a string, and 0 unless the field gives it a meaning', () => {
      for (const bad of [null, true, [1], { s: 1 }, Number.NaN, Infinity, -1, 0, '0s'])
        expect(() => durationMs(bad, 'timeout'), JSON.stringify(bad)).to.throw(
          /^timeout: .* is not a duration; a duration is a positive number of milliseconds/,
        );
      expect(durationMs(0, 'stop_after_secs', { unit: 's', zero: 'never stops' })).to.equal(0);
      expect(durationMs('0s', 'stop_after_secs', { unit: 's', zero: 'never stops' })).to.equal(0);
      expect(() => durationMs(-1, 'stop_after_secs', { unit: 's', zero: 'never stops' })).to.throw(
        'stop_after_secs: -1 is not a duration; a duration is a non-negative number of seconds',
      );
    });

    it('refuses a duration below the field minimum, however written', () => {
      for (const short of [999, '999ms', '0.5s']) expect(() => durationMs(short, 'ack_wait_ms', { minimumMs: 1000 }), String(short)).to.throw('ack_wait_ms: ');
      expect(durationMs('1s', 'ack_wait_ms', { minimumMs: 1000 })).to.equal(1000);
    });
  });

  describe('durationMs: a bare number is read in the unit the field has always used', () => {
    const table: [DurationUnit, number, number][] = [
      ['ms', 250, 250],
      ['ms', 1.5, 1.5],
      ['s', 5, 5000],
      ['s', 0.05, 50],
      ['ns', 1_000_000_000, 1000],
      ['ns', 1_000_000, 1],
      ['ns', 500, 0.0005],
    ];
    for (const [unit, bare, ms] of table) it(`${bare} in a field of ${unit} is ${ms} ms`, () => expect(durationMs(bare, 'f', { unit })).to.equal(ms));

    it('without a unit: milliseconds, as durationMs always read', () => expect(durationMs(1000, 'f')).to.equal(1000));

    it('a bare number and its string mean the same, in every unit (property)', () => {
      fc.assert(
        fc.property(fc.integer({ min: 1, max: 1_000_000 }), (n) => {
          expect(durationMs(n, 'f', { unit: 'ms' })).to.equal(durationMs(`${n}ms`, 'f'));
          expect(durationMs(n, 'f', { unit: 's' })).to.equal(durationMs(`${n}s`, 'f'));
          expect(durationMs(n * 1_000_000, 'f', { unit: 'ns' })).to.equal(durationMs(`${n}ms`, 'f'));
        }),
      );
    });
  });

  describe('duration: the schema of a field', () => {
    it('says the unit of a bare number, and what 0 means, in its description and its unit keyword', () => {
      const field = duration('how long', { unit: 's', zero: 'never stops' });
      expect(field.description).to.equal('how long (seconds, or a string such as 500ms, 10s, 1m, 1h30m; 0 never stops)');
      expect(field.unit).to.equal('s');
      expect(duration('how long').description).to.equal('how long (milliseconds, or a string such as 500ms, 10s, 1m, 1h30m)');
      expect(duration('how long', { unit: 'ns' }).unit).to.equal('ns');
    });

    it('keeps a default as written: its meaning is that of the bare number in the unit', () => {
      expect(duration('t', { default: 15000 }).default).to.equal(15000);
      expect(duration('t', { default: '10s' }).default).to.equal('10s');
    });

    it('accepts both spellings and refuses the rest naming the field and the unit of a bare number', () => {
      const schema = s.object({
        stop_after_secs: duration('measure', { unit: 's', zero: 'never stops' }),
        interval: duration('between', { unit: 'ns' }),
        timeout: duration('wait'),
      });
      for (const ok of [{ stop_after_secs: 5 }, { stop_after_secs: '5s' }, { stop_after_secs: 0 }, { interval: 1e9 }, { interval: '1s' }, { timeout: '1m30s' }])
        expect(refusal(schema, ok), JSON.stringify(ok)).to.equal(undefined);
      expect(refusal(schema, { stop_after_secs: '5 secs' })).to.equal(`config.stop_after_secs: '5 secs' is not a duration; ${durationWords('s', true)}`);
      expect(refusal(schema, { stop_after_secs: -1 })).to.equal(`config.stop_after_secs: -1 is not a duration; ${durationWords('s', true)}`);
      expect(refusal(schema, { interval: 0 })).to.equal(`config.interval: 0 is not a duration; ${durationWords('ns')}`);
      expect(refusal(schema, { timeout: 'soon' })).to.equal(`config.timeout: 'soon' is not a duration; ${durationWords()}`);
    });
  });
});
