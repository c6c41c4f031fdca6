import { expect } from 'chai';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse as parseYaml, parseAllDocuments } from 'yaml';
import { main } from '../../src/cli/main';
import { runEddy } from '../helpers/cli';
import { docBlock } from '../helpers/readme';

/** `eddy ARGV`, in this process, with what it wrote; `env` is what `${NAME}` reads. */
async function eddy(argv: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await main(argv, { out: (t) => (out += t), err: (t) => (err += t), env });
  return { code, out, err };
}

type Resolved = Record<string, Record<string, unknown>[] | Record<string, unknown>>;

describe('eddy config', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'eddy-config-'))));

  it('prints a file as a start resolves it: variables replaced, relative paths absolute, the flow expanded, the chain spelt out, defaults filled', async () => {
    const file = join(dir, 'flows.yaml');
    writeFileSync(
      file,
      `onramp:
  - { id: ticks, type: metronome, config: { interval: \${TICK_MS:-1000} } }
offramp:
  - { id: out, type: file, config: { file: "\${OUT:-out.json}" } }
  - { id: hook, type: rest, config: { endpoint: "http://hook.invalid/" } }
pipeline:
  - id: two
    nodes: [{ id: batch, type: generic::batch, config: { count: 2 } }]
flow:
  - { id: f, from: ticks, via: two, to: [out, hook] }
`,
    );
    const run = await eddy(['config', file], { TICK_MS: '250' });
    expect(run.err).to.equal('');
    expect(run.code).to.equal(0);
    expect(run.out.split('\n')[0]).to.equal(`# ${file}`);
    const resolved = parseYaml(run.out) as Resolved;
    expect(resolved.onramp).to.deep.equal([{ id: 'ticks', type: 'metronome', config: { interval: 250 } }]);
    const [out, hook] = resolved.offramp as { config: Record<string, unknown> }[];
    expect(out.config.file).to.equal(join(dir, 'out.json'));
    // the rest offramp's schema defaults
    expect(hook.config).to.deep.include({ endpoint: 'http://hook.invalid/', method: 'POST' });
    expect(resolved.pipeline).to.deep.equal([
      {
        id: 'two',
        nodes: [{ id: 'batch', type: 'generic::batch', config: { count: 2 } }],
        interface: { inputs: ['in'], outputs: ['out', 'err'] },
        links: { in: ['batch'], batch: ['out'] },
      },
    ]);
    expect(resolved.binding).to.deep.equal([
      {
        id: 'f',
        links: {
          '/onramp/ticks/{instance}/out': ['/pipeline/two/{instance}/in'],
          '/pipeline/two/{instance}/out': ['/offramp/out/{instance}/in', '/offramp/hook/{instance}/in'],
        },
      },
    ]);
    expect(resolved.mapping).to.deep.equal({ '/binding/f/main': {} });
  });

  it('shows secrets as ***: schema secrets, URL passwords, values from secret files and from variables named like a secret', async () => {
    writeFileSync(join(dir, 'pg-password'), 'from-the-file\n');
    const file = join(dir, 'secrets.yaml');
    writeFileSync(
      file,
      `onramp:
  - id: pg
    type: postgres
    config: { host: "\${PG_HOST}", port: 5432, user: eddy, password: "\${file:pg-password}", dbname: x, query: "select 1", interval_ms: 1000 }
offramp:
  - id: hook
    type: rest
    config:
      endpoint: "http://eddy:\${HOOK_PASSWORD}@hook.invalid/"
      headers: { x-note: "key \${NOTE_KEY} here", x-plain: "\${PLAIN}" }
  - { id: copy, type: file, config: { file: "/tmp/\${file:pg-password}.json" } }
`,
    );
    const env = { PG_HOST: '127.0.0.1', HOOK_PASSWORD: 'pw', NOTE_KEY: 'k123', PLAIN: 'visible' };
    const run = await eddy(['config', '--json', file], env);
    expect(run.err).to.equal('');
    expect(run.code).to.equal(0);
    const resolved = (JSON.parse(run.out) as Record<string, Resolved>)[file];
    const [pg] = resolved.onramp as { config: Record<string, unknown> }[];
    expect(pg.config).to.deep.include({ host: '127.0.0.1', password: '***' });
    const [hook, copy] = resolved.offramp as { config: Record<string, unknown> }[];
    expect(hook.config.endpoint).to.equal('http://eddy:***@hook.invalid/');
    expect(hook.config.headers).to.deep.equal({ 'x-note': '***', 'x-plain': 'visible' });
    expect(copy.config.file).to.equal('***');
    expect(run.out).to.not.match(/from-the-file|k123|:pw@/);
  });

  it('prints several files as one YAML document each, in order, and refuses a file that does not validate as a start would', async () => {
    const first = join(dir, 'ramps.yaml');
    const second = join(dir, 'flow.yaml');
    writeFileSync(first, 'onramp:\n  - { id: ticks, type: metronome, config: { interval: 1000 } }\n');
    writeFileSync(second, 'flow:\n  - { id: f, from: ticks, to: system::stdout }\n');
    const run = await eddy(['config', first, second]);
    expect(run.code).to.equal(0);
    const docs = parseAllDocuments(run.out) as { toJS(): Resolved; commentBefore?: string | null }[];
    expect(docs.map((d) => Object.keys(d.toJS()))).to.deep.equal([['onramp'], ['binding', 'mapping']]);
    expect(run.out).to.match(new RegExp(`^# ${first}\n[\\s\\S]*\n---\n# ${second}\n`));

    writeFileSync(second, 'onramp:\n  - { id: bad, type: metronome, config: { interval: soon } }\n');
    const bad = await eddy(['config', second]);
    expect(bad.code).to.equal(1);
    expect(bad.out).to.equal('');
    expect(bad.err).to.equal(
      `error: ${second}: onramp 'bad': config.interval: 'soon' is not a duration; a duration is a positive number of milliseconds, or a number with a unit: 500ms, 10s, 1m, 2h, 1d, or combined: 1h30m\n`,
    );
  });

  it('reads a config from standard input with -', async () => {
    const run = await runEddy(['config', '-'], { stdin: 'onramp:\n  - { id: in, type: file, config: { source: in.json } }\n', cwd: dir });
    expect(run.stderr).to.equal('');
    expect(run.code).to.equal(0);
    expect(run.stdout.split('\n')[0]).to.equal('# <stdin>');
    // the file onramp's defaults filled in beside the source
    expect((parseYaml(run.stdout) as Resolved).onramp).to.deep.equal([
      { id: 'in', type: 'file', config: { source: join(dir, 'in.json'), close_on_done: false, sleep_on_done: 0 } },
    ]);
  });
});

describe('docs/config-files.md: checking a config', () => {
  const SECTION = '## Checking a config: eddy validate and eddy config';

  /** Runs a documented `NAME=value ... eddy ARGS` line in `cwd`. */
  function runDocLine(line: string, cwd: string) {
    const words = line.trim().split(/\s+/);
    const at = words.indexOf('eddy');
    const env = Object.fromEntries(words.slice(0, at).map((w) => [w.slice(0, w.indexOf('=')), w.slice(w.indexOf('=') + 1)]));
    return runEddy(words.slice(at + 1), { env, cwd });
  }

  it('runs the eddy validate and eddy config lines on the ticks.yaml of the page, and prints what the page shows', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'eddy-config-doc-'));
    writeFileSync(join(dir, 'ticks.yaml'), docBlock('docs/config-files.md', '## Environment variables and secrets', 'yaml'));
    for (const nth of [0, 1]) {
      const line = docBlock('docs/config-files.md', SECTION, 'sh', nth);
      const run = await runDocLine(line, dir);
      expect(run.stderr, line).to.equal('');
      expect(run.code, line).to.equal(0);
      expect(run.stdout, line).to.equal(docBlock('docs/config-files.md', SECTION, '', nth));
    }
  });
});
