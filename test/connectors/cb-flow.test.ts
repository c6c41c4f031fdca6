import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { xz } from '@napi-rs/lzma';
import { runEddy } from '../helpers/cli';

/**
 * The cb onramp -> pipeline(s) -> cb offramp flow in a child `eddy server run`,
 * judged by its exit status and what the cb onramp prints to stderr.
 */
describe('cb onramp -> pipeline -> cb offramp (child process)', function () {
  this.timeout(90000);
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'eddy-cb-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  /** Writes the payload lines and a config; `body` is the YAML after the onramp section. */
  function config(lines: unknown[], onrampConfig: Record<string, unknown>, body: string, name = 'in.json'): string {
    const source = join(dir, name);
    const text = lines.map((l) => JSON.stringify(l)).join('\n') + '\n';
    writeFileSync(source, name.endsWith('.xz') ? xz.compressSync(Buffer.from(text)) : text);
    const file = join(dir, 'flow.yaml');
    writeFileSync(file, `onramp:\n  - id: cb\n    type: cb\n    config: ${JSON.stringify({ source, ...onrampConfig })}\n${body}`);
    return file;
  }

  const run = (file: string) => runEddy(['server', 'run', '-f', file, '--no-api'], { timeoutMs: 60000 });

  const cbOfframp = `offramp:
  - id: cbout
    type: cb
`;
  const passthroughToCb = `${cbOfframp}binding:
  - id: flow
    links:
      "/onramp/cb/{instance}/out": ["/pipeline/system::passthrough/{instance}/in"]
      "/pipeline/system::passthrough/{instance}/out": ["/offramp/cbout/{instance}/in"]
mapping:
  /binding/flow/main: { instance: main }
`;

  it('exits 0 once every event got its ack or fail, without waiting out the timeout, even when the last one closes the breaker', async () => {
    const lines = [
      { cb: 'ack' },
      { cb: 'fail' },
      { cb: ['fail', 'ack'] },
      { cb: ['ack', 'open'] },
      { cb: ['fail', 'restore'] },
      { cb: ['open', 'ack', 'restore'] },
      // a close pauses the onramp at once, so only a last line may close it in a run that passes
      { cb: ['fail', 'close'] },
    ];
    // a timeout far beyond the run's deadline: exiting 0 at all proves it did not wait it out
    const result = await run(config(lines, { timeout: 3_600_000 }, passthroughToCb));
    expect(result.code, result.stderr).to.equal(0);
    expect(result.stderr).to.include('All required CB events received.');
    expect(result.stderr).not.to.include('Expected CB events');
  });

  it('reads an xz-compressed source and takes metadata `cb` before data `cb`', async () => {
    // data says fail... but a runtime::cel node sets metadata cb from `m`, which wins; without `m` it is null and data counts
    const lines = [{ cb: 'close', m: 'ack' }, { cb: 'fail' }, { cb: ['close'], m: ['fail'] }];
    const body = `pipeline:
  - id: tag
    interface: { inputs: [in], outputs: [out] }
    nodes:
      - id: meta
        type: runtime::cel
        config: { meta: { cb: "has(event.m) ? event.m : null" } }
    links: { in: [meta], meta: [out] }
${cbOfframp}binding:
  - id: flow
    links:
      "/onramp/cb/{instance}/out": ["/pipeline/tag/{instance}/in"]
      "/pipeline/tag/{instance}/out": ["/offramp/cbout/{instance}/in"]
mapping:
  /binding/flow/main: { instance: main }
`;
    const result = await run(config(lines, { timeout: 3000 }, body, 'in.json.xz'));
    // had the data `close` of line 1 counted, the onramp would have stopped after it and exited 1
    expect(result.code, result.stderr).to.equal(0);
    expect(result.stderr).to.include('All required CB events received.');
  });

  it('exits 0 when a runtime::cel filter drops events: a filtered event is acked to its source (docs/delivery.md)', async () => {
    const lines = [1, 2, 3, 4, 5, 6].map((n) => ({ n, cb: n % 2 === 0 ? 'ack' : 'fail' }));
    const body = `pipeline:
  - id: lossy
    interface: { inputs: [in], outputs: [out] }
    nodes:
      - id: drop
        type: runtime::cel
        config: { filter: "event.n != 3 && event.n != 5" }
    links: { in: [drop], drop: [out] }
${cbOfframp}binding:
  - id: flow
    links:
      "/onramp/cb/{instance}/out": ["/pipeline/lossy/{instance}/in"]
      "/pipeline/lossy/{instance}/out": ["/offramp/cbout/{instance}/in"]
mapping:
  /binding/flow/main: { instance: main }
`;
    const result = await run(config(lines, { timeout: 3000 }, body));
    expect(result.code, result.stderr).to.equal(0);
    expect(result.stderr).to.include('All required CB events received.');
  });

  it('exits 1 naming the ids that got no ack or fail (events that ask the cb offramp for neither)', async () => {
    const lines = [1, 2, 3, 4, 5, 6].map((n) => (n === 3 || n === 5 ? { n } : { n, cb: n % 2 === 0 ? 'ack' : 'fail' }));
    const result = await run(config(lines, { timeout: 500 }, passthroughToCb));
    expect(result.code, result.stderr).to.equal(1);
    expect(result.stderr).to.include('Expected CB events up to id 6.');
    expect(result.stderr).to.include('Missing CB events for ids: [3, 5]');
    expect(result.stderr).not.to.include('All required CB events received.');
  });

  it('exits 1 after the timeout while a close keeps it paused before the end of the file', async () => {
    const lines = [{ cb: 'ack' }, { cb: ['fail', 'close'] }, { cb: 'ack' }, { cb: ['ack', 'open'] }];
    const result = await run(config(lines, { timeout: 300 }, passthroughToCb));
    expect(result.code, result.stderr).to.equal(1);
    expect(result.stderr).to.include('Expected CB events up to id 2.');
    expect(result.stderr).to.include('Missing CB events for ids: []');
    expect(result.stderr).to.include('Paused by a circuit breaker with 2 of 4 payloads not sent.');
  });

  it('cb_with_auto_ack_sink: cb onramp -> passthrough -> stdout offramp acks all 12 events and exits 0', async () => {
    const lines = Array.from({ length: 12 }, (_, i) => ({ snot: 'badger', id: i + 1 }));
    const body = `offramp:
  - id: out
    type: stdout
    codec: json
    config: { prefix: ">>> " }
binding:
  - id: flow
    links:
      "/onramp/cb/{instance}/out": ["/pipeline/system::passthrough/{instance}/in"]
      "/pipeline/system::passthrough/{instance}/out": ["/offramp/out/{instance}/in"]
mapping:
  /binding/flow/main: { instance: main }
`;
    const result = await run(config(lines, { timeout: 4000 }, body));
    expect(result.code, result.stderr).to.equal(0);
    expect(result.stdout).to.equal(lines.map((l) => `>>> ${JSON.stringify(l)}\n`).join(''));
    expect(result.stderr).to.include('All required CB events received.');
  });

  it('cb_pipeline_to_pipeline: acks and fails cross two pipelines back to the onramp', async () => {
    const lines = [{ cb: 'fail' }, { cb: 'ack' }, { cb: 'fail' }, { cb: 'ack' }];
    const body = `${cbOfframp}binding:
  - id: flow
    links:
      "/onramp/cb/{i}/out": ["/pipeline/system::passthrough/one_{i}/in"]
      "/pipeline/system::passthrough/one_{i}/out": ["/pipeline/system::passthrough/two_{i}/in"]
      "/pipeline/system::passthrough/two_{i}/out": ["/offramp/cbout/{i}/in"]
mapping:
  /binding/flow/main: { i: main }
`;
    const result = await run(config(lines, { timeout: 1000 }, body));
    expect(result.code, result.stderr).to.equal(0);
    expect(result.stderr).to.include('All required CB events received.');
  });

  it('exits 1 when its source cannot be read', async () => {
    const file = join(dir, 'flow.yaml');
    writeFileSync(file, `onramp:\n  - id: cb\n    type: cb\n    config: { source: "${join(dir, 'missing.json')}" }\n${passthroughToCb}`);
    const result = await run(file);
    expect(result.code, result.stderr).to.equal(1);
    expect(result.stderr).to.include('cb onramp: cannot read');
  });

  it('rejects unknown config keys', async () => {
    const file = join(dir, 'flow.yaml');
    writeFileSync(file, `onramp:\n  - id: cb\n    type: cb\n    config: { source: x, expect_batched: true }\n`);
    const result = await run(file);
    expect(result.code).to.equal(1);
    expect(result.stderr).to.match(/onramp 'cb': config.*expect_batched/);
  });
});
