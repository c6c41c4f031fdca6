/**
 * The `flow` section: a flow in a few lines, expanded into an ordinary
 * binding and mapping (src/config/flow.ts, docs/config-files.md).
 */
import { expect } from 'chai';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readConfigFile } from '../../src/config/load';
import { runEddy } from '../helpers/cli';

describe('the flow section of a config file', function () {
  this.timeout(30000);
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'eddy-flow-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const file = (text: string) => {
    const path = join(dir, 'flow.yaml');
    writeFileSync(path, text);
    return path;
  };

  it('counts events per app in 5 s event-time windows, file to file, each line naming its window, in 12 lines (the issue asks <= 15)', async () => {
    const input = join(dir, 'in.json');
    const output = join(dir, 'out.json');
    // apps a and b over three windows: [0,5s), [5s,10s), [10s,15s)
    const events = [0, 1000, 2000, 6000, 7000, 11000].flatMap((t) => [
      { app: 'a', ts: t },
      { app: 'b', ts: t + 500 },
    ]);
    writeFileSync(input, events.map((e) => JSON.stringify(e)).join('\n') + '\n');
    const config = `onramp:
  - { id: in, type: file, config: { source: "${input}" } }
offramp:
  - { id: out, type: file, config: { file: "${output}" } }
pipeline:
  - id: per_app
    nodes:
      - id: count
        type: window::aggregate
        config: { window: { size: 5s }, time: event.ts, group_by: { app: event.app }, aggregate: { n: count() }, window_fields: { start: start } }
flow:
  - { id: counts, from: in, via: per_app, to: out }
`;
    expect(config.trim().split('\n')).to.have.length(12);
    const lines = () =>
      existsSync(output)
        ? readFileSync(output, 'utf8')
            .split('\n')
            .filter((l) => l !== '')
        : [];
    // the first two windows close as the events move on; the last is written (partial) when eddy stops
    // without the API nothing keeps eddy up once the file is read: it stops by itself, and the open windows come out
    const run = await runEddy(['server', 'run', '-f', file(config), '--no-api'], { timeoutMs: 20000 });
    expect(run.code, run.stderr).to.equal(0);
    expect(lines().map((l) => JSON.parse(l) as unknown)).to.deep.equal([
      { app: 'a', start: 0, n: 3 },
      { app: 'b', start: 0, n: 3 },
      { app: 'a', start: 5000, n: 2 },
      { app: 'b', start: 5000, n: 2 },
      { app: 'a', start: 10000, n: 1 },
      { app: 'b', start: 10000, n: 1 },
    ]);
  });

  it('expands into an ordinary binding and mapping: pipelines chained, every err port to the err offramps', async () => {
    const config = await readConfigFile(
      file(`flow:
  - id: f
    from: [a, b]
    via: [p, q]
    to: [x, y]
    err: e
    instance: blue
`),
    );
    expect(config).to.deep.equal({
      binding: [
        {
          id: 'f',
          links: {
            '/onramp/a/{instance}/out': ['/pipeline/p/{instance}/in'],
            '/onramp/b/{instance}/out': ['/pipeline/p/{instance}/in'],
            '/pipeline/p/{instance}/out': ['/pipeline/q/{instance}/in'],
            '/pipeline/q/{instance}/out': ['/offramp/x/{instance}/in', '/offramp/y/{instance}/in'],
            '/onramp/a/{instance}/err': ['/offramp/e/{instance}/in'],
            '/onramp/b/{instance}/err': ['/offramp/e/{instance}/in'],
            '/pipeline/p/{instance}/err': ['/offramp/e/{instance}/in'],
            '/pipeline/q/{instance}/err': ['/offramp/e/{instance}/in'],
          },
        },
      ],
      mapping: { '/binding/f/blue': {} },
    });
  });

  it('goes through system::passthrough without via, as instance main', async () => {
    const config = await readConfigFile(file('flow:\n  - { id: f, from: a, to: x }\n'));
    expect(config.binding).to.deep.equal([
      {
        id: 'f',
        links: {
          '/onramp/a/{instance}/out': ['/pipeline/system::passthrough/{instance}/in'],
          '/pipeline/system::passthrough/{instance}/out': ['/offramp/x/{instance}/in'],
        },
      },
    ]);
    expect(config.mapping).to.deep.equal({ '/binding/f/main': {} });
  });

  it('refuses a malformed flow, naming the file, the flow and the field', async () => {
    const refused = async (text: string) => {
      try {
        await readConfigFile(file(text));
      } catch (err) {
        return (err as Error).message;
      }
      return 'accepted';
    };
    expect(await refused('flow:\n  - { id: f, fromm: a, to: x }\n')).to.match(/flow\.yaml: flow #1: unknown field 'fromm' \(did you mean 'from'\?\)/);
    expect(await refused('flow:\n  - { id: f, to: x }\n')).to.match(/flow\.yaml: flow 'f': from: required: an id or a list of ids/);
    expect(await refused('flow:\n  - { from: a, to: x }\n')).to.match(/flow #1: id: the binding's id, a string, is required/);
    expect(await refused('binding:\n  - { id: f, links: {} }\nflow:\n  - { id: f, from: a, to: x }\n')).to.match(
      /flow 'f': a binding 'f' is declared in this file already/,
    );
    expect(await refused('flow: { id: f }\n')).to.match(/flow must be a list of flows/);
  });
});
