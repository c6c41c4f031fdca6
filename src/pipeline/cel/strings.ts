/**
 * The strings-extension functions beyond lowerAscii/upperAscii, compiled:
 * `split`, `replace`, `substring`, `trim`, `join`, `indexOf`,
 * `lastIndexOf`, `charAt` (`format` and `strings.quote` stay on the
 * interpreter).
 *
 * The reference is the interpreter eddy runs, @bufbuild/cel 0.6.1 with its
 * `strings` extension (engine.ts), not the CEL spec's wording: its
 * indexes count UTF-16 code units (`"😀a".charAt(2)` is "a", `charAt(0)` half
 * of the emoji), `split(sep, n)` keeps the first n pieces as JavaScript's
 * split does (an n of 0 is `[]`, a negative one all pieces), `replace(old,
 * new)` replaces at most as many occurrences as the string has code units
 * and a negative n none, and trim strips the 25 Unicode white-space code
 * units of its own list. test/cel/compiled.test.ts compares both on random
 * strings.
 *
 * A call compiles when its argument count is one of the function's
 * overloads; an evaluation whose receiver or arguments are of other kinds
 * (an int receiver, a double index, an int beyond 64 bits) is handed to the
 * interpreter (`bail`), which then gives its own answer or error.
 */
import type { Compiled } from './compiled';
import * as v from './values';

/** What a parameter takes: a string, or an int (given to the function as a JS number, as the interpreter's Number(bigint)). */
type Param = 'string' | 'int';

interface StringFunction {
  /** the receiver: a string, or (join) a list */
  readonly receiver: 'string' | 'list';
  /** the parameters of the longest overload; the shorter ones drop trailing parameters */
  readonly params: readonly Param[];
  /** the fewest arguments an overload takes */
  readonly minArgs: number;
  /** the receiver, then the arguments converted as `params` says */
  readonly impl: (...args: never[]) => unknown;
}

const INT_MIN = -(2n ** 63n);
const INT_MAX = 2n ** 63n - 1n;

function outOfBounds(index: number, length: number): v.CelEvalError {
  return new v.CelEvalError(`index ${index} out of bounds [0, ${length})`);
}

function invalidArgument(fn: string, issue: string): v.CelEvalError {
  return new v.CelEvalError(`invalid argument to function ${fn}: ${issue}`);
}

/** `s.charAt(i)`: i may be the length (then ""). */
function charAt(s: string, i: number): string {
  if (i < 0 || i > s.length) throw outOfBounds(i, s.length);
  return s.charAt(i);
}

/** `s.indexOf(sub)`, `s.indexOf(sub, start)`: start must be below the length, even for an empty sub. */
function indexOf(s: string, sub: string, start?: number): number {
  if (start === undefined) return s.indexOf(sub);
  if (start < 0 || start >= s.length) throw outOfBounds(start, s.length);
  return s.indexOf(sub, start);
}

function lastIndexOf(s: string, sub: string, start?: number): number {
  if (start === undefined) return s.lastIndexOf(sub);
  if (start < 0 || start >= s.length) throw outOfBounds(start, s.length);
  return s.lastIndexOf(sub, start);
}

/**
 * `s.split(sep)`, `s.split(sep, n)`: JavaScript's split, whose limit is n
 * taken modulo 2^32 (so -1 is "all" and 2^32 is `[]`), except that n = 1
 * gives the whole string.
 */
function split(s: string, sep: string, n?: number): string[] {
  if (n === undefined) return s.split(sep);
  if (n === 1) return [s];
  return s.split(sep, n);
}

/**
 * `s.replace(old, new)`, `s.replace(old, new, n)`: the first n occurrences,
 * left to right, not overlapping, searched in s (a replacement is never
 * searched again); without n at most s's length in code units. An empty
 * `old` matches at the start again after each insertion, so the result is
 * n copies of `new` before s. The interpreter inserts them one at a time,
 * searching the whole string each time, so a huge n keeps it busy until
 * the string outgrows what JavaScript allows ("Invalid string length") or,
 * with an empty `new`, for n rounds; here both answers come at once.
 */
function replace(s: string, old: string, repl: string, n?: number): string {
  const count = n ?? s.length;
  if (count <= 0) return s;
  if (old === '') {
    if (repl === '') return s;
    try {
      return repl.repeat(count) + s;
    } catch (err) {
      // longer than a string can be: the interpreter's concatenation fails with the same RangeError, which it reports
      if (err instanceof RangeError) throw new v.CelEvalError(err.message);
      throw err;
    }
  }
  // a non-empty `old` occurs at most length times, so without n every occurrence is replaced
  if (count >= s.length) return s.split(old).join(repl);
  let out = '';
  let from = 0;
  for (let left = count; left > 0; left--) {
    const at = s.indexOf(old, from);
    if (at === -1) break;
    out += s.slice(from, at) + repl;
    from = at + old.length;
  }
  return out + s.slice(from);
}

/** `s.substring(start)`, `s.substring(start, end)`: both within [0, length], start ≤ end. */
function substring(s: string, start: number, end?: number): string {
  if (start < 0 || start > s.length) throw outOfBounds(start, s.length);
  if (end === undefined) return s.substring(start);
  if (end < 0 || end > s.length) throw outOfBounds(end, s.length);
  if (start > end) throw invalidArgument('substring', 'start > end');
  return s.substring(start, end);
}

/** The interpreter's white space (not JavaScript's trim: U+0085 is in, U+FEFF is out). */
const WHITE_SPACE = new Set([
  0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x20, 0x85, 0xa0, 0x1680, 0x2000, 0x2001, 0x2002, 0x2003, 0x2004, 0x2005, 0x2006, 0x2007, 0x2008, 0x2009, 0x200a, 0x2028,
  0x2029, 0x202f, 0x205f, 0x3000,
]);

function trim(s: string): string {
  let start = 0;
  let end = s.length;
  while (start < end && WHITE_SPACE.has(s.charCodeAt(start))) start++;
  while (end > start && WHITE_SPACE.has(s.charCodeAt(end - 1))) end--;
  return s.substring(start, end);
}

/** `list.join()`, `list.join(sep)`: every element must be a string. */
function join(list: readonly unknown[], sep = ''): string {
  for (const item of list) {
    if (typeof item === 'string') continue;
    if (v.kindOf(item) === v.Kind.Other) v.bail('a list element of an unknown kind');
    throw invalidArgument('join', 'list contains non-string value');
  }
  return list.join(sep);
}

const FUNCTIONS: Record<string, StringFunction> = {
  charAt: { receiver: 'string', params: ['int'], minArgs: 1, impl: charAt },
  indexOf: { receiver: 'string', params: ['string', 'int'], minArgs: 1, impl: indexOf },
  lastIndexOf: { receiver: 'string', params: ['string', 'int'], minArgs: 1, impl: lastIndexOf },
  replace: { receiver: 'string', params: ['string', 'string', 'int'], minArgs: 2, impl: replace },
  split: { receiver: 'string', params: ['string', 'int'], minArgs: 1, impl: split },
  substring: { receiver: 'string', params: ['int', 'int'], minArgs: 1, impl: substring },
  trim: { receiver: 'string', params: [], minArgs: 0, impl: trim },
  join: { receiver: 'list', params: ['string'], minArgs: 0, impl: join },
};

/** An int argument as the interpreter hands it over (Number of its bigint); any other kind is the interpreter's. */
function intArg(x: unknown): number {
  if (typeof x === 'number' && Number.isSafeInteger(x)) return x;
  if (typeof x === 'bigint' && x >= INT_MIN && x <= INT_MAX) return Number(x);
  return v.bail('a strings-extension argument that is not an int');
}

function stringArg(x: unknown): string {
  return typeof x === 'string' ? x : v.bail('a strings-extension argument that is not a string');
}

const CONVERT: Record<Param, (x: unknown) => unknown> = { string: stringArg, int: intArg };

function listArg(x: unknown): readonly unknown[] {
  return Array.isArray(x) ? x : v.bail('join on something other than a list');
}

/**
 * The closure for `target.fn(args)` when fn is one of these functions with
 * an argument count it has; undefined when fn is not one of them; throws
 * through `unsupported` for another argument count.
 */
export function stringsExtension(fn: string, target: Compiled, args: readonly Compiled[], unsupported: (what: string) => never): Compiled | undefined {
  if (!Object.hasOwn(FUNCTIONS, fn)) return undefined;
  const f = FUNCTIONS[fn];
  if (args.length < f.minArgs || args.length > f.params.length) return unsupported(`${fn} with ${args.length} arguments`);
  const impl = f.impl as (r: unknown, x?: unknown, y?: unknown, z?: unknown) => unknown;
  const recv = f.receiver === 'list' ? listArg : stringArg;
  const [cx, cy, cz] = f.params.map((p) => CONVERT[p]);
  const [x, y, z] = args;
  // one closure per argument count: no array per evaluation; target first, then the arguments, as the interpreter
  switch (args.length) {
    case 0:
      return (a) => impl(recv(target(a)));
    case 1:
      return (a) => {
        const r = target(a);
        return impl(recv(r), cx(x(a)));
      };
    case 2:
      return (a) => {
        const r = target(a);
        const p = x(a);
        return impl(recv(r), cx(p), cy(y(a)));
      };
    default:
      return (a) => {
        const r = target(a);
        const p = x(a);
        const q = y(a);
        return impl(recv(r), cx(p), cy(q), cz(z(a)));
      };
  }
}
