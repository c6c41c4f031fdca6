/**
 * Chooses the CEL library for runtime::cel by measurement: conformance first,
 * then speed. Run: `npx tsc -p tsconfig.json && node dist/bench/cel.js`.
 *
 * Conformance: a hand-picked set of cases from the CEL language definition
 * (cel-spec doc/langdef.md: arithmetic and overflow, heterogeneous equality,
 * error absorption in && and ||, macros, conversions, strings, bytes,
 * timestamps and durations). Speed: compile once, evaluate over the 100
 * events of bench/data/data.json.xz (a copy of the shared sample data) many times.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as buf from '@bufbuild/cel';
import * as mb from '@marcbachmann/cel-js';
import { xz } from '@napi-rs/lzma';
import { LazyCelScope, compileCel } from '../src/pipeline/cel/engine';

type Vars = Record<string, unknown>;
interface Engine {
  name: string;
  /** compiles once; the returned function throws on an evaluation error */
  compile(src: string): (vars: Vars) => unknown;
}

const bufbuild: Engine = {
  name: '@bufbuild/cel',
  compile(src) {
    const run = buf.plan(buf.celEnv(), buf.parse(src));
    return (vars) => {
      const r = run(vars as Record<string, buf.CelInput>);
      if (buf.isCelError(r)) throw r;
      return r;
    };
  },
};

const marcbachmann: Engine = {
  name: '@marcbachmann/cel-js',
  compile(src) {
    const env = new mb.Environment({ unlistedVariablesAreDyn: true });
    const f = env.parse(src);
    return (vars) => f(vars) as unknown;
  },
};

/** eddy's own engine (src/pipeline/cel): compiled closures over the event as it is, the interpreter for the rest; takes raw JSON events. */
const eddy: Engine = {
  name: 'eddy (compiled, interpreter fallback)',
  compile(src) {
    const program = compileCel(src);
    return (vars) => program.evaluateJson(new LazyCelScope(vars.event, vars.meta));
  },
};

/** The same engine with the compiled path off: every evaluation on the interpreter, as an expression the compiler does not take runs. */
const eddyInterpreted: Engine = {
  name: 'eddy (interpreter only)',
  compile(src) {
    const program = compileCel(src, { interpreterOnly: true });
    return (vars) => program.evaluateJson(new LazyCelScope(vars.event, vars.meta));
  },
};

/** JSON numbers that are integers become CEL ints, as runtime::cel does. */
export function toCel(v: unknown): unknown {
  if (typeof v === 'number') return Number.isSafeInteger(v) ? BigInt(v) : v;
  if (Array.isArray(v)) return v.map(toCel);
  if (v !== null && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[k] = toCel(x);
    return out;
  }
  return v;
}

/** A canonical text for any result of either library, so results compare. */
function show(v: unknown): string {
  if (typeof v === 'bigint') return `${v}`;
  if (typeof v === 'number') return Number.isInteger(v) ? `${v}.0` : `${v}`;
  if (typeof v === 'string') return JSON.stringify(v);
  if (v === null || typeof v === 'boolean') return String(v);
  if (v instanceof Uint8Array) return `b${JSON.stringify(Buffer.from(v).toString('latin1'))}`;
  if (buf.isCelUint(v)) return `${v.value}u`;
  if (buf.isCelList(v)) return `[${[...v].map(show).join(', ')}]`;
  if (buf.isCelMap(v)) return `{${[...v.entries()].map(([k, x]) => `${show(k)}: ${show(x)}`).join(', ')}}`;
  if (Array.isArray(v)) return `[${v.map(show).join(', ')}]`;
  const ctor = (v as object).constructor?.name ?? '';
  if (/uint|unsigned/i.test(ctor)) {
    const uint = v as { value?: bigint; toString(): string };
    return `${uint.value ?? uint.toString()}u`;
  }
  if (v instanceof Map) return `{${[...v.entries()].map(([k, x]) => `${show(k)}: ${show(x)}`).join(', ')}}`;
  if (ctor === 'Object')
    return `{${Object.entries(v as object)
      .map(([k, x]) => `${JSON.stringify(k)}: ${show(x)}`)
      .join(', ')}}`;
  return `<${ctor}>`;
}

const ERR = 'error';
/** [expression, expected canonical result or 'error'] */
export const cases: [string, string][] = [
  ['1 + 2 * 3', '7'],
  ['7 / 2', '3'],
  ['-7 / 2', '-3'],
  ['-7 % 3', '-1'],
  ['5 % 0', ERR],
  ['1 / 0', ERR],
  ['1.5 + 2.0', '3.5'],
  ['1 + 1.0', ERR],
  ['9223372036854775807 + 1', ERR],
  ['-9223372036854775808', '-9223372036854775808'],
  ['-(-9223372036854775808)', ERR],
  ['1u + 2u', '3u'],
  ['1u - 2u', ERR],
  ['uint(-1)', ERR],
  ['0x1F', '31'],
  ['1 == 1.0', 'true'],
  ['1u == 1', 'true'],
  ['1 < 1.5', 'true'],
  ['2u > 1', 'true'],
  ['0.0 / 0.0 != 0.0 / 0.0', 'true'],
  ['1.0 / 0.0 > 0.0', 'true'],
  ['"abc" < "abd"', 'true'],
  ['size("héllo")', '5'],
  ['"abc".size()', '3'],
  ['"hello".startsWith("he") && "hello".endsWith("lo") && "hello".contains("ll")', 'true'],
  ['"hello".matches("^h.*o$")', 'true'],
  ['"a" + "b"', '"ab"'],
  ['\'single\' == "single"', 'true'],
  ['r"\\n".size()', '2'],
  ['"a\\tb".size()', '3'],
  ['"\\u00e9" == "é"', 'true'],
  ['b"abc" == bytes("abc")', 'true'],
  ['size(b"\\xff")', '1'],
  ['[1, 2, 3][1]', '2'],
  ['[1, 2][5]', ERR],
  ['{"a": 1}["a"]', '1'],
  ['{"a": 1}.b', ERR],
  ['{1: "a", true: "b"}[true]', '"b"'],
  ['size({"a": 1, "b": 2})', '2'],
  ['[1] + [2] == [1, 2]', 'true'],
  ['{"a": 1} == {"a": 1}', 'true'],
  ['1 in [1, 2] && "a" in {"a": 1}', 'true'],
  ['null == null', 'true'],
  ['[1, 2, 3].all(x, x > 0)', 'true'],
  ['[1, 2, 3].exists(x, x > 2)', 'true'],
  ['[1, 2, 3].exists_one(x, x > 1)', 'false'],
  ['[1, 2, 3].map(x, x * 2)', '[2, 4, 6]'],
  ['[1, 2, 3].filter(x, x % 2 == 1)', '[1, 3]'],
  ['{"a": 1, "b": 2}.all(k, k != "c")', 'true'],
  ['has({"a": 1}.a)', 'true'],
  ['has({"a": 1}.b)', 'false'],
  ['true || (1 / 0 == 1)', 'true'],
  ['(1 / 0 == 1) || true', 'true'],
  ['(1 / 0 == 1) && false', 'false'],
  ['false ? 1 / 0 : 2', '2'],
  ['int("42")', '42'],
  ['int("x")', ERR],
  ['int(2.7)', '2'],
  ['double("1.5")', '1.5'],
  ['string(1.5)', '"1.5"'],
  ['string(42u)', '"42"'],
  ['double(9007199254740993)', '9007199254740992.0'],
  ['type(1) == int && type("a") == string && type([]) == list', 'true'],
  ['dyn(1) + 1', '2'],
  ['timestamp("2024-01-01T00:00:00Z") + duration("1h") == timestamp("2024-01-01T01:00:00Z")', 'true'],
  ['duration("1h30m").getMinutes()', '90'],
  ['timestamp("2024-03-05T10:00:00Z").getFullYear()', '2024'],
  ['timestamp("2024-03-05T10:00:00Z").getHours("+02:00")', '12'],
  ['string(timestamp("2024-01-01T00:00:00Z"))', '"2024-01-01T00:00:00Z"'],
  ['undefined_var', ERR],
  ['1 +', ERR],
];

function conformance(engine: Engine): { passed: number; failed: string[] } {
  const failed: string[] = [];
  for (const [src, want] of cases) {
    let got: string;
    try {
      got = show(engine.compile(src)({}));
    } catch {
      got = ERR;
    }
    if (got !== want) failed.push(`${src} => ${got} (want ${want})`);
  }
  return { passed: cases.length - failed.length, failed };
}

const exprs = [
  'event.short_message == "ERROR"',
  'event.aint > 20 && event.abool == false',
  '"tag1" in event.tags && event.application.startsWith("app")',
  'event.array.filter(x, x % 2 == 0).size() > 3',
  'event.syslog_hostname + "/" + event.logger_name',
  'has(event.missing) ? 1 : event.aint * 2',
];

/** Strings-extension calls as log processing writes them, over `logLine` events: compiled against the interpreter alone. */
export const stringExprs = ['event.msg.split(" ").size() > 3', 'event.host.replace(".", "_")', 'event.path.substring(0, 5) == "/api/"'];

/** A log line made of a sample event: its `about` text as the message, a dotted host name, a request path. */
function logLine(e: Record<string, unknown>): Vars {
  return {
    event: {
      msg: e.about,
      host: `${String(e.syslog_hostname)}.${String(e.application)}.example.org`,
      path: `/${e.abool === true ? 'api' : 'static'}/${String(e.index_type)}/${String(e.guid)}`,
    },
    meta: {},
  };
}

function speed(engine: Engine, events: Vars[], rounds: number, only: string[] = exprs): { evalsPerSec: number; compileUs: number } {
  const t0 = process.hrtime.bigint();
  const fns = only.map((e) => engine.compile(e));
  const compileUs = Number(process.hrtime.bigint() - t0) / 1000 / only.length;
  let sink = 0;
  const run = (n: number) => {
    for (let r = 0; r < n; r++) for (const ev of events) for (const f of fns) if (f(ev)) sink++;
  };
  run(Math.max(1, rounds / 10)); // warm-up
  const t1 = process.hrtime.bigint();
  run(rounds);
  const secs = Number(process.hrtime.bigint() - t1) / 1e9;
  if (sink < 0) console.log(sink);
  return { evalsPerSec: Math.round((rounds * events.length * fns.length) / secs), compileUs: Math.round(compileUs) };
}

function main(): void {
  const file = process.argv[2] ?? join(__dirname, '..', '..', 'bench', 'data', 'data.json.xz');
  const text = Buffer.from(xz.decompressSync(readFileSync(file))).toString('utf8');
  const raw = text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => ({ event: JSON.parse(l) as unknown, meta: {} }));
  // the libraries take events converted with toCel (as runtime::cel did); eddy's engine takes them as they are
  const events = raw.map((e) => ({ event: toCel(e.event), meta: {} }));
  const rounds = Number(process.env.ROUNDS ?? 200);
  for (const engine of [bufbuild, marcbachmann, eddy]) {
    const s = speed(engine, engine === eddy ? raw : events, rounds);
    if (engine === eddy) {
      // its results are JSON-friendly (ints as numbers), so `show` cannot judge it: test/cel/compiled.test.ts compares it with @bufbuild/cel on every case
      console.log(`${engine.name}: conformance see test/cel/compiled.test.ts, ${s.evalsPerSec} evals/s, compile ${s.compileUs} µs/expr`);
      for (const e of exprs)
        console.log(`  ${compileCel(e).compiled ? 'compiled   ' : 'interpreted'} ${e}: ${speed(eddy, raw, rounds, [e]).evalsPerSec} evals/s`);
      const lines = raw.map((r) => logLine(r.event as Record<string, unknown>));
      for (const e of stringExprs) {
        const compiled = speed(eddy, lines, rounds, [e]).evalsPerSec;
        const interpreted = speed(eddyInterpreted, lines, rounds, [e]).evalsPerSec;
        console.log(`  ${e}: ${compiled} evals/s compiled, ${interpreted} interpreted (x${(compiled / interpreted).toFixed(1)})`);
      }
      continue;
    }
    const c = conformance(engine);
    console.log(`${engine.name}: conformance ${c.passed}/${cases.length}, ${s.evalsPerSec} evals/s, compile ${s.compileUs} µs/expr`);
    for (const f of c.failed) console.log(`  FAIL ${f}`);
  }
}

if (require.main === module) main();
