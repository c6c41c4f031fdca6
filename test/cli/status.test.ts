import { expect } from 'chai';
import { runEddy } from '../helpers/cli';
import { eventually } from '../helpers/runtime';
import { freePort } from '../connectors/net-helpers';
import { optionsOf } from '../../src/cli/command';
import { statusCommand } from '../../src/cli/status';
import { topCommand } from '../../src/cli/top';
import { tapCommand } from '../../src/cli/tap';
import { serve, startTicker, type Served } from './status-flow';
import { renderStatus } from '../../src/terminal/status';

interface StatusJson {
  artefacts: Record<string, string[]>;
  instances: { kind: string; artefact: string; instance: string; state: string; breaker: string | null; ports: { port: string; events: number }[] }[];
}

describe('eddy status', function () {
  this.timeout(30_000);
  let served: Served;

  before(async () => {
    served = await serve();
    await startTicker(served.runtime);
  });
  after(() => served?.stop());

  it('prints artefacts, instances with their state, breaker and port counts as a table', async () => {
    // the ticks have reached the pipeline, so its count is not 0
    await eventually(
      async () => {
        const status = (await (await fetch(`${served.base}/status`)).json()) as StatusJson;
        return status.instances.some((i) => i.artefact === 'system::passthrough' && i.instance === 'main' && i.ports.some((p) => p.events > 0));
      },
      10_000,
      'the passthrough pipeline to count events',
    );
    const { code, stdout, stderr } = await runEddy(['status', '--api', served.base]);
    expect(stderr).to.equal('');
    expect(code).to.equal(0);
    const lines = stdout.split('\n');
    expect(lines[0]).to.match(new RegExp(`^eddy \\d+\\.\\d+\\.\\d+\\S* at ${served.base}, up (\\d+s|\\d+m\\d{2}s|\\d+h\\d{2}m)$`));
    expect(lines).to.include('ARTEFACTS');
    expect(lines.find((l) => l.startsWith('onramp'))).to.match(/^onramp\s+1\s+ticker$/);
    expect(lines.find((l) => l.startsWith('binding'))).to.match(/^binding\s+1\s+ticks$/);
    expect(lines.find((l) => l.startsWith('INSTANCE '))).to.match(/^INSTANCE\s+STATE\s+BREAKER\s+PORTS \(events\/errors\)$/);
    expect(lines.find((l) => l.startsWith('/onramp/ticker/main'))).to.match(/^\/onramp\/ticker\/main\s+running\s+closed\s+out\(out\) \d+\/0, err\(out\) 0\/0$/);
    expect(lines.find((l) => l.startsWith('/pipeline/system::passthrough/main'))).to.match(/\sin\(in\) [1-9]\d*\/0, out\(out\) [1-9]\d*\/0/);
    expect(lines.find((l) => l.startsWith('/binding/ticks/main'))).to.match(/^\/binding\/ticks\/main\s+running\s+-\s+-$/);
    // every event accounted for: what reached each node, what left it, and what was dropped where (the binding links no pipeline output)
    const nodes = lines.slice(lines.indexOf('PIPELINE NODES'));
    expect(nodes[1]).to.match(/^PIPELINE\s+NODE\s+IN\s+OUT \(port events\)\s+DROPPED \(reason events\)$/);
    expect(nodes.find((l) => /^\/pipeline\/system::passthrough\/main\s+passthrough\s/.test(l))).to.match(/\s[1-9]\d*\s+out [1-9]\d*\s+-$/);
    expect(nodes.find((l) => /^\/pipeline\/system::passthrough\/main\s+-\s/.test(l))).to.match(/\s-\s+-\s+unlinked:out [1-9]\d*$/);
  });

  it("shows a udp onramp's kernel drops beside its port counts", () => {
    const text = renderStatus(
      {
        version: '0.1.0',
        uptime_s: 5,
        artefacts: { onramp: ['gelf'] },
        instances: [
          {
            kind: 'onramp',
            artefact: 'gelf',
            instance: 'main',
            url: '/onramp/gelf/main',
            state: 'running',
            breaker: 'closed',
            ports: [
              { port: 'out', direction: 'out', events: 33409, errors: 0 },
              { port: 'err', direction: 'out', events: 0, errors: 0 },
            ],
            kernel_drops: 166591,
          },
        ],
      },
      'http://127.0.0.1:9898',
    );
    expect(text.split('\n').find((l) => l.startsWith('/onramp/gelf/main'))).to.match(
      /^\/onramp\/gelf\/main\s+running\s+closed\s+out\(out\) 33409\/0, err\(out\) 0\/0, kernel drops 166591$/,
    );
  });

  it('--json prints the API status document', async () => {
    const { code, stdout } = await runEddy(['status', '--api', served.base, '--json']);
    expect(code).to.equal(0);
    const status = JSON.parse(stdout) as StatusJson;
    expect(status.artefacts.onramp).to.deep.equal(['ticker']);
    const ticker = status.instances.find((i) => i.kind === 'onramp' && i.artefact === 'ticker');
    expect(ticker).to.include({ instance: 'main', state: 'running', breaker: 'closed' });
    expect(ticker!.ports.map((p) => p.port)).to.deep.equal(['out', 'err']);
  });

  it('says which URL it could not reach and why, and exits 1', async () => {
    const port = await freePort(); // free: nothing listens there
    const { code, stdout, stderr } = await runEddy(['status', '--api', `http://127.0.0.1:${port}`]);
    expect(code).to.equal(1);
    expect(stdout).to.equal('');
    expect(stderr).to.equal(`error: cannot reach the eddy API at http://127.0.0.1:${port}/status: ECONNREFUSED (connect ECONNREFUSED 127.0.0.1:${port})\n`);
  });

  it('every remote command (status, tap, top) takes the token as --token and as --api-token, and from EDDY_API_TOKEN', () => {
    const tokenOf: Record<string, (args: string[], env: NodeJS.ProcessEnv) => string | undefined> = {
      status: (args, env) => optionsOf(statusCommand, args, env).token,
      top: (args, env) => optionsOf(topCommand, args, env).token,
      tap: (args, env) => optionsOf(tapCommand, ['pipeline/p/main/out', ...args], env).token,
    };
    for (const [command, token] of Object.entries(tokenOf)) {
      expect(token(['--token', 'a'], {}), `${command} --token`).to.equal('a');
      expect(token(['--api-token', 'b'], {}), `${command} --api-token`).to.equal('b');
      expect(token(['--api-token=c'], { EDDY_API_TOKEN: 'env' }), `${command} --api-token=`).to.equal('c');
      expect(token([], { EDDY_API_TOKEN: 'env' }), `${command} from the environment`).to.equal('env');
    }
  });

  it('refuses a malformed --api or an unknown argument (exit 2, checked before any request)', () => {
    expect(() => optionsOf(statusCommand, ['--api', 'nowhere'], {})).to.throw("--api: not a URL: 'nowhere' (e.g. http://127.0.0.1:9898)");
    expect(() => optionsOf(topCommand, ['--json'], {})).to.throw("unknown argument '--json'");
    expect(optionsOf(statusCommand, [], { EDDY_API: 'http://h:1', EDDY_API_TOKEN: 't' })).to.deep.equal({ api: 'http://h:1', token: 't', json: false });
    expect(optionsOf(topCommand, ['--api-token', 'u'], {})).to.deep.equal({ api: 'http://127.0.0.1:9898', token: 'u' });
    // a flag wins over the environment, by either name
    expect(optionsOf(topCommand, ['--api-token', 'u'], { EDDY_API_TOKEN: 't' })).to.deep.equal({ api: 'http://127.0.0.1:9898', token: 'u' });
    expect(optionsOf(statusCommand, ['--token', 'v', '--api', 'https://h'], { EDDY_API: 'http://h:1' })).to.deep.equal({
      api: 'https://h',
      token: 'v',
      json: false,
    });
  });
});

describe('eddy status with --api-token', function () {
  this.timeout(20_000);
  let served: Served;
  before(async () => (served = await serve('sesame')));
  after(() => served?.stop());

  it('without the token: the API refusal and how to pass it, exit 1', async () => {
    const { code, stderr } = await runEddy(['status', '--api', served.base]);
    expect(code).to.equal(1);
    expect(stderr).to.equal(
      `error: the eddy API at ${served.base}/status answered 401: this API needs a token: send Authorization: Bearer <token> (pass the API token with --token or EDDY_API_TOKEN)\n`,
    );
  });

  it('with --token it answers', async () => {
    const { code, stdout } = await runEddy(['status', '--api', served.base, '--token', 'sesame']);
    expect(code).to.equal(0);
    expect(stdout).to.match(/^eddy /);
  });
});
