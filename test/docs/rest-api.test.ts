import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { peer } from '../helpers/peers';
import { completeLines } from '../helpers/lines';
import { docBlock } from '../helpers/readme';
import { eventually, startRuntime, type Started } from '../helpers/runtime';

const PAGE = 'docs/rest-api.md';
const SECTION = '## A whole config: `POST /config`';

function sh(line: string, cwd: string): Promise<string> {
  return new Promise((resolve, reject) =>
    execFile('sh', ['-c', line], { cwd, timeout: 30_000 }, (err, stdout, stderr) => (err ? reject(new Error(`${line}: ${err.message} ${stderr}`)) : resolve(stdout))),
  );
}

/** `text` with every `from` replaced by `to`; `from` must occur, so a changed page fails here instead of running as written. */
function substituted(text: string, from: string, to: string): string {
  if (!text.includes(from)) throw new Error(`the page no longer holds '${from}': ${text}`);
  return text.replaceAll(from, to);
}

describe("docs/rest-api.md's 'A whole config'", function () {
  this.timeout(60_000);
  let dir: string;
  let api: Started | undefined;
  afterEach(async () => {
    await api?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('its curl lines apply flows.yaml once (201, the ticks reach the file), and the second time change nothing (200), answering what the page shows', async () => {
    peer('curl');
    dir = mkdtempSync(join(tmpdir(), 'eddy-doc-config-'));
    const output = join(dir, 'ticks.json');
    // the page's file, writing into a folder of the test's own instead of /tmp
    writeFileSync(join(dir, 'flows.yaml'), substituted(docBlock(PAGE, SECTION, 'yaml'), '/tmp/ticks.json', output));
    const lines = docBlock(PAGE, SECTION, 'sh')
      .split('\n')
      .filter((l) => l.trim() !== '');
    expect(lines).to.have.length(2);
    const answers = docBlock(PAGE, SECTION, 'json')
      .split('\n')
      .filter((l) => l.trim() !== '');
    api = await startRuntime();
    const port = new URL(api.base).port;
    // with the status after each answer, so 201 then 200 are checked as the page says
    const run = (line: string) => sh(`${substituted(line, '127.0.0.1:9898', `127.0.0.1:${port}`)} -w ' %{http_code}'`, dir);
    const first = await run(lines[0]);
    expect(first).to.equal(`${answers[0]} 201`);
    await eventually(() => completeLines(output).length > 0, 10_000, 'a tick in the file');
    const second = await run(lines[1]);
    expect(second).to.equal(`${answers[1]} 200`);
    expect(api.runtime.instancesOf('binding', 'ticks')).to.deep.equal(['main']);
  });
  it("'Replacing a running flow': its lines start the flow, show the plan, then swap the window size while the metronome counts on, every tick written once", async () => {
    peer('curl');
    dir = mkdtempSync(join(tmpdir(), 'eddy-doc-replace-'));
    const section = '### Replacing a running flow: `?replace=true`';
    const output = join(dir, 'windows.json');
    writeFileSync(join(dir, 'windows.yaml'), substituted(docBlock(PAGE, section, 'yaml'), '/tmp/windows.json', output));
    const lines = docBlock(PAGE, section, 'sh')
      .split('\n')
      .filter((l) => l.trim() !== '');
    expect(lines).to.have.length(4);
    const answers = docBlock(PAGE, section, 'json')
      .split('\n')
      .filter((l) => l.trim() !== '');
    api = await startRuntime();
    const port = new URL(api.base).port;
    // the curl lines against the test's server, with the status after each answer
    const run = (line: string) => sh(line.startsWith('curl') ? `${substituted(line, '127.0.0.1:9898', `127.0.0.1:${port}`)} -w ' %{http_code}'` : line, dir);
    const windows = () => completeLines(output).map((l) => (JSON.parse(l) as { ids: number[] }).ids);
    const onramp = () => api!.runtime.onramp('/onramp/ticks/main');
    expect(await run(lines[0])).to.equal(`${answers[0]} 201`);
    await eventually(() => windows().length > 0, 10_000, 'a window of 3 in the file');
    const started = onramp();
    expect(await run(lines[1])).to.equal('');
    expect(await run(lines[2])).to.equal(`${answers[1]} 200`);
    expect(await run(lines[3])).to.equal(`${answers[2]} 201`);
    expect(onramp(), 'the same onramp instance: not restarted').to.equal(started);
    await eventually(() => windows().some((ids) => ids.length === 5), 10_000, 'a window of 5 in the file');
    await api.runtime.deactivate('binding', 'ticks', 'main');
    const ids = windows().flat();
    expect(ids, 'every tick once, in order').to.deep.equal(ids.map((_, i) => i));
  });
});
