import { expect } from 'chai';
import fc from 'fast-check';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { substituteVariables, type SubstitutionSources } from '../../src/config/substitute';
import { runEddy } from '../helpers/cli';
import { docBlock } from '../helpers/readme';

function sources(env: Record<string, string>, files: Record<string, string> = {}): SubstitutionSources {
  return {
    env,
    readFile: (path) => {
      if (!(path in files)) throw new Error(`ENOENT: no such file '${path}'`);
      return files[path];
    },
  };
}

describe('config files: ${NAME} substitution', () => {
  const sub = (text: string, env: Record<string, string> = {}, files: Record<string, string> = {}) =>
    substituteVariables(text, '/etc/eddy/flow.yaml', sources(env, files));

  it('replaces ${NAME}, ${NAME:-default}, ${file:PATH} and $$', () => {
    expect(sub('level: ${LEVEL}', { LEVEL: 'debug' })).to.equal('level: debug');
    expect(sub('level: ${LEVEL:-info}', {})).to.equal('level: info');
    expect(sub('level: ${LEVEL:-info}', { LEVEL: '' }), 'empty takes the default').to.equal('level: info');
    expect(sub('level: ${LEVEL:-info}', { LEVEL: 'warn' })).to.equal('level: warn');
    expect(sub('a: ${A:-}', {})).to.equal('a: ');
    expect(sub('url: ${U:-http://h:1/x}', {})).to.equal('url: http://h:1/x');
    expect(sub('pw: "${file:/run/secrets/pg}"', {}, { '/run/secrets/pg': 's3cret\n' })).to.equal('pw: "s3cret"');
    expect(sub('pw: ${file:pg.txt}', {}, { '/etc/eddy/pg.txt': 'x' }), 'relative to the config file').to.equal('pw: x');
    expect(sub('cost: $$5, $${KEEP}, $x, ${A}$', { A: 'a' })).to.equal('cost: $5, ${KEEP}, $x, a$');
  });

  it('leaves whole-line comments as written, and counts their lines', () => {
    expect(sub('# ${NOT_SET} and ${...}\n  # ${X}\na: ${A}', { A: '1' })).to.equal('# ${NOT_SET} and ${...}\n  # ${X}\na: 1');
    expect(() => sub('# fine\n\na: ${NOT_SET}')).to.throw('/etc/eddy/flow.yaml:3: environment variable NOT_SET is not set');
  });

  it('replaces what a value holds only once (a value with ${...} is not read again)', () => {
    expect(sub('${A} ${B}', { A: '${B}', B: 'b' })).to.equal('${B} b');
  });

  it('refuses an unset variable, naming the file, the line and the variable', () => {
    expect(() => sub('a: 1\nb:\n  c: ${MISSING_ONE}\n', {})).to.throw(
      '/etc/eddy/flow.yaml:3: environment variable MISSING_ONE is not set (use ${MISSING_ONE:-default} to give a default)',
    );
  });

  it('refuses malformed references, values with line breaks and unreadable secret files', () => {
    expect(() => sub('a: ${A B}')).to.throw("/etc/eddy/flow.yaml:1: '${A B}' is not a variable reference");
    expect(() => sub('a: ${}')).to.throw("'${}' is not a variable reference");
    expect(() => sub('x\na: ${OPEN\n')).to.throw("/etc/eddy/flow.yaml:2: '${OPEN' is not closed by '}'");
    expect(() => sub('a: ${A}', { A: 'x\nb: injected' })).to.throw("/etc/eddy/flow.yaml:1: the value of '${A}' holds a line break");
    expect(() => sub('a: ${file:/run/nope}')).to.throw('/etc/eddy/flow.yaml:1: cannot read secret file /run/nope: ENOENT');
  });

  it('leaves text without references as it is, and replaces any set variable by its value (property)', () => {
    fc.assert(
      fc.property(
        fc.string().filter((s) => !s.includes('$') && !s.includes('#')),
        fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,8}$/),
        fc.string().filter((v) => v !== '' && !/[\r\n]/.test(v)),
        (text, name, value) => {
          expect(sub(text)).to.equal(text);
          expect(sub(`${text}\${${name}}${text}`, { [name]: value })).to.equal(`${text}${value}${text}`);
        },
      ),
    );
  });

  describe('docs/config-files.md, run as written', function () {
    this.timeout(30000);
    const yaml = docBlock('docs/config-files.md', '## Environment variables and secrets', 'yaml');
    const command = docBlock('docs/config-files.md', '## Environment variables and secrets', 'sh');
    let dir: string;
    beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'eddy-subst-'))));

    it('starts with the variables set, taking the interval and the output file from them', async () => {
      expect(command).to.equal('OUT_FILE=/tmp/ticks.json TICK_MS=100 eddy server run -f ticks.yaml\n');
      const config = join(dir, 'ticks.yaml');
      const out = join(dir, 'ticks.json');
      writeFileSync(config, yaml);
      const lines = () =>
        existsSync(out)
          ? readFileSync(out, 'utf8')
              .split('\n')
              .filter((l) => l !== '').length
          : 0;
      const run = await runEddy(['server', 'run', '-f', config, '--no-api'], {
        env: { OUT_FILE: out, TICK_MS: '100' },
        signalWhen: () => lines() >= 2,
        timeoutMs: 20000,
      });
      expect(run.code, run.stderr).to.equal(0);
      expect(lines()).to.be.at.least(2);
    });

    it('stops the start when a variable is unset, naming the file, the line and the variable', async () => {
      const config = join(dir, 'ticks.yaml');
      writeFileSync(config, yaml);
      const run = await runEddy(['server', 'run', '-f', config, '--no-api'], { env: { OUT_FILE: undefined, TICK_MS: undefined } });
      expect(run.code).to.equal(1);
      const line = yaml.split('\n').findIndex((l) => l.includes('${OUT_FILE}')) + 1;
      expect(run.stderr).to.contain(`${config}:${line}: environment variable OUT_FILE is not set`);
    });
  });
});
