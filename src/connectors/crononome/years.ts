/**
 * The optional seventh field of a crononome expression: the years an entry
 * may fire in. cron-parser knows six fields only, so the onramp parses this
 * one itself and combines the two (`nextInYears`).
 *
 * The syntax is that of the other fields, over the years the original's
 * cron crate knew (1970 to 2100): `*`, a year (`2027`), a range
 * (`2027-2030`), a step over either (`*\/2`, `2026-2040/5`, `2026/4` from
 * 2026 on), and comma lists of those.
 */
export class Years {
  static readonly MIN = 1970;
  static readonly MAX = 2100;

  /** the allowed years, ascending; undefined for `*` (every year) */
  private constructor(private readonly years: readonly number[] | undefined) {}

  /** Parses the field; the error says what is wrong with which part of it. */
  static parse(field: string): Years {
    if (field === '*') return new Years(undefined);
    const years = new Set<number>();
    for (const part of field.split(',')) {
      for (const year of Years.part(part)) years.add(year);
    }
    return new Years([...years].sort((a, b) => a - b));
  }

  private static part(part: string): number[] {
    const match = /^(\*|\d+)(?:-(\d+))?(?:\/(\d+))?$/.exec(part);
    if (!match) throw new Error(`'${part}' is not a year, a range (2027-2030), a step (*/2) or '*'`);
    const from = match[1];
    // the optional groups: undefined when they did not take part
    const to = match[2] as string | undefined;
    const step = match[3] as string | undefined;
    if (from === '*' && to !== undefined) throw new Error(`'${part}': '*' takes no range`);
    const first = from === '*' ? Years.MIN : Years.year(from, part);
    // a step without a range runs to the last year, as in cron's other fields
    const last = to !== undefined ? Years.year(to, part) : from === '*' || step !== undefined ? Years.MAX : first;
    if (last < first) throw new Error(`'${part}': the range runs backwards`);
    const by = step === undefined ? 1 : Number(step);
    if (by < 1) throw new Error(`'${part}': the step must be at least 1`);
    const out: number[] = [];
    for (let year = first; year <= last; year += by) out.push(year);
    return out;
  }

  private static year(text: string, part: string): number {
    const year = Number(text);
    if (year < Years.MIN || year > Years.MAX) throw new Error(`'${part}': ${text} is not a year from ${Years.MIN} to ${Years.MAX}`);
    return year;
  }

  /** The first allowed year at or after `year`, or undefined when none is left. */
  firstFrom(year: number): number | undefined {
    if (!this.years) return year;
    return this.years.find((y) => y >= year);
  }
}

/**
 * The first time strictly after `after` that `next` (the six-field
 * expression's next time after a given time, or undefined) yields in one of
 * `years`; undefined when there is none. Years the expression reaches but
 * that are not allowed are jumped over whole, so this takes one step per
 * allowed year tried, not one per tick.
 */
export function nextInYears(next: (after: number) => number | undefined, years: Years, after: number): number | undefined {
  let from = after;
  for (;;) {
    const time = next(from);
    if (time === undefined) return undefined;
    const year = new Date(time).getUTCFullYear();
    const allowed = years.firstFrom(year);
    if (allowed === undefined) return undefined;
    if (allowed === year) return time;
    // just before the allowed year begins, so that its first instant counts
    from = Date.UTC(allowed, 0, 1) - 1;
  }
}
