/**
 * `eddy`: the command table, `--help` and `--version`, and what a usage
 * error prints. Exit status: 0 done (or --help, --version), 1 failed (a
 * file, the API, a case), 2 bad usage (an unknown command or flag, a
 * missing or bad value: the message names it, the command's usage follows).
 */
import { version } from '../version';
import { UsageError, help, usage, type Command, type Io } from './command';
import { celCommand } from './cel';
import { listCommand } from './list';
import { newCommand } from './new';
import { schemaCommand } from './schema';
import { serverRunCommand } from './server-run';
import { statusCommand } from './status';
import { tapCommand } from './tap';
import { testCommand } from './test';
import { topCommand } from './top';
import { validateCommand } from './validate';
import { configCommand } from './config';

/** Every command, in the order `eddy --help` lists them. */
export const COMMANDS: readonly Command[] = [
  serverRunCommand,
  validateCommand,
  configCommand,
  testCommand,
  tapCommand,
  statusCommand,
  topCommand,
  listCommand,
  newCommand,
  schemaCommand,
  celCommand,
];

/** `eddy --help`: each command's short usage and what it does. */
export function overview(): string {
  const synopses = COMMANDS.map((c) => `eddy ${c.name} [FLAGS]${c.operands ? ` ${c.operands}` : ''}`);
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  return [
    ...[...synopses, 'eddy help [COMMAND]', 'eddy version'].map((line, i) => `${i === 0 ? 'usage: ' : '       '}${line}`),
    '',
    'commands:',
    ...COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    "`eddy COMMAND --help` (or `eddy help COMMAND`) lists a command's flags; `eddy version` (or --version) prints the version.",
    '',
  ].join('\n');
}

/** The commands whose name starts with these words (`server` finds `server run`). */
function commandsStartingWith(words: readonly string[]): Command[] {
  return COMMANDS.filter((c) => words.length > 0 && words.every((word, i) => c.name.split(' ')[i] === word));
}

const processIo: Io = { out: (t) => process.stdout.write(t), err: (t) => process.stderr.write(t), env: process.env };

/** Resolves once what was written to `stream` before is handed to the OS (an empty write's callback comes after theirs). */
const drained = (stream: NodeJS.WriteStream) => new Promise<void>((resolve) => stream.write('', () => resolve()));

/**
 * Runs `argv`; with the process's own streams, answers only once stdout and
 * stderr took everything: the caller exits at once (process.exit), which
 * would cut a pipe's output short at 64 KiB (`eddy schema > file` is 160 KB).
 */
export async function main(argv: string[], io: Io = processIo): Promise<number> {
  const code = await command(argv, io);
  if (io === processIo) await Promise.all([drained(process.stdout), drained(process.stderr)]);
  return code;
}

async function command(argv: string[], io: Io): Promise<number> {
  if (argv[0] === '--version' || argv[0] === '-V' || (argv[0] === 'version' && argv.length === 1)) {
    io.out(`eddy ${version}\n`);
    return 0;
  }
  if (argv.length === 0 || argv[0] === '--help' || argv[0] === '-h' || (argv[0] === 'help' && argv.length === 1)) {
    io.out(overview());
    return 0;
  }
  // `eddy help server run`, and `eddy server --help` (or `eddy server`): the help of the commands those words start
  const asked = argv[0] === 'help' ? argv.slice(1) : argv.length === 1 || argv[1] === '--help' || argv[1] === '-h' ? argv.slice(0, 1) : undefined;
  const matching = asked && !COMMANDS.some((c) => c.name === asked.join(' ')) ? commandsStartingWith(asked) : [];
  if (asked && (argv[0] === 'help' || matching.length > 0)) {
    const found = matching.length > 0 ? matching : COMMANDS.filter((c) => c.name === asked.join(' '));
    if (found.length === 0) {
      io.err(`error: unknown command '${asked.join(' ')}'\n${overview()}`);
      return 2;
    }
    io.out(found.map(help).join('\n'));
    return 0;
  }
  const command = COMMANDS.find((c) => c.name.split(' ').every((word, i) => argv[i] === word));
  if (command === undefined) {
    const named = argv[0] === 'server' && argv.length > 1 ? `${argv[0]} ${argv[1]}` : argv[0];
    io.err(`error: unknown command '${named}'\n${overview()}`);
    return 2;
  }
  let parsed: ReturnType<Command['parse']>;
  try {
    parsed = command.parse(argv.slice(command.name.split(' ').length), io.env);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    io.err(`error: ${err.message}\n${usage(command)}\n(eddy ${command.name} --help says what each flag does)\n`);
    return 2;
  }
  if (parsed.help) {
    io.out(help(command));
    return 0;
  }
  try {
    return await command.run(parsed.options, io);
  } catch (err) {
    io.err(`error: ${(err as Error).message}\n`);
    return 1;
  }
}
