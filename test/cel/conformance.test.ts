/**
 * The CEL specification's conformance data (the simple tests of cel-spec,
 * as @bufbuild/cel-spec ships them), file by file, through the
 * @bufbuild/cel interpreter and through the compiled path
 * (src/pipeline/cel/compile.ts). The compiled path must give the
 * interpreter's result — the same value, or an error — on every case the
 * interpreter passes. The per-file tally is printed (and copied into
 * src/pipeline/operators/README.md).
 */
import { expect } from 'chai';
import { celEnv, celUint, isCelError, isCelList, isCelMap, isCelUint, parse, plan, type CelInput } from '@bufbuild/cel';
import { strings } from '@bufbuild/cel/ext';
import { getConformanceSuite } from '@bufbuild/cel-spec/testdata/tests.js';
import { getTestRegistry } from '@bufbuild/cel-spec/testdata/registry.js';
import { compileAst } from '../../src/pipeline/cel/compile';
import * as v from '../../src/pipeline/cel/values';

type Suite = ReturnType<typeof getConformanceSuite>;
type Test = Suite['tests'][number];
type Value = NonNullable<Extract<Test['original']['resultMatcher'], { case: 'value' }>['value']>;

class NotComparable extends Error {}

/** A value of the spec's `cel.expr.Value`, or an interpreter or compiled result, as one canonical string per CEL value. */
function canonExpected(x: Value): string {
  const k = x.kind;
  switch (k.case) {
    case 'nullValue':
      return 'null';
    case 'boolValue':
      return `b:${k.value}`;
    case 'int64Value':
      return `i:${k.value}`;
    case 'uint64Value':
      return `u:${k.value}`;
    case 'doubleValue':
      return `d:${Object.is(k.value, -0) ? '-0' : String(k.value)}`;
    case 'stringValue':
      return `s:${JSON.stringify(k.value)}`;
    case 'bytesValue':
      return `y:${Buffer.from(k.value).toString('hex')}`;
    case 'listValue':
      return `[${k.value.values.map(canonExpected).join(',')}]`;
    case 'mapValue':
      return `{${k.value.entries
        .map((e) => `${canonExpected(e.key as Value)}=${canonExpected(e.value as Value)}`)
        .sort()
        .join(',')}}`;
    default:
      throw new NotComparable(k.case ?? 'empty');
  }
}

function canonInterpreted(x: unknown): string {
  if (x === null) return 'null';
  switch (typeof x) {
    case 'boolean':
      return `b:${x}`;
    case 'bigint':
      return `i:${x}`;
    case 'number':
      return `d:${Object.is(x, -0) ? '-0' : String(x)}`;
    case 'string':
      return `s:${JSON.stringify(x)}`;
  }
  if (x instanceof Uint8Array) return `y:${Buffer.from(x).toString('hex')}`;
  if (isCelUint(x)) return `u:${x.value}`;
  if (isCelList(x)) return `[${[...x].map(canonInterpreted).join(',')}]`;
  if (isCelMap(x))
    return `{${[...x.entries()]
      .map(([key, val]) => `${canonInterpreted(key)}=${canonInterpreted(val)}`)
      .sort()
      .join(',')}}`;
  throw new NotComparable('a message or type');
}

function canonCompiled(x: unknown): string {
  if (x instanceof v.Dbl) return `d:${Object.is(x.d, -0) ? '-0' : String(x.d)}`;
  if (x instanceof v.U64) return `u:${x.v}`;
  if (typeof x === 'number' && Number.isSafeInteger(x)) return `i:${x}`;
  if (Array.isArray(x)) return `[${x.map(canonCompiled).join(',')}]`;
  const entries = x instanceof Map ? [...x.entries()] : v.kindOf(x) === v.Kind.Map ? Object.entries(x as object) : undefined;
  if (entries !== undefined)
    return `{${entries
      .map(([key, val]) => `${canonCompiled(key)}=${canonCompiled(val)}`)
      .sort()
      .join(',')}}`;
  return canonInterpreted(x);
}

/** A binding for the interpreter and for the compiled code (its value model, values.ts). */
function bindingFor(x: Value): { interp: CelInput; compiled: unknown } {
  const k = x.kind;
  switch (k.case) {
    case 'nullValue':
      return { interp: null, compiled: null };
    case 'boolValue':
    case 'stringValue':
      return { interp: k.value, compiled: k.value };
    case 'int64Value':
      return { interp: k.value, compiled: v.int(k.value, 'a binding') };
    case 'uint64Value':
      return { interp: celUint(k.value), compiled: new v.U64(k.value) };
    case 'doubleValue':
      return { interp: k.value, compiled: v.dbl(k.value) };
    case 'bytesValue':
      return { interp: k.value, compiled: k.value };
    case 'listValue': {
      const items = k.value.values.map(bindingFor);
      return { interp: items.map((i) => i.interp), compiled: items.map((i) => i.compiled) };
    }
    case 'mapValue': {
      const interp = new Map<bigint | string | boolean, CelInput>();
      const compiled = new Map<unknown, unknown>();
      for (const e of k.value.entries) {
        const key = bindingFor(e.key as Value);
        const val = bindingFor(e.value as Value);
        interp.set(key.interp as string, val.interp);
        compiled.set(key.compiled, val.compiled);
      }
      return { interp, compiled };
    }
    default:
      throw new NotComparable(`a ${k.case ?? 'missing'} binding`);
  }
}

interface Tally {
  cases: number;
  interpreterPasses: number;
  compiled: number;
  compiledAgrees: number;
}

const registry = getTestRegistry();
const envs = new Map<string, ReturnType<typeof celEnv>>();
const envFor = (namespace: string) => {
  let env = envs.get(namespace);
  if (env === undefined) envs.set(namespace, (env = celEnv({ namespace, registry, funcs: strings })));
  return env;
};

/** One case: does the interpreter pass it, and what does the compiled code make of it. */
function runCase(t: Test, tally: Tally, disagreements: string[]): void {
  tally.cases++;
  const o = t.original;
  let expectation: { error: true } | { value: string } | undefined;
  try {
    if (o.resultMatcher.case === 'value' && o.resultMatcher.value !== undefined) expectation = { value: canonExpected(o.resultMatcher.value) };
    else if (o.resultMatcher.case === 'evalError' || o.resultMatcher.case === 'anyEvalErrors') expectation = { error: true };
    else if (o.resultMatcher.case === undefined) expectation = { value: 'b:true' }; // the spec's default: the expression is true
  } catch (err) {
    if (!(err instanceof NotComparable)) throw err;
  }
  if (expectation === undefined || o.checkOnly) return;
  let ast: ReturnType<typeof parse>;
  const interpVars: Record<string, CelInput> = {};
  const compiledVars: Record<string, unknown> = {};
  try {
    for (const [name, ev] of Object.entries(o.bindings)) {
      if (ev.kind.case !== 'value') throw new NotComparable('an error or unknown binding');
      const b = bindingFor(ev.kind.value);
      interpVars[name] = b.interp;
      compiledVars[name] = b.compiled;
    }
    ast = parse(o.expr);
  } catch {
    return; // a binding this harness does not build, or an expression the parser refuses: the interpreter does not pass it
  }
  let interp: { error: true } | { value: string };
  try {
    const r = plan(envFor(o.container), ast)(interpVars);
    interp = isCelError(r) ? { error: true } : { value: canonInterpreted(r) };
  } catch {
    return;
  }
  if ('error' in expectation ? !('error' in interp) : !('value' in interp) || interp.value !== expectation.value) return;
  tally.interpreterPasses++;
  // a container changes what names resolve to: those run on the interpreter
  const fn = o.container === '' ? compileAst(ast.expr, { variables: Object.keys(compiledVars) }) : undefined;
  if (fn === undefined) return;
  let got: { error: true } | { value: string };
  try {
    got = { value: canonCompiled(fn({ event: undefined, meta: undefined, vars: compiledVars })) };
  } catch (err) {
    if (err instanceof v.Bail) return;
    if (!(err instanceof v.CelEvalError)) {
      disagreements.push(`${t.name}: ${o.expr}: compiled threw ${String(err)}`);
      tally.compiled++;
      return;
    }
    got = { error: true };
  }
  tally.compiled++;
  if (JSON.stringify(got) === JSON.stringify(interp)) tally.compiledAgrees++;
  else disagreements.push(`${t.name}: ${o.expr}: compiled ${JSON.stringify(got)}, interpreter ${JSON.stringify(interp)}`);
}

function walk(s: Suite, visit: (t: Test) => void): void {
  s.tests.forEach(visit);
  s.suites.forEach((c) => walk(c, visit));
}

describe('CEL conformance (cel-spec simple tests): compiled against the interpreter', () => {
  const suite = getConformanceSuite();
  const tallies: [string, Tally][] = [];
  for (const file of suite.suites) {
    it(`should agree with the interpreter on every case of ${file.name} the interpreter passes`, () => {
      const tally: Tally = { cases: 0, interpreterPasses: 0, compiled: 0, compiledAgrees: 0 };
      const disagreements: string[] = [];
      walk(file, (t) => runCase(t, tally, disagreements));
      tallies.push([file.name, tally]);
      expect(disagreements).to.deep.equal([]);
    });
  }

  after(() => {
    const rows = tallies.map(([name, t]) => `| ${name} | ${t.cases} | ${t.interpreterPasses} | ${t.compiled} | ${t.compiledAgrees} |`);
    const total = tallies.reduce(
      (s, [, t]) => ({
        cases: s.cases + t.cases,
        interpreterPasses: s.interpreterPasses + t.interpreterPasses,
        compiled: s.compiled + t.compiled,
        compiledAgrees: s.compiledAgrees + t.compiledAgrees,
      }),
      { cases: 0, interpreterPasses: 0, compiled: 0, compiledAgrees: 0 },
    );
    if (process.env.CEL_CONFORMANCE_TABLE !== undefined) {
      console.log(
        [
          '| file | cases | interpreter passes | compiled (of those) | compiled agrees |',
          '|---|---:|---:|---:|---:|',
          ...rows,
          `| **total** | ${total.cases} | ${total.interpreterPasses} | ${total.compiled} | ${total.compiledAgrees} |`,
        ].join('\n'),
      );
    }
  });

  it('should run a substantial share of the passing cases compiled', () => {
    // guards against a harness that silently compiles nothing (then every file would "agree")
    const compiled = tallies.reduce((s, [, t]) => s + t.compiled, 0);
    expect(compiled).to.be.greaterThan(500);
  });
});
