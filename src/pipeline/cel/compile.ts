/**
 * Compiles a parsed CEL expression (the AST of @bufbuild/cel's `parse`) into
 * a tree of JavaScript closures, one per AST node, built once at publish.
 * No code is generated from text: every closure is written here, and the
 * expression only chooses which ones are composed and with which constants
 * (literals are values held by a closure, never source).
 *
 * An evaluation reads the event's JSON values where they are (values.ts),
 * touching only the fields the expression names.
 *
 * The compiled subset: literals (int, uint, double, string, bool, null,
 * bytes), `event` and `meta` (and declared variables), field selection,
 * indexing of lists and maps, `has()`, == != < <= > >=, `in` (list and map),
 * && || ! with CEL's error absorption, the ternary, + - * / % and unary -,
 * list and map literals, size, contains, startsWith, endsWith, lowerAscii,
 * upperAscii, matches (RE2), the strings extension's split, replace,
 * substring, trim, join, indexOf, lastIndexOf and charAt (strings.ts), the
 * conversions int, uint, double, string, bool, bytes, dyn, and
 * comprehensions, hence the macros all, exists, exists_one, map (2 and 3
 * arguments) and filter.
 * `compileAst` returns undefined for anything else (timestamps and
 * durations, type(), format and strings.quote, two-variable comprehensions,
 * unknown variables…): that expression runs on the interpreter, so
 * behaviour never changes.
 */
import { present } from '../../core/errors';
import type { parse } from '@bufbuild/cel';
import { RE2JS } from '@bufbuild/re2';
import type { Activation, Compiled } from './compiled';
import { stringsExtension } from './strings';
import * as v from './values';

type Expr = ReturnType<typeof parse>['expr'];

export type { Activation, Compiled } from './compiled';

class Unsupported extends Error {}

/** What an identifier can name where it is compiled. */
interface Scope {
  /** comprehension variables in scope, innermost binding wins */
  readonly locals: ReadonlyMap<string, number>;
  /** declared variables besides event and meta */
  readonly vars: ReadonlySet<string>;
  /** slots taken by the enclosing comprehensions */
  readonly depth: number;
  /** in a comprehension's step: the accumulator's name, whose list this loop owns and may append to in place */
  readonly ownedAccu?: string;
}

/**
 * A closure for the whole expression, or undefined when some construct is
 * not compiled. `variables` declares identifiers besides `event` and `meta`
 * (read from `Activation.vars`).
 */
export function compileAst(expr: Expr, options: { variables?: readonly string[] } = {}): Compiled | undefined {
  try {
    return node(expr, { locals: new Map(), vars: new Set(options.variables ?? []), depth: 0 });
  } catch (err) {
    if (err instanceof Unsupported) return undefined;
    throw err;
  }
}

function unsupported(what: string): never {
  throw new Unsupported(what);
}

/** A closure that is known to return this constant, so callers can fold it. */
interface Constant {
  (a: Activation): unknown;
  constant: unknown;
}

function constant(value: unknown): Constant {
  const f = (() => value) as unknown as Constant;
  f.constant = value;
  return f;
}

function isConstant(f: Compiled): f is Constant {
  return 'constant' in f;
}

function node(e: Expr, sc: Scope): Compiled {
  const k = e.exprKind;
  switch (k.case) {
    case 'constExpr':
      return constant(literal(k.value.constantKind));
    case 'identExpr':
      return identifier(k.value.name, sc);
    case 'selectExpr': {
      const operand = node(k.value.operand as Expr, sc);
      const name = k.value.field;
      if (k.value.testOnly) return (a) => v.hasField(operand(a), name);
      return (a) => v.field(operand(a), name);
    }
    case 'callExpr':
      return call(k.value.function, k.value.target, k.value.args, sc);
    case 'listExpr': {
      if (k.value.optionalIndices.length > 0) return unsupported('optional list elements');
      const items = k.value.elements.map((x) => node(x, sc));
      if (items.every(isConstant)) return constant(items.map((f) => f.constant));
      return (a) => items.map((f) => f(a));
    }
    case 'structExpr':
      return mapLiteral(k.value, sc);
    case 'comprehensionExpr':
      return comprehension(k.value, sc);
    default:
      // every kind of expression is a case above: only an empty one is left
      return unsupported('an empty expression');
  }
}

type ConstantKind = Extract<Expr['exprKind'], { case: 'constExpr' }>['value']['constantKind'];

function literal(c: ConstantKind): unknown {
  switch (c.case) {
    case 'int64Value':
      return v.int(c.value, 'a literal');
    case 'uint64Value':
      return new v.U64(c.value);
    case 'doubleValue':
      return v.dbl(c.value);
    case 'stringValue':
    case 'boolValue':
      return c.value;
    case 'nullValue':
      return null;
    case 'bytesValue':
      return Uint8Array.from(c.value);
    default:
      return unsupported(`a ${c.case ?? 'missing'} literal`);
  }
}

type StructExpr = Extract<Expr['exprKind'], { case: 'structExpr' }>['value'];

/** `{k: v, …}`: keys checked as the interpreter does (kind, no repeats); a constant map is built once. */
function mapLiteral(s: StructExpr, sc: Scope): Compiled {
  if (s.messageName !== '') return unsupported(`message ${s.messageName}`);
  const entries = s.entries.map((entry) => {
    if (entry.optionalEntry || entry.keyKind.case !== 'mapKey') unsupported('optional or message entries');
    return [node(entry.keyKind.value, sc), node(entry.value as Expr, sc)] as const;
  });
  const build = (a: Activation): Map<unknown, unknown> => {
    const out = new Map<unknown, unknown>();
    for (const [key, value] of entries) {
      const kk = key(a);
      if (typeof kk !== 'string') {
        const kind = v.kindOf(kk);
        if (kind === v.Kind.Double || kind === v.Kind.Null || kind === v.Kind.List || kind === v.Kind.Map || kind === v.Kind.Bytes) {
          throw new v.CelEvalError('unsupported key type');
        }
        v.bail('a map literal with keys that are not strings');
      }
      if (out.has(kk)) throw new v.CelEvalError(`map key conflict: ${kk}`);
      out.set(kk, value(a));
    }
    return out;
  };
  if (entries.every(([key, value]) => isConstant(key) && isConstant(value))) {
    try {
      return constant(build({ event: undefined, meta: undefined }));
    } catch {
      // an erroneous constant map (a repeated key) errs at each evaluation, as in the interpreter
    }
  }
  return build;
}

const COMPARISONS: Partial<Record<string, (c: number) => boolean>> = {
  '_<_': (c) => c < 0,
  '_<=_': (c) => c <= 0,
  '_>_': (c) => c > 0,
  '_>=_': (c) => c >= 0,
};

const ARITHMETIC: Partial<Record<string, (x: unknown, y: unknown) => unknown>> = {
  '_+_': v.add,
  '_-_': v.sub,
  '_*_': v.mul,
  '_/_': v.div,
  '_%_': v.mod,
};

function call(fn: string, target: Expr | undefined, argExprs: Expr[], sc: Scope): Compiled {
  if (fn === '_+_' && sc.ownedAccu !== undefined) {
    const fast = append(argExprs, sc, sc.ownedAccu);
    if (fast !== undefined) return fast;
  }
  if (target !== undefined)
    return method(
      fn,
      node(target, sc),
      argExprs.map((x) => node(x, sc)),
    );
  const args = argExprs.map((x) => node(x, sc));
  const [x, y, z] = args;
  switch (fn) {
    case '_?_:_':
      return (a) => (v.asBool('_?_:_', x(a)) ? y(a) : z(a));
    case '_&&_':
      return logical(args, false);
    case '_||_':
      return logical(args, true);
    case '!_':
      return (a) => !v.asBool('!_', x(a));
    case '-_':
      return (a) => v.neg(x(a));
    case '_==_':
      return equality(x, y, true);
    case '_!=_':
      return equality(x, y, false);
    case '@in':
      return membership(x, y);
    case '_[_]':
      return index(x, y);
    case 'size':
      if (args.length !== 1) return unsupported('size with other than one argument');
      return (a) => v.size(x(a));
    case '@not_strictly_false':
      return notStrictlyFalse(x);
  }
  const conversion = CONVERSIONS[fn];
  if (conversion !== undefined && args.length === 1) return (a) => conversion(x(a));
  const test = COMPARISONS[fn];
  if (test !== undefined) return (a) => test(v.compare(fn, x(a), y(a)));
  const op = ARITHMETIC[fn];
  if (op !== undefined) return (a) => op(x(a), y(a));
  return unsupported(`function ${fn}`);
}

/** String methods of the standard library and the strings extension. */
const STRING_METHODS: Partial<Record<string, (s: string, args: string[]) => unknown>> = {
  contains: (s, [p]) => s.includes(p),
  startsWith: (s, [p]) => s.startsWith(p),
  endsWith: (s, [p]) => s.endsWith(p),
  lowerAscii: (s) => s.replace(/[A-Z]+/g, (m) => m.toLowerCase()),
  upperAscii: (s) => s.replace(/[a-z]+/g, (m) => m.toUpperCase()),
};
const STRING_ARITY: Record<string, number> = { contains: 1, startsWith: 1, endsWith: 1, lowerAscii: 0, upperAscii: 0 };

function method(fn: string, target: Compiled, args: Compiled[]): Compiled {
  if (fn === 'size' && args.length === 0) return (a) => v.size(target(a));
  if (fn === 'matches' && args.length === 1) return matches(target, args[0]);
  const extension = stringsExtension(fn, target, args, unsupported);
  if (extension !== undefined) return extension;
  const impl = STRING_METHODS[fn];
  if (impl === undefined || STRING_ARITY[fn] !== args.length) return unsupported(`method ${fn}/${args.length}`);
  if (args.length === 0) return (a) => impl(v.asString(fn, target(a)), []);
  const [p] = args;
  return (a) => {
    const s = v.asString(fn, target(a));
    const arg = p(a);
    if (typeof arg !== 'string') throw new v.CelEvalError(`found no matching overload for '${fn}' applied to 'string.(${v.kindName(arg)})'`);
    return impl(s, [arg]);
  };
}

/**
 * `&&` (absorbing = false) and `||` (absorbing = true): the first operand
 * equal to `absorbing` decides, even when another operand is an error or not
 * a bool; otherwise the first error is the result.
 */
function logical(args: Compiled[], absorbing: boolean): Compiled {
  const fn = absorbing ? '_||_' : '_&&_';
  return (a) => {
    let error: Error | undefined;
    for (const f of args) {
      let value: unknown;
      try {
        value = f(a);
      } catch (err) {
        if (err instanceof v.Bail) throw err;
        error ??= err as Error;
        continue;
      }
      if (value === absorbing) return absorbing;
      if (typeof value !== 'boolean') error ??= new v.CelEvalError(`type mismatch in ${fn}: expected bool, got ${v.kindName(value)}`);
    }
    if (error !== undefined) throw error;
    return !absorbing;
  };
}

function equality(x: Compiled, y: Compiled, want: boolean): Compiled {
  // a string literal on either side: a string compares by value, anything else is unequal
  const lit = isConstant(y) && typeof y.constant === 'string' ? [x, y.constant] : isConstant(x) && typeof x.constant === 'string' ? [y, x.constant] : undefined;
  if (lit !== undefined) {
    const [other, s] = lit as [Compiled, string];
    return (a) => (other(a) === s) === want;
  }
  return (a) => v.equals(x(a), y(a)) === want;
}

/** `x in list`; a constant list of strings becomes a Set (a non-string needle equals no element). */
function membership(x: Compiled, y: Compiled): Compiled {
  if (isConstant(y) && Array.isArray(y.constant) && y.constant.every((e) => typeof e === 'string')) {
    const set = new Set(y.constant);
    return (a) => {
      const needle = x(a);
      if (typeof needle === 'string') return set.has(needle);
      return v.contains(needle, y.constant);
    };
  }
  return (a) => v.contains(x(a), y(a));
}

function index(x: Compiled, y: Compiled): Compiled {
  return (a) => v.index(x(a), y(a));
}

/** An identifier: the innermost comprehension variable of that name, else a declared variable. */
function identifier(name: string, sc: Scope): Compiled {
  const slot = sc.locals.get(name);
  if (slot !== undefined) {
    return (a) => {
      // a comprehension sets the slots before its body runs
      const x = present(a.slots, 'comprehension slots')[slot];
      // an accumulator can hold an error (an erring step), which `&&`/`||` may still absorb
      if (x instanceof v.CelEvalError) throw x;
      return x;
    };
  }
  if (name === 'event') return (a) => a.event;
  if (name === 'meta') return (a) => a.meta;
  if (sc.vars.has(name)) {
    return (a) => {
      const vars = a.vars;
      if (vars === undefined || !Object.hasOwn(vars, name)) return v.bail(`no value for ${name}`);
      return vars[name];
    };
  }
  return unsupported(`identifier ${name}`);
}

type ComprehensionExpr = Extract<Expr['exprKind'], { case: 'comprehensionExpr' }>['value'];

/**
 * A comprehension, which is what the parser makes of the macros (all,
 * exists, exists_one, map, filter): the accumulator starts at accuInit; for
 * each element of the range (a list's elements, a map's keys) while
 * loopCondition is true, loopStep gives the next accumulator; result reads
 * it. As in the interpreter, an erring step stores the error in the
 * accumulator instead of ending the loop, so a later step can absorb it
 * (`all`: `@result && p(x)` is false on a false p(x) whatever @result held),
 * while an erring loopCondition, range or accuInit is the result.
 */
function comprehension(c: ComprehensionExpr, sc: Scope): Compiled {
  if (c.iterVar2 !== '') return unsupported('a two-variable comprehension');
  const part = (x: Expr | undefined): Expr => x ?? unsupported('an incomplete comprehension');
  const accuSlot = sc.depth;
  const iterSlot = accuSlot + 1;
  // inner comprehensions take the slots after these two; a name bound again here shadows the outer binding
  const withAccu: Scope = { vars: sc.vars, locals: new Map(sc.locals).set(c.accuVar, accuSlot), depth: sc.depth + 2 };
  const withIter: Scope = { vars: sc.vars, locals: new Map(withAccu.locals).set(c.iterVar, iterSlot), depth: sc.depth + 2 };
  const inStep: Scope = c.iterVar === c.accuVar ? withIter : { ...withIter, ownedAccu: c.accuVar };
  const range = node(part(c.iterRange), sc);
  const init = node(part(c.accuInit), sc);
  const condition = node(part(c.loopCondition), withIter);
  const step = node(part(c.loopStep), inStep);
  const result = node(part(c.result), withAccu);
  return (a) => {
    const initial = init(a);
    // a list accumulator is this loop's own copy: the step may append to it (see `append`), never to a constant `[]`
    const accu = Array.isArray(initial) ? initial.slice() : initial;
    const items = v.iterable(range(a));
    const slots = a.slots === undefined ? [] : a.slots.slice(0, accuSlot);
    slots[accuSlot] = accu;
    const frame: Activation = { event: a.event, meta: a.meta, vars: a.vars, slots };
    for (const item of items) {
      slots[iterSlot] = item;
      if (condition(frame) !== true) break;
      try {
        slots[accuSlot] = step(frame);
      } catch (err) {
        if (!(err instanceof v.CelEvalError)) throw err;
        slots[accuSlot] = err;
      }
    }
    return result(frame);
  };
}

/** The loop condition of all/exists: anything but `false` (an error too) goes on. */
function notStrictlyFalse(x: Compiled): Compiled {
  return (a) => {
    try {
      return x(a) !== false;
    } catch (err) {
      if (err instanceof v.CelEvalError) return true;
      throw err;
    }
  };
}

const CONVERSIONS: Partial<Record<string, (x: unknown) => unknown>> = {
  int: v.toInt,
  uint: v.toUint,
  double: v.toDouble,
  string: v.toStr,
  bool: v.toBool,
  bytes: v.toBytes,
  dyn: (x) => x,
};

/**
 * `s.matches(re)`: RE2 syntax and semantics through the interpreter's own
 * engine (@bufbuild/re2), so a pattern means the same on both paths. A
 * constant pattern is compiled once; others are cached by text.
 */
function matches(target: Compiled, pattern: Compiled): Compiled {
  const cache = new Map<string, RE2JS | v.CelEvalError>();
  const regex = (p: string): RE2JS => {
    let re = cache.get(p);
    if (re === undefined) {
      try {
        re = RE2JS.compile(p);
      } catch (err) {
        re = new v.CelEvalError(`invalid regular expression ${JSON.stringify(p)}: ${err instanceof Error ? err.message : String(err)}`);
      }
      // a bounded cache: patterns made per event must not grow it without end
      if (cache.size >= 64) cache.clear();
      cache.set(p, re);
    }
    if (re instanceof v.CelEvalError) throw re;
    return re;
  };
  return (a) => {
    const s = v.asString('matches', target(a));
    const p = pattern(a);
    if (typeof p !== 'string') throw new v.CelEvalError(`found no matching overload for 'matches' applied to 'string.(${v.kindName(p)})'`);
    return regex(p).test(s);
  };
}

/**
 * `@result + [e]` in the step of map/filter: appends to the loop's own
 * accumulator list in place instead of copying it at every element (which
 * made map and filter quadratic). Same result: the list is not visible to
 * anything else until the loop ends, and an accumulator that is an error or
 * not a list takes the general `+`.
 */
function append(argExprs: Expr[], sc: Scope, accuName: string): Compiled | undefined {
  // the parser's arguments: not necessarily two
  const [left, right] = argExprs as (Expr | undefined)[];
  if (left?.exprKind.case !== 'identExpr' || left.exprKind.value.name !== accuName) return undefined;
  if (right?.exprKind.case !== 'listExpr' || right.exprKind.value.elements.length !== 1 || right.exprKind.value.optionalIndices.length > 0) return undefined;
  const accu = identifier(accuName, sc);
  const element = node(right.exprKind.value.elements[0], sc);
  return (a) => {
    const list = accu(a);
    if (!Array.isArray(list)) return v.add(list, [element(a)]);
    list.push(element(a));
    return list as unknown[];
  };
}
