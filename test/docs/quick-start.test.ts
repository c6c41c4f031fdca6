import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { EXAMPLES } from '../helpers/examples';
import { peer } from '../helpers/peers';
import { ROOT, readmeBlock } from '../helpers/readme';
import { eventually } from '../helpers/runtime';
import { runEddyProcess, type EddyProcess } from '../connectors/example-runner';

/** The ports the quick start is written with: the API's default and the rest onramp's. */
const API_PORT = 9898;
const ONRAMP_PORT = 8181;
const HELLO = '{"hello":"world"}';

function sh(line: string): Promise<string> {
  return new Promise((resolve, reject) =>
    execFile('sh', ['-c', line], { timeout: 20000 }, (err, stdout) => (err ? reject(new Error(`${line}: ${err.message}`)) : resolve(stdout))),
  );
}

/** `line` with every `from` replaced by `to`; `from` must occur, so a changed README fails here instead of running as written. */
function substituted(line: string, from: string, to: string): string {
  if (!line.includes(from)) throw new Error(`the quick start line no longer holds '${from}': ${line}`);
  return line.replaceAll(from, to);
}

/**
 * Holds 127.0.0.1:`port` while the test runs, as another program on this
 * machine may: a listener that drops every connection at once, so nobody
 * (this test included) waits on it. A port another program already holds
 * stays held by that program, which is as good.
 */
async function hold(port: number): Promise<Server | undefined> {
  const server = createServer((socket) => socket.destroy());
  return new Promise((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) => (err.code === 'EADDRINUSE' ? resolve(undefined) : reject(err)));
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}

describe("README's quick start", function () {
  this.timeout(60000);
  let eddy: EddyProcess | undefined;
  const held: Server[] = [];
  afterEach(async () => {
    await eddy?.stop();
    await Promise.all(held.splice(0).map((s) => new Promise((r) => s.close(r))));
    eddy = undefined;
  });

  it("runs against `npm start` on ports of its own while the README's are taken: the event reaches standard output exactly once", async () => {
    peer('curl');
    const lines = readmeBlock('## Quick start', 'sh')
      .split('\n')
      .filter((line) => line.trim() !== '' && !line.trim().startsWith('#'));
    expect(lines).to.have.length(4);
    // the ports the README names are taken, as they may be on any machine: the test must not need them
    for (const port of [API_PORT, ONRAMP_PORT]) {
      const server = await hold(port);
      if (server) held.push(server);
    }
    // `npm start` runs scripts/start.js, which passes its arguments to `eddy server run`; without them it runs
    // the default example on the API's default port: here the same example with the API on a port of its own
    eddy = runEddyProcess([join(ROOT, 'scripts/start.js'), '-f', join(EXAMPLES, 'default.yaml'), '--api-port', '0'], 50000);
    const apiPort = (await eddy.logged(/^Listening at: http:\/\/127\.0\.0\.1:(\d+)$/m))[1];
    const api = (line: string) => substituted(line, `127.0.0.1:${API_PORT}`, `127.0.0.1:${apiPort}`);

    const answers: string[] = [];
    // the rest onramp on port 0: it logs the port it bound when the binding is activated
    answers.push(await sh(substituted(api(lines[0]), `"port":${ONRAMP_PORT}`, '"port":0')));
    answers.push(await sh(api(lines[1])));
    answers.push(await sh(api(lines[2])));
    expect(JSON.parse(answers[0])).to.include({ id: 'web', type: 'rest' });
    expect(JSON.parse(answers[2]), answers[2]).to.have.property('id', 'hello');
    const onrampPort = (await eddy.logged(/Onramp \S*\/onramp\/web\/main listening on http:\/\/127\.0\.0\.1:(\d+)\//))[1];
    answers.push(await sh(substituted(lines[3], `127.0.0.1:${ONRAMP_PORT}`, `127.0.0.1:${onrampPort}`)));
    expect(answers[3]).to.match(/^HTTP\/1\.1 202 Accepted/);

    // exactly once: counted when a metronome tick has been printed after the event, so a second copy
    // (which leaves with the first, ahead of the next tick) would be there to count
    const printed = () => eddy!.stdout().split('\n');
    const tickAfterHello = () => {
      const at = printed().indexOf(HELLO);
      return at >= 0 && printed().slice(at + 1).some((line) => line.includes('"onramp":"metronome"'));
    };
    await eventually(tickAfterHello, 20000, 'the event, then a tick, on standard output').catch((err: unknown) => {
      throw new Error(`${(err as Error).message}; stdout: ${eddy!.stdout()}; stderr: ${eddy!.stderr()}`);
    });
    expect(printed().filter((line) => line === HELLO)).to.have.length(1);
    expect(await eddy.stop()).to.equal(0);
    eddy = undefined;
  });
});
