/**
 * Compiled CEL (src/pipeline/cel) against the @bufbuild/cel interpreter:
 * the same result, or an error in both, for the conformance cases of
 * bench/cel.ts and for random events × random expressions.
 */
import { expect } from 'chai';
import fc from 'fast-check';
import { parse } from '@bufbuild/cel';
import { cases } from '../../bench/cel';
import { compileAst } from '../../src/pipeline/cel/compile';
import { Bail, CelEvalError, toJson } from '../../src/pipeline/cel/values';
import { LazyCelScope, compileCel } from '../../src/pipeline/cel/engine';
import { compileConfig, applyCel } from '../../src/pipeline/operators/cel';
import { event as makeEvent } from '../../src/core/event';

type Outcome = { value: unknown } | { error: string };

/** What the interpreter alone gives. */
function interpreted(src: string, data: unknown, meta: unknown): Outcome {
  try {
    return { value: compileCel(src, { interpreterOnly: true }).evaluateJson(new LazyCelScope(data, meta)) };
  } catch (err) {
    return { error: (err as Error).message };
  }
}

/** What runtime::cel gives (compiled, the interpreter where the compiled code declines). */
function engine(src: string, data: unknown, meta: unknown): Outcome {
  try {
    return { value: compileCel(src).evaluateJson(new LazyCelScope(data, meta)) };
  } catch (err) {
    return { error: (err as Error).message };
  }
}

/** The compiled code alone: 'fallback' when the expression is not compiled, 'bail' when the evaluation is declined. */
function compiledOnly(src: string, data: unknown, meta: unknown): Outcome | 'fallback' | 'bail' {
  const fn = compileAst(parse(src).expr);
  if (fn === undefined) return 'fallback';
  try {
    return { value: toJson(fn({ event: data, meta })) };
  } catch (err) {
    if (err instanceof Bail) return 'bail';
    if (err instanceof CelEvalError) return { error: err.message };
    throw err;
  }
}

/**
 * @bufbuild/cel 0.6.1 reports "int overflow during divide" for a uint
 * dividend of 2^63 or more (`18446744073709551615u / 1u`), where CEL gives
 * the quotient (a uint division cannot overflow) and so does the compiled
 * path: the one known divergence, checked by its own case below.
 */
function interpreterUintDivideBug(want: Outcome, compiled: Outcome, src: string): boolean {
  if (!('error' in want) || !want.error.includes('overflow during divide') || !('value' in compiled)) return false;
  // the quotient itself, or an expression over it (`0 <= (18446744073709551615u / 1u)`): then the source divides
  // a uint (the one int divide that overflows, -2^63 / -1, has no uint in it)
  return (typeof compiled.value === 'bigint' && compiled.value >= 2n ** 63n) || /\d+u\b/.test(src);
}

/** Same value, or an error on both sides (messages may word the cause differently). */
function sameOutcome(a: Outcome, b: Outcome): boolean {
  if ('error' in a || 'error' in b) return 'error' in a && 'error' in b;
  try {
    expect(a.value).to.deep.equal(b.value);
    return Object.is(a.value, b.value) || typeof a.value !== 'number';
  } catch {
    return false;
  }
}

const compilesOrFails = (src: string) => {
  try {
    parse(src);
    return true;
  } catch {
    return false;
  }
};

describe('compiled CEL', () => {
  it('should give the interpreter’s result on every conformance case of bench/cel.ts', () => {
    const tally = { compiled: 0, fallback: 0, bail: 0 };
    const differ: string[] = [];
    for (const [src] of cases) {
      if (!compilesOrFails(src)) continue; // a syntax error: both refuse at publish
      const want = interpreted(src, {}, {});
      const got = compiledOnly(src, {}, {});
      if (got === 'fallback' || got === 'bail') {
        tally[got]++;
        continue;
      }
      tally.compiled++;
      if (!sameOutcome(got, want)) differ.push(`${src}: compiled ${JSON.stringify(got, big)} interpreted ${JSON.stringify(want, big)}`);
    }
    expect(differ).to.deep.equal([]);
    // most of them run compiled: the comparison is not vacuous
    expect(tally.compiled).to.be.greaterThan(40);
  });

  it('should give the interpreter’s result for the acceptance config of issue 22 on every sample shape', () => {
    const events = [
      { application: 'app3', index_type: 'x', tags: [], logger_name: 'l', syslog_hostname: 'h' },
      { application: 'app9', index_type: 'applog_app6', tags: ['tag1'], logger_name: 'l6', syslog_hostname: 'h' },
      { application: 'app9', index_type: 'syslog_app1', tags: [], logger_name: 'l', syslog_hostname: 'h1' },
      { application: 'app9', index_type: 'zz', tags: ['tag2', 'tag1'], logger_name: 'l', syslog_hostname: 'h2' },
      { application: 'app9', index_type: 'syslog_app5', tags: ['tag2'], logger_name: 'l', syslog_hostname: 'h3' },
      { application: 'app9', index_type: 'zz', tags: ['tag2'], logger_name: 'l', syslog_hostname: 'h4' },
      { application: 7, index_type: 'zz', tags: 'tag1', syslog_hostname: 'h5' },
      { index_type: 'zz', tags: [] },
    ];
    for (const src of Object.values(ACCEPTANCE)) {
      expect(compiledOnly(src, events[0], {}), src).to.not.equal('fallback');
      for (const e of events) expect(sameOutcome(engine(src, e, {}), interpreted(src, e, {})), `${src} on ${JSON.stringify(e)}`).to.equal(true);
    }
  });

  it('should give the interpreter’s result or an error in both for random events and expressions', () => {
    let compiledRuns = 0;
    fc.assert(
      fc.property(expression(), jsonEvent(), fc.dictionary(fc.constantFrom('x', 'y'), leaf()), (src, data, meta) => {
        const want = interpreted(src, data, meta);
        const got = engine(src, data, meta);
        const alone = compiledOnly(src, data, meta);
        if (alone !== 'fallback' && alone !== 'bail') {
          compiledRuns++;
          if (!sameOutcome(alone, want))
            throw new Error(`${src} on ${JSON.stringify(data, big)}: compiled ${JSON.stringify(alone, big)}, interpreted ${JSON.stringify(want, big)}`);
        }
        if (!sameOutcome(got, want)) throw new Error(`${src}: engine ${JSON.stringify(got, big)}, interpreted ${JSON.stringify(want, big)}`);
      }),
      { numRuns: 3000 },
    );
    // the generated expressions mostly run compiled, not on the fallback
    expect(compiledRuns).to.be.greaterThan(1500);
  });

  it('should give the interpreter’s result or an error in both for random arithmetic and comparisons over ints, uints and doubles', () => {
    const numbers = fc.record({
      a: leaf(),
      b: fc.oneof(
        fc.integer(),
        fc.double(),
        fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }).filter((b) => b > 2n ** 53n || b < -(2n ** 53n)),
      ),
    });
    fc.assert(
      fc.property(arithmetic(), numbers, (src, data) => {
        const want = interpreted(src, data, {});
        const alone = compiledOnly(src, data, {});
        if (alone === 'fallback') throw new Error(`${src} is not compiled`);
        if (alone !== 'bail' && interpreterUintDivideBug(want, alone, src)) return;
        if (alone !== 'bail' && !sameOutcome(alone, want))
          throw new Error(`${src} on ${JSON.stringify(data, big)}: compiled ${JSON.stringify(alone, big)}, interpreted ${JSON.stringify(want, big)}`);
      }),
      { numRuns: 3000 },
    );
  });

  it('should divide uints past 2^63 as CEL does, where the interpreter reports an overflow', () => {
    expect(compiledOnly('18446744073709551615u / 1u', {}, {})).to.deep.equal({ value: 18446744073709551615n });
    expect(compiledOnly('18446744073709551615u / 3u', {}, {})).to.deep.equal({ value: 6148914691236517205n });
    expect(interpreted('18446744073709551615u / 1u', {}, {}))
      .to.have.property('error')
      .that.matches(/overflow during divide/);
  });

  it('should compile the macros, conversions and matches with CEL’s results and errors', () => {
    const ERR = { error: true };
    const cases: [string, unknown][] = [
      // all/exists: a decisive element absorbs another element's error, in either order
      ['[0, 1].all(x, 1 / x > 2)', false],
      ['[1, 0].all(x, 1 / x > 2)', false],
      ['[0, 3].exists(x, 6 / x == 2)', true],
      ['[3, 0].exists(x, 6 / x == 2)', true],
      ['[0, 1].all(x, 6 / x > 0)', ERR],
      ['[0, 1].exists(x, 6 / x > 9)', ERR],
      ['event.tags.exists(t, t.startsWith("tag"))', true],
      ['event.tags.all(t, t.size() == 4)', true],
      ['[].all(x, x)', true],
      ['[].exists(x, x)', false],
      ['[1, "a"].all(x, x)', ERR],
      ['[0, 2].exists_one(x, 2 / x == 1)', ERR],
      ['[1, 2, 3].exists_one(x, x > 2)', true],
      ['[1, 2, 3].exists_one(x, x > 1)', false],
      ['[1, 2, 3].map(x, x * 2)', [2, 4, 6]],
      ['[1, 2, 3].map(x, x > 1, x * 2)', [4, 6]],
      ['[1, 2, 3].filter(x, x % 2 == 1)', [1, 3]],
      ['event.m.map(k, k)', ['x', 'y']],
      ['event.m.filter(k, event.m[k] > 1)', ['y']],
      ['[[1], [2, 3]].map(x, x.map(y, y + size(x)))', [[2], [4, 5]]],
      ['[1, 2].map(x, [1, 2].filter(x, x > 1))', [[2], [2]]],
      ['"a".all(x, x)', ERR],
      ['[9223372036854775807].map(x, x + 1)', ERR],
      // conversions, with their range and format errors
      ['int("-12")', -12],
      ['int(2.9)', 2],
      ['int(-2.9)', -2],
      ['int(9223372036854775807.0)', ERR],
      ['int(18446744073709551615u)', ERR],
      ['int("9223372036854775808")', ERR],
      ['int("abc")', ERR],
      ['uint(1.5)', 1],
      ['uint(-0.5)', ERR],
      ['uint(-1)', ERR],
      ['uint("18446744073709551615")', 18446744073709551615n],
      ['double(3) == 3.0', true],
      ['double("2.5")', 2.5],
      ['double(18446744073709551615u)', 2 ** 64], // the double nearest 2^64 - 1
      ['string(1.5)', '1.5'],
      ['string(-7)', '-7'],
      ['string(7u)', '7'],
      ['string(true)', 'true'],
      ['string(b"\\xff")', ERR],
      ['string(b"ok")', 'ok'],
      ['bool("TRUE")', true],
      ['bool("f")', false],
      ['bool("yes")', ERR],
      ['int([1])', ERR],
      // matches: RE2, a partial match, a bad pattern is an error at evaluation
      ['"abc123".matches("[0-9]+")', true],
      ['"abc".matches("^b")', false],
      ['event.tags[0].matches("^tag[0-9]$")', true],
      ['"abc".matches("(")', ERR],
      ['"abc".matches("(?P<x>b)")', true],
      ['"abc".matches(1)', ERR],
    ];
    const data = { tags: ['tag1', 'tag2'], m: { x: 1, y: 2 } };
    for (const [src, want] of cases) {
      const got = compiledOnly(src, data, {});
      expect(got, `${src} is compiled`).to.not.be.oneOf(['fallback', 'bail']);
      if (want === ERR) expect(got, src).to.have.property('error');
      else expect(got, src).to.deep.equal({ value: want });
      expect(sameOutcome(got as Outcome, interpreted(src, data, {})), `${src}: the interpreter agrees`).to.equal(true);
    }
  });

  it('should compile the strings extension’s split, replace, substring, trim, join, indexOf, lastIndexOf and charAt', () => {
    const ERR = { error: true };
    // [expression, its value on `data`, or ERR]: indexes count UTF-16 code units, as the interpreter's do
    const cases: [string, unknown][] = [
      ['event.msg.split(" ").size() > 3', true],
      ['event.msg.split(" ", 2)', ['GET', '/api/v1']],
      ['event.msg.split(" ", 1)', ['GET /api/v1 200 😀']],
      ['event.msg.split(" ", 0)', []],
      ['event.host.replace(".", "_")', 'web_example_org'],
      ['event.host.replace(".", "_", 1)', 'web_example.org'],
      ['event.path.substring(0, 5) == "/api/"', true],
      ['event.path.substring(5)', 'v1'],
      ['event.path.substring(3, 2)', ERR],
      ['event.path.substring(0, 8)', ERR],
      ['" \\t x y \\n\\u0085".trim()', 'x y'],
      ['"\\uFEFF x".trim()', '\uFEFF x'],
      ['event.tags.join()', 'ab'],
      ['event.tags.join(", ")', 'a, b'],
      ['[1, "a"].join()', ERR],
      ['event.msg.indexOf("/")', 4],
      ['event.msg.indexOf("/", 5)', 8],
      ['event.msg.lastIndexOf("/")', 8],
      ['event.msg.lastIndexOf("/", 7)', 4],
      ['event.msg.indexOf("x", 99)', ERR],
      ['event.msg.charAt(0)', 'G'],
      ['event.msg.charAt(-1)', ERR],
      ['"😀a".charAt(2)', 'a'],
    ];
    const data = { msg: 'GET /api/v1 200 😀', host: 'web.example.org', path: '/api/v1', tags: ['a', 'b'] };
    for (const [src, want] of cases) {
      expect(compileCel(src).compiled, `${src} is compiled`).to.equal(true);
      const got = compiledOnly(src, data, {});
      expect(got, `${src} runs compiled`).to.not.be.oneOf(['fallback', 'bail']);
      if (want === ERR) expect(got, src).to.have.property('error');
      else expect(got, src).to.deep.equal({ value: want });
      expect(got, `${src}: the interpreter agrees`).to.deep.equal(interpreted(src, data, {}));
    }
    // an empty `old` with a huge n: what the interpreter reaches after n rounds (its string outgrows JavaScript's limit, or stays as it was)
    expect(compiledOnly('"ab".replace("", "x", 9223372036854775807)', {}, {})).to.deep.equal({ error: 'Invalid string length' });
    expect(compiledOnly('"ab".replace("", "", 9223372036854775807)', {}, {})).to.deep.equal({ value: 'ab' });
    expect(interpreted('"ab".replace("", "x", 3)', {}, {})).to.deep.equal({ value: 'xxxab' });
    // format and strings.quote are not compiled
    expect(compileCel('"%d".format([1])').compiled).to.equal(false);
    expect(compileCel('strings.quote("a")').compiled).to.equal(false);
  });

  it('should give the interpreter’s result and error message for the strings extension on random strings, separators and indexes', () => {
    let compiledRuns = 0;
    fc.assert(
      fc.property(stringsCall(), stringsEvent(), (src, data) => {
        const want = interpreted(src, data, {});
        const alone = compiledOnly(src, data, {});
        if (alone === 'fallback') throw new Error(`${src} is not compiled`);
        if (alone !== 'bail') {
          compiledRuns++;
          expect(alone, `${src} on ${JSON.stringify(data, big)}`).to.deep.equal(want);
        }
        expect(engine(src, data, {}), `${src} on ${JSON.stringify(data, big)} (engine)`).to.deep.equal(want);
      }),
      { numRuns: 4000 },
    );
    // mostly strings and ints where the overloads want them: the comparison is not vacuous
    expect(compiledRuns).to.be.greaterThan(2500);
  });

  it('should give each evaluation of map and filter its own result list', () => {
    // the compiled step appends to the loop's accumulator in place: no evaluation may see another's list
    for (const src of ['event.n.filter(x, x > 0)', 'event.n.map(x, x * 10)', 'event.n.map(x, x > 1, x)', '[1, 2].map(y, event.n.filter(x, x > y))']) {
      const fn = compileAst(parse(src).expr);
      expect(fn, src).to.not.equal(undefined);
      const first = toJson(fn!({ event: { n: [1, 2, 3] }, meta: {} }));
      const second = toJson(fn!({ event: { n: [4] }, meta: {} }));
      expect(first, src).to.deep.equal((interpreted(src, { n: [1, 2, 3] }, {}) as { value: unknown }).value);
      expect(second, src).to.deep.equal((interpreted(src, { n: [4] }, {}) as { value: unknown }).value);
    }
  });

  it('should write a map’s uint keys as their digits, as its int keys', () => {
    // the compiled code declines maps with keys that are not strings: the interpreter's result is the engine's
    const data = { u: 7 };
    expect(interpreted('{1u: "a", 2: "b", true: "c"}', data, {})).to.deep.equal({ value: { '1': 'a', '2': 'b', true: 'c' } });
    expect(engine('{uint(event.u): "a"}', data, {})).to.deep.equal({ value: { '7': 'a' } });
  });

  it('should send an event to err naming the cause when a compiled expression errs', () => {
    const c = compileConfig({ meta: { r: 'event.n / 0' } }, 'n1');
    expect(c.meta[0][1].compiled).to.equal(true);
    const out = applyCel(c, makeEvent({ n: 3 }), 'n1');
    expect(out?.port).to.equal('err');
    expect(out?.event.meta.error).to.equal('runtime::cel node n1: meta.r: int divide by zero');
  });

  it('should treat hostile identifiers and strings as data, never as code', () => {
    const nasty = '"); process.exit(1); ("\\';
    const data = JSON.parse(`{"__proto__": ${JSON.stringify(nasty)}, "tags": [${JSON.stringify(nasty)}]}`) as unknown;
    for (const src of [
      `event["__proto__"] == ${JSON.stringify(nasty)}`,
      `${JSON.stringify(nasty)} in event.tags`,
      `has(event.__proto__)`,
      `{${JSON.stringify(nasty)}: true}[event.tags[0]]`,
    ]) {
      expect(compiledOnly(src, data, {}), src).to.deep.equal({ value: true });
      expect(interpreted(src, data, {}), src).to.deep.equal({ value: true });
    }
    // what the prototype has is not a field of the event
    for (const src of ['event.constructor', 'event["toString"]']) {
      expect(compiledOnly(src, {}, {}), src).to.have.property('error');
      expect(interpreted(src, {}, {}), src).to.have.property('error');
    }
    expect(compiledOnly('has(event.hasOwnProperty)', {}, {})).to.deep.equal({ value: false });
    // a result keeps a "__proto__" key as a key
    expect(Object.keys((engine('event', data, {}) as { value: object }).value)).to.deep.equal(['__proto__', 'tags']);
  });
});

function big(_k: string, v: unknown): unknown {
  return typeof v === 'bigint' ? `${v}n` : v;
}

const ACCEPTANCE = {
  class:
    'event.application in ["app1","app2","app3","app4","app5"] ? "applog_app1" : event.index_type == "applog_app6" ? "applog_app6" : event.index_type == "syslog_app1" ? "syslog_app1" : "tag1" in event.tags ? "syslog_app2" : event.index_type in ["syslog_app3","syslog_app4","syslog_app5","syslog_app6"] ? event.index_type : "default"',
  rate: 'event.application in ["app1","app2","app3","app4","app5"] ? {"app1":1250,"app2":2500,"app3":18750,"app4":750,"app5":18750}[event.application] : event.index_type == "applog_app6" ? 4500 : event.index_type == "syslog_app1" ? 2500 : "tag1" in event.tags ? 125 : event.index_type in ["syslog_app3","syslog_app4","syslog_app5","syslog_app6"] ? {"syslog_app3":1750,"syslog_app4":7500,"syslog_app5":125,"syslog_app6":3750}[event.index_type] : 250',
  dimensions:
    'event.application in ["app1","app2","app3","app4","app5"] ? event.application : event.index_type == "applog_app6" ? event.logger_name : event.syslog_hostname',
};

const KEYS = ['a', 'b', 'c', 'tags', 'application'];

/** JSON leaves as the codecs give them: safe integers as numbers, larger ones as bigint, doubles, strings, bools, null. */
function leaf(): fc.Arbitrary<unknown> {
  return fc.oneof(
    fc.integer({ min: -3, max: 3 }),
    fc.constantFrom(0, 1, 2, 2.5, -0.5, 1e20, 9007199254740991, -9007199254740991, 2 ** 53),
    fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }).filter((b) => b > 2n ** 53n || b < -(2n ** 53n)),
    fc.constantFrom(9223372036854775807n, -9223372036854775808n),
    fc.double(),
    fc.constantFrom('a', 'app1', 'tag1', 'A', 'é', ''),
    fc.boolean(),
    fc.constant(null),
  );
}

function jsonEvent(): fc.Arbitrary<Record<string, unknown>> {
  const value = fc.letrec<{ v: unknown }>((tie) => ({
    v: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      leaf(),
      fc.array(tie('v'), { maxLength: 3 }),
      fc.dictionary(fc.constantFrom(...KEYS), tie('v'), { maxKeys: 3 }),
    ),
  })).v;
  return fc.dictionary(fc.constantFrom(...KEYS), value, { maxKeys: 5 });
}

/** Arithmetic and comparisons over numeric literals of every kind and two numeric fields. */
function arithmetic(): fc.Arbitrary<string> {
  const atom = fc.constantFrom(
    '0',
    '1',
    '2',
    '-1',
    '1.0',
    '2.0',
    '0.5',
    '1u',
    '2u',
    '9223372036854775807',
    '-9223372036854775808',
    '18446744073709551615u',
    'event.a',
    'event.b',
  );
  return fc.letrec<{ e: string }>((tie) => ({
    e: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      atom,
      fc.tuple(tie('e'), fc.constantFrom('+', '-', '*', '/', '%', '==', '!=', '<', '<=', '>', '>='), tie('e')).map(([x, op, y]) => `(${x} ${op} ${y})`),
      tie('e').map((x) => `-(${x})`),
    ),
  })).e;
}

/** Expressions from a small grammar over the fields of jsonEvent. */
function expression(): fc.Arbitrary<string> {
  const atom = fc.constantFrom(
    'event.a',
    'event.b',
    'event.c',
    'event.tags',
    'event.application',
    'event.c.a',
    'event["b"]',
    'meta.x',
    '0',
    '1',
    '-1',
    '2',
    '1.0',
    '2.0',
    '1.5',
    '9223372036854775807',
    '1u',
    '"a"',
    '"tag1"',
    'true',
    'false',
    'null',
    'b"a"',
    '[1, "a", 2.0]',
    '{"a": 1, "b": "x"}',
    'has(event.a)',
    'has(event.c.b)',
    '[0, 1, 2]',
    '[1, "a", 0]',
    '"12"',
    '"-3"',
    '"1.5"',
    '"true"',
    '" 7 "',
    '"18446744073709551616"',
    '1e19',
    '-0.5',
  );
  const e = fc.letrec<{ e: string }>((tie) => ({
    e: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      atom,
      fc
        .tuple(tie('e'), fc.constantFrom('==', '!=', '<', '<=', '>', '>=', '+', '-', '*', '/', '%', '&&', '||', 'in'), tie('e'))
        .map(([x, op, y]) => `(${x} ${op} ${y})`),
      tie('e').map((x) => `!(${x})`),
      tie('e').map((x) => `-(${x})`),
      fc.tuple(tie('e'), tie('e'), tie('e')).map(([c, x, y]) => `(${c} ? ${x} : ${y})`),
      fc.tuple(tie('e'), tie('e')).map(([x, y]) => `[${x}, ${y}]`),
      fc.tuple(tie('e'), tie('e')).map(([x, y]) => `{"k": ${x}, "l": ${y}}`),
      fc.tuple(tie('e'), tie('e')).map(([x, y]) => `${x}[${y}]`),
      tie('e').map((x) => `size(${x})`),
      fc.tuple(tie('e'), fc.constantFrom('contains', 'startsWith', 'endsWith'), tie('e')).map(([x, m, y]) => `(${x}).${m}(${y})`),
      fc.tuple(tie('e'), fc.constantFrom('lowerAscii', 'upperAscii', 'size', 'trim', 'join')).map(([x, m]) => `(${x}).${m}()`),
      // the strings extension inside larger expressions (its own property, below, covers its arguments)
      fc.tuple(tie('e'), fc.constantFrom('split', 'indexOf', 'lastIndexOf', 'charAt', 'substring', 'join'), tie('e')).map(([x, m, y]) => `(${x}).${m}(${y})`),
      fc.tuple(tie('e'), tie('e'), tie('e')).map(([x, y, z]) => `(${x}).replace(${y}, ${z})`),
      // macros over any expression (mostly erring on non-lists), the element as `x`, the accumulator in reach of errors
      fc
        .tuple(tie('e'), fc.constantFrom('all', 'exists', 'exists_one', 'map', 'filter'), tie('e'))
        .map(([r, m, p]) => `(${r}).${m}(x, ${p.replaceAll('event.a', 'x')})`),
      fc.tuple(tie('e'), tie('e'), tie('e')).map(([r, p, f]) => `(${r}).map(x, ${p.replaceAll('event.b', 'x')}, ${f.replaceAll('event.a', 'x')})`),
      fc.tuple(fc.constantFrom('int', 'uint', 'double', 'string', 'bool', 'bytes', 'dyn'), tie('e')).map(([f, x]) => `${f}(${x})`),
      fc.tuple(tie('e'), fc.constantFrom('"a"', '"^a"', '"[0-9]+"', '"("', '"\\\\d"', 'event.application')).map(([x, re]) => `(${x}).matches(${re})`),
    ),
  })).e;
  return fc.oneof(e, fc.constantFrom(...Object.values(ACCEPTANCE)));
}

/**
 * Text for the strings extension: emoji (two UTF-16 code units each, so
 * code-unit and code-point indexes differ), a lone surrogate, the separators,
 * white space that JavaScript's trim and the interpreter's disagree on
 * (U+0085, U+FEFF), runs of separators and separators at the ends.
 */
const PIECES = ['a', 'b', 'é', ' ', '  ', '.', '..', ',', '😀', '👍🏽', '\uD83D', '\t', '\n', '\u0085', '\uFEFF', '\u3000', '\u00A0', '$&'];

function text(maxLength: number): fc.Arbitrary<string> {
  return fc.array(fc.constantFrom(...PIECES), { maxLength }).map((p) => p.join(''));
}

/** An int argument: small ones around the strings' lengths, negative, past the end, beyond 2^32 and at the 64-bit edges. */
function intArgument(): fc.Arbitrary<unknown> {
  return fc.oneof(
    { weight: 6, arbitrary: fc.integer({ min: -3, max: 14 }) },
    fc.constantFrom(2 ** 32, 2 ** 32 + 1, 2 ** 32 - 1, -(2 ** 32), 9007199254740991, -9007199254740991),
    fc.constantFrom(9223372036854775807n, -9223372036854775808n, 2n ** 53n + 1n),
    // kinds no overload takes: the interpreter's error
    fc.constantFrom(1.5, '1', null),
  );
}

/** The receiver and arguments as event fields: mostly of the kinds the overloads take, sometimes not. */
function stringsEvent(): fc.Arbitrary<Record<string, unknown>> {
  const str = fc.oneof({ weight: 12, arbitrary: text(8) }, fc.constantFrom(7, null, ['a'], 2.5));
  const sep = fc.oneof({ weight: 12, arbitrary: text(2) }, fc.constantFrom(1, null));
  const list = fc.oneof({ weight: 8, arbitrary: fc.array(text(3), { maxLength: 4 }) }, fc.constantFrom(['a', 1], [null], 'ab', { a: 'b' }));
  const small = fc.oneof({ weight: 6, arbitrary: fc.integer({ min: -3, max: 14 }) }, fc.constantFrom(1.5, '1', null));
  return fc.record({ s: str, sep, rep: sep, i: intArgument(), j: intArgument(), n: intArgument(), k: small, l: list });
}

/** Every overload of the compiled strings-extension functions, over the fields of stringsEvent and some literals. */
function stringsCall(): fc.Arbitrary<string> {
  return fc.constantFrom(
    'event.s.split(event.sep)',
    'event.s.split(event.sep, event.n)',
    'event.s.split(" ")',
    'event.s.split(".", event.n)',
    'event.s.split("")',
    'event.s.split(" ").size() > 3',
    'event.s.replace(event.sep, event.rep)',
    // an empty `old` keeps the interpreter busy for n rounds: n is small here (k), a huge one is a fixed case
    'event.s.replace(event.sep, event.rep, event.k)',
    'event.s.replace(".", event.rep, event.n)',
    'event.s.replace(".", "_")',
    'event.s.replace("", event.rep)',
    'event.s.replace("", event.rep, event.k)',
    'event.s.substring(event.i)',
    'event.s.substring(event.i, event.j)',
    'event.s.substring(0, 5) == "/api/"',
    'event.s.trim()',
    'event.l.join()',
    'event.l.join(event.sep)',
    'event.s.indexOf(event.sep)',
    'event.s.indexOf(event.sep, event.i)',
    'event.s.lastIndexOf(event.sep)',
    'event.s.lastIndexOf(event.sep, event.i)',
    'event.s.charAt(event.i)',
    'event.s.split(event.sep).join(event.rep)',
    'event.s.trim().substring(event.i).indexOf(event.sep)',
  );
}
