import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as rxjs from 'rxjs';
import { firstValueFrom, of } from 'rxjs';
import * as rx from '../../src/core/rx';
import { pipelineOperator } from '../../src/pipeline/pipeline-operator';
import { standalonePipeline } from '../../src/pipeline/standalone';
import { runNode } from '../helpers/cli';

const PASSTHROUGH = { id: 'p', interface: { inputs: ['in'], outputs: ['out'] }, nodes: [{ id: 'n', type: 'passthrough' }], links: { in: ['n'], n: ['out'] } };

describe("eddy's RxJS facade (src/core/rx.ts)", () => {
  it("re-exports the very objects the 'rxjs' index exports, name for name", () => {
    const names = Object.keys(rx);
    expect(names).to.include.members(['Observable', 'Subject', 'Subscription', 'share']);
    for (const name of names) expect(rx[name as keyof typeof rx], name).to.equal(rxjs[name as keyof typeof rxjs]);
  });

  it("eddy's Observables and Subjects are instances of the application's 'rxjs' classes", async () => {
    const events$ = of({ n: 1 }).pipe(pipelineOperator(PASSTHROUGH));
    expect(events$).to.be.instanceOf(rxjs.Observable);
    expect((await firstValueFrom(events$)).data).to.deep.equal({ n: 1 });
    const output = standalonePipeline(PASSTHROUGH).instantiate().output('out');
    expect(output).to.be.instanceOf(rxjs.Subject);
    expect(output).to.be.instanceOf(rxjs.Observable);
  });
});

describe('the start path loads RxJS piece by piece, never its index', () => {
  const RXJS_INDEX = '/node_modules/rxjs/dist/cjs/index.js';
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'eddy-rx-'));
    writeFileSync(
      join(dir, 'flow.yaml'),
      `onramp: [{ id: tick, type: metronome, config: { interval: 1 } }]
binding:
  - id: b
    links:
      "/onramp/tick/{i}/out": ["/pipeline/system::passthrough/{i}/in"]
      "/pipeline/system::passthrough/{i}/out": ["/offramp/system::stdout/system/in"]
mapping: { /binding/b/main: { i: main } }
`,
    );
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  /**
   * Runs `eddy server run` in a fresh node; at its first event line on stdout
   * it prints the rxjs files it has loaded (one JSON line) and exits.
   */
  async function rxjsFilesAtFirstEvent(flags: string[]): Promise<string[]> {
    const script = `
      const { writeSync } = require('node:fs');
      process.stdout.write = (chunk) => {
        if (!String(chunk).trimStart().startsWith('{')) return true;
        const files = Object.keys(require.cache).filter((f) => f.includes('/node_modules/rxjs/'));
        writeSync(1, 'LOADED ' + JSON.stringify(files) + '\\n');
        process.exit(0);
      };
      require(${JSON.stringify(join(__dirname, '../../src/cli'))}).main(${JSON.stringify(['server', 'run', '-f', join(dir, 'flow.yaml'), ...flags])});
    `;
    const run = await runNode(['-e', script], { timeoutMs: 20_000 });
    const line = run.stdout.split('\n').find((l) => l.startsWith('LOADED '));
    expect(line, `no event line (exit ${run.code}): ${run.stderr}`).to.be.a('string');
    return JSON.parse(line!.slice('LOADED '.length)) as string[];
  }

  for (const flags of [['--no-api'], ['--api-port', '0']]) {
    it(`eddy server run ${flags.join(' ')}`, async () => {
      const files = await rxjsFilesAtFirstEvent(flags);
      expect(files.some((f) => f.endsWith('/rxjs/dist/cjs/internal/Observable.js'))).to.equal(true);
      expect(files.filter((f) => f.endsWith(RXJS_INDEX))).to.deep.equal([]);
    });
  }
});
