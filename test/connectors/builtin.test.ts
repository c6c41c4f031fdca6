import { expect } from 'chai';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { xz } from '@napi-rs/lzma';
import { finalize } from 'rxjs';
import { createLogger } from '../../src/core/logger';
import { Runtime } from '../../src/runtime/runtime';
import { runEddy } from '../helpers/cli';
import { eventually, registerWatchedOnramp } from '../helpers/runtime';

/** source -> system::passthrough -> sink, as one binding instance `main`. */
function flow(source: string, sink: string) {
  return {
    id: 'flow',
    links: {
      [`/onramp/${source}/{instance}/out`]: ['/pipeline/system::passthrough/{instance}/in'],
      '/pipeline/system::passthrough/{instance}/out': [`/offramp/${sink}/{instance}/in`],
    },
  };
}

const yamlFlow = (onramp: string, offramp: string) => `${onramp}
${offramp}
binding:
  - id: flow
    links:
      "/onramp/src/{instance}/out": ["/pipeline/system::passthrough/{instance}/in"]
      "/pipeline/system::passthrough/{instance}/out": ["/offramp/dst/{instance}/in"]
mapping:
  /binding/flow/main: { instance: main }
`;

describe('builtin connectors', () => {
  let dir: string;
  let runtime: Runtime;
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'eddy-conn-'));
    runtime = await new Runtime({ logger: createLogger('silent') }).start();
  });
  afterEach(() => runtime.shutdown());

  it('blaster replays the lines of a file in a loop and stops after iters events', async () => {
    const source = join(dir, 'in.txt');
    writeFileSync(source, 'a\nb\nc\n');
    const out = join(dir, 'out.txt');
    // the blaster, with a record of when its frames complete: it sends nothing after that
    let finished = false;
    registerWatchedOnramp(runtime, 'blaster', (frames) => frames.pipe(finalize(() => (finished = true))));
    runtime.publish('onramp', { id: 'src', type: 'watched_blaster', codec: 'string', config: { source, iters: 7 } });
    runtime.publish('offramp', { id: 'dst', type: 'file', codec: 'string', config: { file: out } });
    runtime.publish('binding', flow('src', 'dst'));
    await runtime.activate('binding', 'flow', 'main');
    const lines = () => readFileSync(out, 'utf8').split('\n').filter(Boolean);
    await eventually(() => finished, 3000, 'the blaster to stop');
    // shutdown writes what is in flight: the file then holds everything the blaster sent
    await runtime.shutdown();
    expect(lines()).to.deep.equal(['a', 'b', 'c', 'a', 'b', 'c', 'a']);
  });

  it('blaster reads xz, decodes base64 lines, and paces by interval (ns)', async () => {
    const source = join(dir, 'in.txt.xz');
    writeFileSync(source, xz.compressSync(Buffer.from(['{"n":1}', '{"n":2}'].map((l) => Buffer.from(l).toString('base64')).join('\n'))));
    const out = join(dir, 'out.json');
    runtime.publish('onramp', { id: 'src', type: 'blaster', config: { source, base64: true, iters: 4, interval: 20_000_000 } });
    runtime.publish('offramp', { id: 'dst', type: 'file', config: { file: out } });
    runtime.publish('binding', flow('src', 'dst'));
    await runtime.activate('binding', 'flow', 'main');
    const lines = () => readFileSync(out, 'utf8').split('\n').filter(Boolean);
    await eventually(() => lines().length === 4, 3000, '4 events');
    expect(lines()).to.deep.equal(['{"n":1}', '{"n":2}', '{"n":1}', '{"n":2}']);
  });

  it('the file onramp reads xz files and sets the origin URI', async () => {
    const source = join(dir, 'in.json.xz');
    writeFileSync(source, xz.compressSync(Buffer.from('{"x":1}\n{"x":2}')));
    runtime.publish('onramp', { id: 'src', type: 'file', config: { source } });
    runtime.publish('binding', { id: 'only', links: { '/onramp/src/{instance}/out': ['/pipeline/system::passthrough/{instance}/in'] } });
    await runtime.activate('binding', 'only', 'main');
    const events: unknown[] = [];
    runtime
      .pipeline('/pipeline/system::passthrough/main')!
      .output('out')
      .subscribe((e) => events.push([e.data, e.originUri]));
    await eventually(() => events.length === 2, 3000, '2 events');
    expect(events).to.deep.equal([
      [{ x: 1 }, `svc-file://${hostname()}/${source.slice(1)}`],
      [{ x: 2 }, `svc-file://${hostname()}/${source.slice(1)}`],
    ]);
  });

  it('stdout writes prefix + payload + newline per event', async () => {
    const source = join(dir, 'in.txt');
    writeFileSync(source, 'hello\nworld\n');
    const config = join(dir, 'c.yaml');
    writeFileSync(
      config,
      yamlFlow(
        `onramp:\n  - id: src\n    type: file\n    codec: string\n    config: { source: "${source}", close_on_done: true, sleep_on_done: 100 }`,
        `offramp:\n  - id: dst\n    type: stdout\n    codec: string\n    config: { prefix: ">>> " }`,
      ),
    );
    const run = await runEddy(['server', 'run', '-f', config, '--no-api']);
    expect(run.code, run.stderr).to.equal(0);
    expect(run.stdout).to.equal('>>> hello\n>>> world\n');
  });

  it('blackhole with structured: true prints one JSON report and stops the runtime', async () => {
    const config = join(dir, 'bench.yaml');
    const data = join(__dirname, '../../../test/fixtures/data/data.json.xz');
    writeFileSync(
      config,
      yamlFlow(
        `onramp:\n  - id: src\n    type: blaster\n    config: { source: "${data}" }`,
        `offramp:\n  - id: dst\n    type: blackhole\n    config: { warmup_secs: 0.2, stop_after_secs: 0.5, significant_figures: 2, structured: true }`,
      ),
    );
    const run = await runEddy(['server', 'run', '-f', config, '--no-api']);
    expect(run.code, run.stderr).to.equal(0);
    const report = JSON.parse(run.stdout.trim());
    expect(report).to.have.keys(['events', 'bytes', 'seconds', 'events_per_second', 'megabytes_per_second', 'latency_ns', 'peak_rss_bytes']);
    expect(report.latency_ns).to.have.keys(['p50', 'p90', 'p99', 'p999', 'max', 'mean']);
    expect(report.events).to.be.greaterThan(0);
    expect(report.bytes).to.be.greaterThan(report.events * 100);
    expect(report.latency_ns.p50).to.be.at.most(report.latency_ns.p99);
  });

  it('blackhole with count_field counts each event as the number in that data field (bench rows of aggregations)', async () => {
    const source = join(dir, 'in.txt');
    writeFileSync(source, '{"n":3}\n');
    const config = join(dir, 'bench.yaml');
    writeFileSync(
      config,
      yamlFlow(
        `onramp:\n  - id: src\n    type: blaster\n    config: { source: "${source}", interval: 1000000 }`,
        `offramp:\n  - id: dst\n    type: blackhole\n    config: { warmup_secs: 0, stop_after_secs: 0.5, significant_figures: 2, structured: true, count_field: n }`,
      ),
    );
    const run = await runEddy(['server', 'run', '-f', config, '--no-api']);
    expect(run.code, run.stderr).to.equal(0);
    const report = JSON.parse(run.stdout.trim());
    // every payload is `{"n":3}` (7 bytes) and stands for 3 events
    expect(report.bytes).to.be.greaterThan(0);
    expect(report.events).to.equal((report.bytes / 7) * 3);
  });

  it('blackhole without structured prints the HDR histogram and the throughput', async () => {
    const source = join(dir, 'in.txt');
    writeFileSync(source, '{"a":1}\n');
    const config = join(dir, 'bench.yaml');
    writeFileSync(
      config,
      yamlFlow(
        `onramp:\n  - id: src\n    type: blaster\n    config: { source: "${source}", interval: 1000000 }`,
        `offramp:\n  - id: dst\n    type: blackhole\n    config: { warmup_secs: 0, stop_after_secs: 0.5, significant_figures: 2 }`,
      ),
    );
    const run = await runEddy(['server', 'run', '-f', config, '--no-api']);
    expect(run.code, run.stderr).to.equal(0);
    expect(run.stdout).to.match(/Value\s+Percentile\s+TotalCount/);
    expect(run.stdout).to.match(/Throughput: [\d.]+ events\/s, [\d.]+ MB\/s/);
  });

  it('exit rejects an event without an integer exit field, counting an error, and keeps running', async () => {
    const source = join(dir, 'in.json');
    writeFileSync(source, '{"exit":"soon"}\n');
    runtime.publish('onramp', { id: 'src', type: 'file', config: { source } });
    runtime.publish('offramp', { id: 'dst', type: 'exit' });
    runtime.publish('binding', flow('src', 'dst'));
    const exits: number[] = [];
    runtime.exitRequests.subscribe((r) => exits.push(r.code));
    await runtime.activate('binding', 'flow', 'main');
    const counters = runtime.offramp('/offramp/dst/main')!.counters;
    await eventually(() => counters.error === 1, 3000, 'an error');
    expect(exits).to.deep.equal([]);
  });
});
