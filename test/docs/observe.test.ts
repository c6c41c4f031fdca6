import { expect } from 'chai';
import { execFile, spawn } from 'node:child_process';
import { join } from 'node:path';
import { EDDY } from '../helpers/cli';
import { peer } from '../helpers/peers';
import { ROOT, readmeBlock } from '../helpers/readme';
import { eventually } from '../helpers/runtime';
import { freePort } from '../connectors/net-helpers';

const SECTION = '## Observe a running eddy';

function sh(line: string): Promise<string> {
  return new Promise((resolve, reject) =>
    execFile('sh', ['-c', line], { timeout: 30_000 }, (err, stdout, stderr) => (err ? reject(new Error(`${line}: ${err.message} ${stderr}`)) : resolve(stdout))),
  );
}

describe("README's 'Observe a running eddy'", function () {
  this.timeout(60_000);

  it('its commands answer as described against the default example', async () => {
    peer('curl');
    const lines = readmeBlock(SECTION, 'sh').split('\n').filter((l) => l.trim() !== '');
    expect(lines).to.have.length(5);
    // the default example (what `npm start` runs), on a free port so as not to meet another eddy on 9898
    const port = await freePort();
    const child = spawn(process.execPath, [EDDY, 'server', 'run', '-f', join(ROOT, 'examples/default.yaml'), '--api-port', String(port)], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    try {
      await eventually(() => stderr.includes('Listening at'), 30_000, `eddy listening (stderr: ${stderr})`);
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
      child.kill('SIGTERM');
    }
    expect(await exited).to.equal(0);
  });
});
