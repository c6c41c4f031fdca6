import { expect } from 'chai';
import { join } from 'node:path';
import * as rxjs from 'rxjs';
import { firstValueFrom, of } from 'rxjs';
import * as rx from '../../src/core/rx';
import { pipelineOperator } from '../../src/embed/pipeline-operator';
import { standalonePipeline } from '../../src/embed/standalone';
import { FirstEventProbe } from '../helpers/first-event';

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
  // the plain modules (dist/src/cli.js), as `eddy test` and embedding applications load them;
  // `eddy server run` starts from the bundle, checked in test/cli/bundle.test.ts
  const CLI = join(__dirname, '../../src/cli');
  let probe: FirstEventProbe;
  before(() => (probe = new FirstEventProbe()));
  after(() => probe.remove());

  for (const flags of [['--no-api'], ['--api-port', '0']]) {
    it(`eddy server run ${flags.join(' ')}`, async () => {
      const argv = ['server', 'run', '-f', probe.config, ...flags];
      const files = await probe.modulesAtFirstEvent(['-e', `require(${JSON.stringify(CLI)}).main(${JSON.stringify(argv)})`]);
      expect(files.some((f) => f.endsWith('/node_modules/rxjs/dist/cjs/internal/Observable.js'))).to.equal(true);
      expect(files.filter((f) => f.endsWith('/node_modules/rxjs/dist/cjs/index.js'))).to.deep.equal([]);
    });
  }
});
