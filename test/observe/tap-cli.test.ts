import { expect } from 'chai';
import { PassThrough } from 'node:stream';
import { streamTap } from '../../src/api/tap-command';
import { optionsOf } from '../../src/cli/command';
import { tapCommand } from '../../src/cli/tap';
import { json } from '../../src/codecs/json';
import { runEddy } from '../helpers/cli';
import { eventually } from '../helpers/runtime';
import { startFlow, type Flow } from './flow';

describe('eddy tap', function () {
  this.timeout(15_000);
  let flow: Flow;
  before(async () => {
    flow = await startFlow();
  });
  after(() => flow.stop());

  it('prints each event passing the port as one JSON line, and why the stream ended on stderr', async () => {
    const run = runEddy(['tap', 'pipeline/relay/main/out', '--api', flow.base, '--sample', '2', '--max', '3']);
    await eventually(() => flow.runtime.taps.clientCount('/pipeline/relay/main', 'out') === 1, 10_000, 'eddy tap connected');
    for (let i = 1; i <= 8; i++) flow.push({ i });
    const { code, stdout, stderr } = await run;
    expect(code, stderr).to.equal(0);
    const lines = stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { data: unknown; seq: number; port: string });
    expect(lines.map((l) => [l.seq, l.data, l.port])).to.deep.equal([
      [2, { i: 2 }, 'out'],
      [4, { i: 4 }, 'out'],
      [6, { i: 6 }, 'out'],
    ]);
    expect(stderr).to.include('tap ended: max reached');
  });

  it('prints binary values (a kafka key in meta, bytes in data) as base64 strings, as the json codec writes them', async () => {
    const out = new PassThrough();
    const err = new PassThrough();
    const done = streamTap(optionsOf(tapCommand, [`${flow.base}/tap/pipeline/relay/main/out`, '--max', '1'], {}), out, err);
    await eventually(() => flow.runtime.taps.clientCount('/pipeline/relay/main', 'out') === 1, 10_000, 'the tap connected');
    const key = Buffer.from([0, 1, 2, 0xfa, 0xff]);
    const data = { raw: new Uint8Array([104, 105, 0]), nested: [Buffer.from('hi there')], n: 1 };
    flow.push(data, { kafka: { key, topic: 't' } });
    expect(await done, String(err.read())).to.equal(0);
    const line = JSON.parse(String(out.read()).trim()) as { data: unknown; meta: unknown };
    expect(line.meta).to.deep.equal({ kafka: { key: 'AAEC+v8=', topic: 't' } });
    expect(line.data).to.deep.equal({ raw: 'aGkA', nested: ['aGkgdGhlcmU='], n: 1 });
    // the json codec's own writing of the same values
    const codec = json.create();
    expect(line.data).to.deep.equal(JSON.parse(codec.encode(data).toString()));
    expect(line.meta).to.deep.equal(JSON.parse(codec.encode({ kafka: { key, topic: 't' } }).toString()));
  });

  it("exits 1 with the API's message for a port that is not there", async () => {
    // in process: the same command without another start-up of node
    const out = new PassThrough();
    const err = new PassThrough();
    const code = await streamTap(optionsOf(tapCommand, [`${flow.base}/tap/pipeline/relay/main/nope`], {}), out, err);
    expect(code).to.equal(1);
    expect(out.read()).to.equal(null);
    expect(String(err.read())).to.equal("error: 404: pipeline instance /pipeline/relay/main has no port 'nope' to tap (ports: inputs in; outputs out, err)\n");
  });

  it('takes the port as a path, a tap path or a full URL, with the flags as query parameters', () => {
    const env = {};
    const parseTapArgs = (args: string[], environment: NodeJS.ProcessEnv) => optionsOf(tapCommand, args, environment);
    expect(parseTapArgs(['pipeline/p/main/out'], env).url).to.equal('http://127.0.0.1:9898/tap/pipeline/p/main/out');
    expect(parseTapArgs(['/tap/onramp/in/main/err', '--api', 'http://10.0.0.1:1234', '--rate', '5'], env).url).to.equal(
      'http://10.0.0.1:1234/tap/onramp/in/main/err?rate=5',
    );
    expect(parseTapArgs(['http://h:1/tap/offramp/o/main/in?max=2', '--queue', '9'], { EDDY_API_TOKEN: 't' })).to.deep.equal({
      url: 'http://h:1/tap/offramp/o/main/in?max=2&queue=9',
      token: 't',
    });
    expect(() => parseTapArgs([], env)).to.throw('which port? give its URL, e.g. pipeline/system::passthrough/main/out');
    expect(() => parseTapArgs(['a', '--colour'], env)).to.throw("unknown argument '--colour'");
  });
});
