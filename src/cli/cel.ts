import { json } from '../codecs/json';
import { compileCel, evaluateTraced } from '../pipeline/cel/engine';
import { defineCommand, type Io } from './command';

interface CelOptions {
  expression: string;
  event: unknown;
  meta: unknown;
}

const codec = json.create();

/** A flag's JSON value, read by the json codec as an event's data is (integers beyond ±2^53 as BigInt); bad JSON is bad usage naming the flag. */
function jsonFlag(flag: string, text: string): unknown {
  try {
    return codec.decode(Buffer.from(text, 'utf8'), 0n);
  } catch (err) {
    throw new Error(`--${flag}: not JSON: ${(err as Error).message.replace(/^json: /, '')}`);
  }
}

/** Compiles and evaluates the expression: the result on stdout, the engine on stderr. */
export function runCel(options: CelOptions, io: Pick<Io, 'out' | 'err'>): number {
  let program: ReturnType<typeof compileCel>;
  try {
    program = compileCel(options.expression);
  } catch (err) {
    io.err(`error: syntax error at ${(err as Error).message}\n`);
    return 1;
  }
  let result: ReturnType<typeof evaluateTraced>;
  try {
    result = evaluateTraced(program, options.event, options.meta);
  } catch (err) {
    io.err(`error: evaluation failed: ${(err as Error).message}\n`);
    return 1;
  }
  io.out(`${codec.encode(result.value).toString('utf8')}\n`);
  io.err(`engine: ${result.engine}\n`);
  return 0;
}

export const celCommand = defineCommand({
  name: 'cel',
  summary: 'evaluate a CEL expression on an event, as runtime::cel would',
  description:
    'EXPR sees `event` (the data, from --event) and `meta` (from --meta), as in a pipeline. The result goes to stdout as one JSON line; ' +
    '`engine: compiled` or `engine: interpreted` (which of the two CEL engines gave it) to stderr. Exit 1 for a syntax error ' +
    '(LINE:COLUMN: what was expected) or an evaluation error, 2 for bad usage (bad JSON in --event or --meta).',
  operands: 'EXPR',
  flags: {
    event: { type: 'string', value: 'JSON', default: '{}', description: "the event's data" },
    meta: { type: 'string', value: 'JSON', default: '{}', description: "the event's metadata" },
  },
  options: ({ values, operands }): CelOptions => {
    if (operands.length === 0) throw new Error("which expression? e.g. eddy cel 'event.count + 1' --event '{\"count\": 1}'");
    if (operands.length > 1) throw new Error(`one expression only (quote it): '${operands[0]}' and '${operands[1]}'`);
    return { expression: operands[0], event: jsonFlag('event', values.event), meta: jsonFlag('meta', values.meta) };
  },
  run: (options, io) => Promise.resolve(runCel(options, io)),
});
