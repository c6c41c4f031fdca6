import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { EDDY } from '../helpers/cli';
import { peer } from '../helpers/peers';
import { EXAMPLES } from '../helpers/examples';
import { docBlock } from '../helpers/readme';
import { runEddyProcess } from '../connectors/example-runner';

const PAGE = 'docs/observe.md';
const SECTION = '## From a terminal';

function sh(line: string): Promise<string> {
  return new Promise((resolve, reject) =>
    execFile('sh', ['-c', line], { timeout: 30_000 }, (err, stdout, stderr) => (err ? reject(new Error(`${line}: ${err.message} ${stderr}`)) : resolve(stdout))),
  );
}

describe("docs/observe.md's 'From a terminal'", function () {
  this.timeout(60_000);

  it('its commands answer as described against the default example', async () => {
    peer('curl');
    const lines = docBlock(PAGE, SECTION, 'sh').split('\n').filter((l) => l.trim() !== '');
    expect(lines).to.have.length(5);
    // the default example (what `npm start` runs), its API on a port of its own (it names it on stderr), not on 9898
    const eddy = runEddyProcess([EDDY, 'server', 'run', '-f', join(EXAMPLES, 'default.yaml'), '--api-port', '0'], 50_000);
    let code: number | null;
    try {
      const [, port] = await eddy.logged(/^Listening at: http:\/\/127\.0\.0\.1:(\d+)$/m, 30_000);
      const here = (line: string) => line.replaceAll('127.0.0.1:9898', `127.0.0.1:${port}`).replace(/^npx eddy /, `${process.execPath} ${EDDY} `);
      const [health, status, metrics, tap, cli] = await Promise.all(lines.map((l) => sh(here(l))));
      expect(JSON.parse(health)).to.have.property('status', 'ok');
      const instances = (JSON.parse(status) as { instances: { url: string; state: string }[] }).instances;
      expect(instances.find((i) => i.url === '/onramp/metronome/main')).to.have.property('state', 'running');
      expect(metrics).to.match(/^eddy_port_events_total\{kind="pipeline",artefact="system::passthrough",instance="main",port="out",direction="out"\} \d+$/m);
      expect(metrics).to.match(/^nodejs_eventloop_lag_seconds \d/m);
      expect(tap.match(/^event: event$/gm)).to.have.length(2);
      expect(tap).to.include('event: end\ndata: {"reason":"max reached"}');
      const printed = cli.trim().split('\n').map((l) => JSON.parse(l) as { data: { onramp: string }; port: string });
      expect(printed.map((e) => [e.data.onramp, e.port])).to.deep.equal([
        ['metronome', 'out'],
        ['metronome', 'out'],
      ]);
    } finally {
      code = await eddy.stop();
    }
    expect(code, eddy.stderr()).to.equal(0);
  });
});
