import { expect } from 'chai';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { optionsOf, usage, UsageError, type Command, type Flag } from '../../src/cli/command';
import { COMMANDS, main } from '../../src/cli/main';
import { parseRunArgs } from '../../src/cli/server-run';
import { tapCommand } from '../../src/cli/tap';
import { DOCS, regionsOf, renderRegions } from '../../tools/docs/command-line';
import { repoRoot } from '../../tools/docs/connector-reference';
import { runEddy } from '../helpers/cli';
import { DEFAULT_API } from '../../src/cli/remote';

/** `eddy ARGV`, in this process, with what it wrote. */
async function eddy(argv: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await main(argv, { out: (t) => (out += t), err: (t) => (err += t), env });
  return { code, out, err };
}

/** Every way a flag is spelt on the command line, from its declaration. */
function spellings(name: string, flag: Flag): string[] {
  return [`--${name}`, ...(flag.short ? [`-${flag.short}`] : []), ...(flag.aliases ?? []).map((a) => `--${a}`)];
}

/** The first line of `--help` that describes the flag `name`. */
function helpLine(text: string, name: string): string | undefined {
  return text.split('\n').find((l) => new RegExp(`^ {2}(-\\w, | {4})--${name}(?=[ ,]|$)`).test(l));
}

/** The whole entry of the flag `name` in `--help` (its description may wrap onto the next lines), spaces squeezed. */
function helpEntry(text: string, name: string): string {
  const lines = text.split('\n');
  const first = lines.indexOf(helpLine(text, name)!);
  const next = lines.findIndex((l, i) => i > first && (/^ {2}(-\w, | {4})--/.test(l) || l === ''));
  return lines.slice(first, next).join(' ').replace(/\s+/g, ' ');
}

const argvOf = (command: Command) => command.name.split(' ');

describe('the command line (src/cli/): --help, usage errors, docs/command-line.md', () => {
  it('has commands, each with flags (so the tests below test something)', () => {
    expect(COMMANDS.map((c) => c.name)).to.deep.equal(['server run', 'validate', 'config', 'test', 'tap', 'status', 'top', 'list', 'new', 'schema', 'cel']);
    for (const command of COMMANDS) expect(Object.keys(command.flags).length, command.name).to.be.greaterThan(1);
  });

  for (const command of COMMANDS) {
    describe(`eddy ${command.name}`, () => {
      it('--help and -h print every declared flag with its spellings, value, default and environment variable, and exit 0', async () => {
        for (const help of ['--help', '-h']) {
          const { code, out, err } = await eddy([...argvOf(command), help]);
          expect(code, err).to.equal(0);
          expect(err).to.equal('');
          expect(out).to.match(new RegExp(`^usage: eddy ${command.name} `));
          expect(out).to.include(command.summary);
          for (const [name, flag] of Object.entries(command.flags)) {
            const line = helpLine(out, name);
            expect(line, `--${name} in:\n${out}`).to.be.a('string');
            for (const spelling of spellings(name, flag)) expect(line, spelling).to.include(spelling);
            if (flag.value) expect(line, `--${name}'s value`).to.include(`--${name}${flag.aliases ? `, --${flag.aliases.join(', --')}` : ''} ${flag.value}`);
            const entry = helpEntry(out, name);
            expect(entry, `--${name}'s description`).to.include(flag.description.replace(/\s+/g, ' '));
            if (flag.default !== undefined) expect(entry, `--${name}'s default`).to.match(new RegExp(`\\(default: ${escape(flag.default)}[;)]`));
            if (flag.env !== undefined) expect(entry, `--${name}'s variable`).to.match(new RegExp(`[(; ]env: ${flag.env}\\)`));
            if (name !== 'help') expect(out.split('\n\n')[0], `--${name} in the usage`).to.include(`[--${name}`);
          }
        }
      });

      // parse only: with the check broken, running the command (top, tap) would take the terminal or a stream
      it('refuses an unknown flag, naming it (a usage error)', () => {
        expect(() => command.parse(['--no-such-flag'], {})).to.throw(UsageError, /^unknown argument '--no-such-flag'$/);
        expect(() => command.parse(['-Z'], {})).to.throw(UsageError, /^unknown argument '-Z'$/);
      });

      for (const [name, flag] of Object.entries(command.flags).filter(([, f]) => f.type === 'string')) {
        it(`refuses --${name} without its value, naming it (a usage error)`, () => {
          expect(() => command.parse([`--${name}`], {})).to.throw(UsageError, new RegExp(`^--${name} needs a value$`));
          expect(flag.value, 'a value name for the usage').to.be.a('string');
        });
      }

      for (const [name] of Object.entries(command.flags).filter(([n, f]) => f.type === 'boolean' && n !== 'help')) {
        it(`refuses a value joined to --${name}, a flag that takes none (a usage error)`, () => {
          expect(() => command.parse([`--${name}=yes`], {})).to.throw(UsageError, new RegExp(`^--${name} takes no value$`));
        });
      }
    });
  }

  it('eddy --help, -h and eddy alone list every command with its summary on stdout, exit 0; --version prints the version', async () => {
    for (const argv of [['--help'], ['-h'], []]) {
      const { code, out, err } = await eddy(argv);
      expect(code, argv.join(' ')).to.equal(0);
      expect(err).to.equal('');
      for (const command of COMMANDS) {
        expect(out).to.include(`eddy ${command.name} [FLAGS]`);
        expect(out).to.match(new RegExp(`^  ${command.name} +${escape(command.summary)}$`, 'm'));
      }
    }
    expect(await eddy(['--version'])).to.deep.include({
      code: 0,
      out: `eddy ${(JSON.parse(readFileSync(join(repoRoot(__dirname), 'package.json'), 'utf8')) as { version: string }).version}\n`,
    });
  });

  it('eddy version, eddy help [COMMAND] and eddy server --help answer as --version and COMMAND --help do', async () => {
    expect(await eddy(['version'])).to.deep.include(await eddy(['--version']));
    expect(await eddy(['help'])).to.deep.include(await eddy(['--help']));
    for (const command of COMMANDS) {
      const viaHelp = await eddy(['help', ...argvOf(command)]);
      expect(viaHelp, `eddy help ${command.name}`).to.deep.include({ code: 0, err: '', out: (await eddy([...argvOf(command), '--help'])).out });
    }
    // `eddy server` names no command by itself: its help is that of every command it starts (it used to be "unknown command 'server --help'")
    for (const argv of [['server', '--help'], ['server', '-h'], ['server'], ['help', 'server']]) {
      const { code, out, err } = await eddy(argv);
      expect({ code, err }, argv.join(' ')).to.deep.equal({ code: 0, err: '' });
      expect(out).to.match(/^usage: eddy server run /);
    }
    const unknown = await eddy(['help', 'serve']);
    expect(unknown.code).to.equal(2);
    expect(unknown.err).to.match(/^error: unknown command 'serve'\nusage: eddy server run /);
  });

  it('an unknown command is exit 2 naming it, with the list of commands', async () => {
    for (const [argv, named] of [
      [['serve'], 'serve'],
      [['server', 'walk'], 'server walk'],
      [['--frob'], '--frob'],
    ] as const) {
      const { code, err } = await eddy([...argv]);
      expect(code).to.equal(2);
      expect(err).to.match(new RegExp(`^error: unknown command '${named}'\\nusage: eddy server run `));
    }
  });

  // --api at a port nothing listens on: with the checks broken the command fails fast (exit 1) instead of reaching a server
  const NOWHERE = ['--api', 'http://127.0.0.1:1'];

  it("a usage error is exit 2: the message naming the flag, then the command's usage and where its help is, on stderr", async () => {
    for (const [argv, message] of [
      [['status', '--no-such-flag', ...NOWHERE], "unknown argument '--no-such-flag'"],
      [['status', ...NOWHERE, '--api'], '--api needs a value'],
      [['status', ...NOWHERE, '--json=1'], '--json takes no value'],
      [['status', 'now', ...NOWHERE], "unexpected argument 'now' (this command takes flags only)"],
      [['tap', ...NOWHERE], 'which port? give its URL, e.g. pipeline/system::passthrough/main/out'],
    ] as const) {
      const { code, out, err } = await eddy([...argv]);
      expect(code, argv.join(' ')).to.equal(2);
      expect(out).to.equal('');
      const name = argv[0];
      const command = COMMANDS.find((c) => c.name === name)!;
      expect(err).to.equal(`error: ${message}\n${usage(command)}\n(eddy ${name} --help says what each flag does)\n`);
    }
  });

  it('eddy test --help through bin/eddy: the flags on stdout, exit 0 (it used to answer "unknown argument")', async () => {
    const run = await runEddy(['test', '--help']);
    expect(run.code, run.stderr).to.equal(0);
    expect(run.stdout).to.match(/^usage: eddy test /);
    expect(helpLine(run.stdout, 'reporter')).to.include('--reporter spec|json');
    const bad = await runEddy(['tap', 'pipeline/p/main/out', ...NOWHERE, '--colour']);
    expect(bad.code).to.equal(2);
    expect(bad.stderr).to.match(/^error: unknown argument '--colour'\nusage: eddy tap /);
  });

  describe('reading flags', () => {
    it('-f takes the arguments after its value that do not start with -, in order with later -f', () => {
      expect(parseRunArgs(['-f', 'a.yaml', 'b.yaml', '--allow-exit', '--file', 'c.yaml', '-f', 'd.yaml', 'e.yaml']).files).to.deep.equal([
        'a.yaml',
        'b.yaml',
        'c.yaml',
        'd.yaml',
        'e.yaml',
      ]);
      expect(parseRunArgs(['--file=a.yaml', '-fb.yaml']).files).to.deep.equal(['a.yaml', 'b.yaml']);
      // after a flag, or after --, an operand is not a file: server run takes none
      expect(() => parseRunArgs(['-f', 'a.yaml', '--no-api', 'b.yaml'])).to.throw("unexpected argument 'b.yaml'");
      expect(() => parseRunArgs(['-f', 'a.yaml', '--', 'b.yaml'])).to.throw("unexpected argument 'b.yaml'");
    });

    it('a value may start with - and may be joined with =; a flag given twice keeps the last', () => {
      expect(parseRunArgs(['--api-token', '-x9', '--data-dir=/d', '--api-host', 'a', '--api-host', '::1'])).to.deep.include({ dataDir: '/d', host: '::1' });
      expect(parseRunArgs(['--api-token', '-x9']).apiFlags.token).to.equal('-x9');
    });

    it('a flag wins over its environment variable, which wins over the default', () => {
      const env = { EDDY_API: 'http://env:1', EDDY_API_TOKEN: 'from-env' };
      expect(optionsOf(tapCommand, ['pipeline/p/main/out'], env)).to.deep.equal({ url: 'http://env:1/tap/pipeline/p/main/out', token: 'from-env' });
      expect(optionsOf(tapCommand, ['pipeline/p/main/out', '--api', 'http://flag:2', '--api-token', 'f'], env)).to.deep.equal({
        url: 'http://flag:2/tap/pipeline/p/main/out',
        token: 'f',
      });
      expect(optionsOf(tapCommand, ['pipeline/p/main/out'], { EDDY_API: '' }).url).to.equal(`${DEFAULT_API}/tap/pipeline/p/main/out`);
      expect(parseRunArgs([], { EDDY_API_TOKEN: 'from-env' }).apiOptions?.token).to.equal('from-env');
      expect(() => parseRunArgs([], { EDDY_API_TOKEN: 'two words' })).to.throw('EDDY_API_TOKEN: must be visible ASCII without spaces');
      // without the API the variable is not used, and not checked
      expect(parseRunArgs(['--no-api'], { EDDY_API_TOKEN: 'two words' }).apiFlags.token).to.equal(undefined);
    });

    it('--help among other arguments is help, even beside a bad one', async () => {
      const { code, out } = await eddy(['server', 'run', '--frob', '-h']);
      expect(code).to.equal(0);
      expect(out).to.match(/^usage: eddy server run /);
    });
  });

  it('no source outside the command line reads argv or parses flags (src/cli.ts, src/cli-entry.ts, src/cli/)', () => {
    const root = repoRoot(__dirname);
    const found: string[] = [];
    const visit = (dir: string): void => {
      for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
        const path = `${dir}/${entry.name}`;
        if (entry.isDirectory()) visit(path);
        else if (
          path.endsWith('.ts') &&
          !/^src\/(cli\.ts|cli-entry\.ts|cli\/)/.test(path) &&
          /\bargv\b|\bparseArgs\b/.test(readFileSync(join(root, path), 'utf8'))
        )
          found.push(path);
      }
    };
    visit('src');
    expect(found, 'read the flags in src/cli/ and pass the options down').to.deep.equal([]);
  });

  describe('the docs', () => {
    const root = repoRoot(__dirname);
    for (const doc of DOCS) {
      it(`${doc}: every generated block is what the commands print (run \`npm run docs\` after changing a flag)`, () => {
        const text = readFileSync(join(root, doc), 'utf8');
        expect(regionsOf(text), doc).to.not.deep.equal([]);
        const rendered = renderRegions(text);
        if (rendered !== text) {
          const a = text.split('\n');
          const b = rendered.split('\n');
          const at = a.findIndex((l, i) => l !== b[i]);
          expect.fail(
            `${doc} is out of date: run \`npm run docs\` and commit it. First difference at line ${at + 1}:\n  file:     ${JSON.stringify(a[at])}\n  rendered: ${JSON.stringify(b[at])}`,
          );
        }
      });
    }

    it("docs/command-line.md has the list of commands and every command's --help", () => {
      const regions = regionsOf(readFileSync(join(root, 'docs', 'command-line.md'), 'utf8'));
      expect(regions).to.include('eddy --help');
      for (const command of COMMANDS) expect(regions).to.include(`eddy ${command.name} --help`);
    });
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
