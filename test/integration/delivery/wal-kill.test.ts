import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { EDDY, runEddy } from '../../helpers/cli';
import { eventually } from '../../helpers/runtime';
import { range } from './helpers';

/**
 * qos::wal across a hard kill: a child runtime stores every event in its WAL
 * but cannot deliver any (the cb offramp never acks events without `cb`),
 * is killed with SIGKILL, and a second child on the same WAL directory with
 * a working file sink replays every one of them.
 */
describe('delivery: qos::wal replays after the runtime process is killed with SIGKILL', function () {
  this.timeout(120000);
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'eddy-walkill-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const COUNT = 300;
  const pipeline = (walDir: string) => `pipeline:
  - id: durable
    interface: { inputs: [in], outputs: [out] }
    nodes:
      - id: wal
        type: qos::wal
        config: { read_count: 50, max_elements: 100000, dir: "${walDir}" }
    links: { in: [wal], wal: [out] }
`;

  it('loses no event the WAL stored', async () => {
    const walDir = join(dir, 'wal');
    const input = join(dir, 'in.json');
    const output = join(dir, 'out.json');
    writeFileSync(
      input,
      range(1, COUNT)
        .map((id) => `{"id":${id}}\n`)
        .join(''),
    );

    // 1. file -> wal -> cb offramp (no `cb` field: never acked); the offramp's metrics tell when all were sent, so stored
    const first = join(dir, 'first.yaml');
    writeFileSync(
      first,
      `onramp:
  - id: reader
    type: file
    config: { source: "${input}" }
${pipeline(walDir)}offramp:
  - id: sink
    type: cb
    metrics_interval_s: 1
binding:
  - id: flow
    links:
      "/onramp/reader/{instance}/out": ["/pipeline/durable/{instance}/in"]
      "/pipeline/durable/{instance}/out": ["/offramp/sink/{instance}/in"]
      "/pipeline/system::metrics/system/out": ["/offramp/system::stdout/system/in"]
mapping:
  /binding/flow/main: { instance: main }
`,
    );
    // the API on an ephemeral loopback port keeps the process alive once the file is read
    const child = spawn(process.execPath, [EDDY, 'server', 'run', '-f', first, '--api-port', '0'], {
      env: { ...process.env, EDDY_LOG: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) => child.on('exit', (code, signal) => r({ code, signal })));
    const sentToSink = () =>
      stdout
        .split('\n')
        .filter((l) => l.includes('"/offramp/sink/main"') && l.includes('"port":"in"'))
        .map((l) => (JSON.parse(l) as { fields: { count: number } }).fields.count)
        .reduce((a, b) => Math.max(a, b), 0);
    try {
      await eventually(() => sentToSink() >= COUNT, 60000, `the offramp to have been sent ${COUNT} events (stderr: ${stderr})`);
    } finally {
      child.kill('SIGKILL');
    }
    expect((await exited).signal).to.equal('SIGKILL');
    expect(existsSync(output)).to.equal(false);

    // 2. the same pipeline instance on the same WAL dir, now with a working sink and no source at all
    const second = join(dir, 'second.yaml');
    writeFileSync(
      second,
      `${pipeline(walDir)}offramp:
  - id: sink
    type: file
    config: { file: "${output}" }
binding:
  - id: flow
    links:
      "/pipeline/durable/{instance}/out": ["/offramp/sink/{instance}/in"]
mapping:
  /binding/flow/main: { instance: main }
`,
    );
    const lines = () =>
      existsSync(output)
        ? readFileSync(output, 'utf8')
            .split('\n')
            .filter((l) => l.length > 0)
        : [];
    // the deadlines only bound a hang: a slow machine waits longer, the outcome is the same
    const run = await runEddy(['server', 'run', '-f', second, '--api-port', '0'], { timeoutMs: 60000, signalWhen: () => lines().length >= COUNT });
    expect(run.code, run.stderr).to.equal(0);
    const ids = lines().map((l) => (JSON.parse(l) as { id: number }).id);
    expect(ids.length).to.equal(COUNT);
    expect([...ids].sort((a, b) => a - b)).to.deep.equal(range(1, COUNT));

    // 3. the replayed events were acked by the file sink: a third run has nothing left to replay. It is
    // stopped once the sink has reported metrics, that is after the pipeline started and replayed what it had.
    rmSync(output);
    const withMetrics = second.replace('.yaml', '-metrics.yaml');
    writeFileSync(
      withMetrics,
      readFileSync(second, 'utf8')
        .replace('    type: file\n', '    type: file\n    metrics_interval_s: 1\n')
        .replace(
          '      "/pipeline/durable/{instance}/out"',
          '      "/pipeline/system::metrics/system/out": ["/offramp/system::stdout/system/in"]\n      "/pipeline/durable/{instance}/out"',
        ),
    );
    const sinkReported = ({ stdout }: { stdout: string }) => stdout.includes('"/offramp/sink/main"');
    const third = await runEddy(['server', 'run', '-f', withMetrics, '--api-port', '0'], { timeoutMs: 60000, signalWhen: sinkReported });
    expect(third.stdout).to.include('"/offramp/sink/main"');
    expect(third.code, third.stderr).to.equal(0);
    expect(lines()).to.deep.equal([]);
  });
});
