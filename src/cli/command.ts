/**
 * How an `eddy` command declares its flags, once: `node:util.parseArgs`
 * reads the command line from the declaration, `--help` prints it, the
 * usage line on a usage error is made from it, and docs/command-line.md is
 * generated from it (tools/docs/command-line.ts).
 */
import { parseArgs } from 'node:util';

/** One flag of a command. */
export interface Flag {
  /** 'boolean': present or not; 'string': takes a value (`--flag VALUE` or `--flag=VALUE`) */
  readonly type: 'boolean' | 'string';
  /** its one-letter form: `f` for `-f` */
  readonly short?: string;
  /** other long names it is taken by (`--api-token` for `--token`), shown after its own */
  readonly aliases?: readonly string[];
  /** may be given more than once; every value is kept, in order */
  readonly multiple?: boolean;
  /** also takes the arguments after its value that do not start with `-` (`-f a.yaml b.yaml`) */
  readonly greedy?: boolean;
  /** the name of the value in the usage and in --help: FILE, PORT */
  readonly value?: string;
  /** read when the flag is not given (an empty variable counts as not set); for a flag that is not `multiple` */
  readonly env?: string;
  /** the value when neither the flag nor its environment variable is given */
  readonly default?: string;
  /** one line for --help: what the flag does */
  readonly description: string;
}

export type Flags = Readonly<Record<string, Flag>>;

/** The value a flag has after parsing: its type follows from its declaration. */
type ValueOf<F extends Flag> = F['type'] extends 'boolean'
  ? boolean
  : F extends { multiple: true }
    ? string[]
    : F extends { default: string }
      ? string
      : string | undefined;

export type Values<F extends Flags> = { -readonly [K in keyof F]: ValueOf<F[K]> };

/** A command line read against a command's flags. */
export interface CommandLine<F extends Flags> {
  values: Values<F>;
  /** the arguments that are no flag and no flag's value, in order */
  operands: string[];
  /** how a flag's value was given, for error messages: `--api-token`, `-f`, or the environment variable's name */
  source(flag: keyof F & string): string;
}

/** Bad usage: `eddy` prints the message and the command's usage, and exits 2. */
export class UsageError extends Error {}

/** Every command takes it: `eddy COMMAND --help` prints the command's flags and exits 0. */
export const HELP_FLAG = { type: 'boolean', short: 'h', description: 'print this help and exit' } as const satisfies Flag;

/** Where a command writes, and the environment it reads. The writers are plain functions (properties, not methods): commands pass them on. */
export interface Io {
  out: (text: string) => void;
  err: (text: string) => void;
  env: NodeJS.ProcessEnv;
}

/** A command, as `eddy` runs it: its declaration, the parse of its arguments into its options, and its run. */
export interface Command<O = unknown> {
  /** the words after `eddy`: 'server run' */
  readonly name: string;
  /** one short line for `eddy --help` */
  readonly summary: string;
  /** what --help says below the summary: more on what the command does, its exit status */
  readonly description?: string;
  /** the arguments after the flags, as the usage shows them: 'URL', 'CASES.yaml ...'; absent: none are taken */
  readonly operands?: string;
  /** its flags, --help included */
  readonly flags: Flags;
  /** reads `args` into the command's options, or says that help was asked for; a UsageError for bad usage */
  parse(args: readonly string[], env: NodeJS.ProcessEnv): { help: true } | { help: false; options: O };
  /** runs it; the exit status, or -1 to keep the process running (a server) */
  run(options: O, io: Io): Promise<number>;
}

interface Declaration<F extends Flags, O> {
  name: string;
  summary: string;
  description?: string;
  operands?: string;
  flags: F;
  /** the options from the command line; any error it throws is bad usage (exit 2) */
  options(line: CommandLine<F>, env: NodeJS.ProcessEnv): O;
  run(options: O, io: Io): Promise<number>;
}

/** A command from its declaration; `const F` keeps each flag's declaration literal, so the values are typed by it. */
export function defineCommand<const F extends Flags, O>(declaration: Declaration<F, O>): Command<O> & { readonly flags: F & { help: typeof HELP_FLAG } } {
  const flags = { ...declaration.flags, help: HELP_FLAG };
  return {
    name: declaration.name,
    summary: declaration.summary,
    description: declaration.description,
    operands: declaration.operands,
    flags,
    parse(args, env) {
      const line = readCommandLine(flags, args, env, declaration.operands !== undefined);
      if (line === 'help') return { help: true };
      try {
        return { help: false, options: declaration.options(line, env) };
      } catch (err) {
        throw err instanceof UsageError ? err : new UsageError((err as Error).message);
      }
    },
    run: (options, io) => declaration.run(options, io),
  };
}

/** The options `args` give `command`; a UsageError for bad usage, and for --help (there are no options to run with). */
export function optionsOf<O>(command: Command<O>, args: readonly string[], env: NodeJS.ProcessEnv): O {
  const parsed = command.parse(args, env);
  if (parsed.help) throw new UsageError(`--help asks for help, not to run eddy ${command.name}`);
  return parsed.options;
}

/**
 * Reads `args` against `flags` with parseArgs. Not parseArgs' strict mode:
 * its tokens are checked here instead, so that an unknown flag and a
 * missing value are reported in eddy's words (`unknown argument '--x'`,
 * `--api-port needs a value`), a flag's value may start with `-` as it
 * always could, and a greedy flag takes the operands that follow it.
 * 'help' when `--help` or `-h` is among them (whatever else is wrong).
 */
export function readCommandLine<F extends Flags>(flags: F, args: readonly string[], env: NodeJS.ProcessEnv, takesOperands: boolean): CommandLine<F> | 'help' {
  const options: Record<string, { type: Flag['type']; short?: string }> = {};
  const canonical = new Map<string, string>(); // every name parseArgs may report -> the flag's own name
  for (const [name, f] of Object.entries(flags)) {
    options[name] = { type: f.type, ...(f.short ? { short: f.short } : {}) };
    canonical.set(name, name);
    for (const alias of f.aliases ?? []) {
      options[alias] = { type: f.type };
      canonical.set(alias, name);
    }
  }
  const { tokens } = parseArgs({ args: [...args], options, strict: false, allowPositionals: true, tokens: true });
  if (tokens.some((t) => t.kind === 'option' && t.name === 'help')) return 'help';

  const given = new Map<string, string[] | string | boolean>();
  const sources = new Map<string, string>();
  const operands: string[] = [];
  let greedy: string | undefined; // the greedy flag whose value the previous token was
  for (const token of tokens) {
    if (token.kind === 'positional') {
      if (greedy !== undefined) (given.get(greedy) as string[]).push(token.value);
      else if (takesOperands) operands.push(token.value);
      else throw new UsageError(`unexpected argument '${token.value}' (this command takes flags only)`);
      continue;
    }
    greedy = undefined;
    if (token.kind === 'option-terminator') continue;
    const name = canonical.get(token.name);
    if (name === undefined) throw new UsageError(`unknown argument '${token.rawName}'`);
    const flag = flags[name];
    sources.set(name, token.rawName);
    if (flag.type === 'boolean') {
      if (token.inlineValue) throw new UsageError(`${token.rawName} takes no value`);
      given.set(name, true);
      continue;
    }
    if (token.value === undefined) throw new UsageError(`${token.rawName} needs a value`);
    if (flag.multiple) {
      const list = (given.get(name) as string[] | undefined) ?? [];
      list.push(token.value);
      given.set(name, list);
      if (flag.greedy) greedy = name;
    } else given.set(name, token.value);
  }

  const values: Record<string, string[] | string | boolean | undefined> = {};
  for (const [name, flag] of Object.entries(flags)) {
    let value = given.get(name);
    const fromEnv = flag.env === undefined ? undefined : env[flag.env];
    if (value === undefined && flag.env !== undefined && fromEnv) {
      value = fromEnv;
      sources.set(name, flag.env);
    }
    values[name] = value ?? (flag.type === 'boolean' ? false : flag.multiple ? [] : flag.default);
  }
  return { values: values as Values<F>, operands, source: (flag) => sources.get(flag) ?? `--${flag}` };
}

// ---- what --help and a usage error print ----

/** The width --help and the usage are wrapped to: a terminal's. */
const WIDTH = 80;

/** `--api-port PORT`, `-f, --file FILE ...`: a flag as the usage and --help show it. */
function spelling(name: string, flag: Flag, full: boolean): string {
  const names = [...(full && flag.short ? [`-${flag.short}`] : []), `--${name}`, ...(full ? (flag.aliases ?? []).map((a) => `--${a}`) : [])];
  return `${names.join(', ')}${flag.type === 'string' ? ` ${flag.value ?? 'VALUE'}` : ''}${flag.multiple ? ' ...' : ''}`;
}

/** `usage: eddy tap [--api URL] ... URL`, wrapped under the command's name. */
export function usage(command: Pick<Command, 'name' | 'flags' | 'operands'>): string {
  const head = `usage: eddy ${command.name}`;
  const words = Object.entries(command.flags)
    .filter(([name]) => name !== 'help')
    .map(([name, flag]) => `[${spelling(name, flag, false)}]`);
  if (command.operands) words.push(command.operands);
  const lines = [head];
  for (const word of words) {
    const last = lines.length - 1;
    if (lines[last].length + 1 + word.length > WIDTH && lines[last].length > head.length) lines.push(' '.repeat(head.length) + ' ' + word);
    else lines[last] += ` ${word}`;
  }
  return lines.join('\n');
}

/** `text` in lines of at most WIDTH characters (a longer word stays whole), each after `indent` but the first. */
export function wrap(text: string, indent: string, first = indent): string {
  const lines = [first];
  for (const word of text.split(/\s+/).filter(Boolean)) {
    const last = lines.length - 1;
    const fresh = lines[last] === (last === 0 ? first : indent);
    if (!fresh && lines[last].length + 1 + word.length > WIDTH) lines.push(indent + word);
    else lines[last] += (fresh ? '' : ' ') + word;
  }
  return lines.join('\n');
}

/** `eddy COMMAND --help`: the usage, what the command does, and every flag with its default and its environment variable. */
export function help(command: Pick<Command, 'name' | 'summary' | 'description' | 'flags' | 'operands'>): string {
  const rows = Object.entries(command.flags).map(([name, flag]) => {
    const notes = [flag.default !== undefined ? `default: ${flag.default}` : '', flag.env ? `env: ${flag.env}` : ''].filter(Boolean);
    return [`${flag.short ? '' : '    '}${spelling(name, flag, true)}`, `${flag.description}${notes.length ? ` (${notes.join('; ')})` : ''}`];
  });
  // the descriptions in a column after the names, unless the names leave it too narrow: then each under its name
  const width = Math.max(...rows.map(([left]) => left.length));
  const beside = width + 4 <= WIDTH - 36;
  const table = rows.map(([left, right]) =>
    beside ? wrap(right, ' '.repeat(width + 4), `  ${left.padEnd(width)}  `) : `  ${left}\n${wrap(right, '        ')}`,
  );
  const about = [command.summary, ...(command.description ? [command.description] : [])].map((p) => wrap(p, ''));
  return `${usage(command)}\n\n${about.join('\n\n')}\n\nflags:\n${table.join('\n')}\n`;
}
