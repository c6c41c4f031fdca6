import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EDDY } from '../../helpers/cli';
import { Runtime } from '../../../src/runtime/runtime';
import { createLogger } from '../../../src/core/logger';
import { mulberry32 } from '../../helpers/random';

/**
 * Exactly once without Kafka (docs/design-exactly-once.md §6): file ->
 * qos::wal (guarantee: exactly_once) -> window::aggregate -> file, with
 * --data-dir, killed with SIGKILL again and again in the middle of its
 * windows and started again. A reader recomputes every (key, window) from
 * the input: each must be in the output file once, with its count and sum.
 * The kills are placed by watching the output grow, never by time; where
 * they land does not change what must come out.
 */
const KEYS = 20;
const WINDOW_MS = 1000;
const BASE = 1_700_000_000_000;

interface Input {
  k: string;
  v: number;
  ts: number;
}

interface Output {
  k: string;
  start: number;
  n: number;
  sum: number;
}

/** `total` events, 1000 per window, their times out of order by up to 400 ms; then one per key far past the end, closing every window. */
function inputEvents(total: number): Input[] {
  const next = mulberry32(35);
  const random = () => next() / 4294967296;
  const events: Input[] = [];
  for (let i = 0; i < total; i++) {
    const ts = BASE + i + Math.floor(random() * 400);
    events.push({ k: `k${i % KEYS}`, v: Math.floor(random() * 100), ts });
  }
  for (let k = 0; k < KEYS; k++) events.push({ k: `k${k}`, v: 0, ts: BASE + total + 100 * WINDOW_MS });
  return events;
}

/** What the flow must write: one line per (key, window) that closed, with its count and sum. */
function recompute(events: readonly Input[]): Map<string, Output> {
  const windows = new Map<string, Output>();
  const closedBefore = Math.max(...events.map((e) => e.ts)) - (Math.max(...events.map((e) => e.ts)) % WINDOW_MS);
  for (const { k, v, ts } of events) {
    const start = ts - (ts % WINDOW_MS);
    if (start >= closedBefore) continue; // the closing events' own windows stay open
    const id = `${k}@${start}`;
    const w = windows.get(id) ?? { k, start, n: 0, sum: 0 };
    w.n++;
    w.sum += v;
    windows.set(id, w);
  }
  return windows;
}

function flowConfig(dir: string): string {
  const file = join(dir, 'flow.yaml');
  writeFileSync(
    file,
    `onramp:
  - id: in
    type: file
    config: { source: "${join(dir, 'in.json')}" }
offramp:
  - id: out
    type: file
    config: { file: "${join(dir, 'out.json')}" }
  - id: late
    type: file
    config: { file: "${join(dir, 'late.json')}" }
pipeline:
  - id: windows
    interface: { inputs: [in], outputs: [out, late] }
    nodes:
      - id: log
        type: qos::wal
        config: { read_count: 64, max_elements: 1000000, guarantee: exactly_once, commit_interval: 50ms }
      - id: per_key
        type: window::aggregate
        config:
          window: { size: ${WINDOW_MS} }
          time: event.ts
          allowed_lateness: 500
          group_by: { k: event.k }
          aggregate: { n: count(), sum: sum(event.v) }
          window_fields: { start: start }
    links: { in: [log], log: [per_key], per_key: [out], per_key/late: [late] }
binding:
  - id: count
    links:
      "/onramp/in/{instance}/out": ["/pipeline/windows/{instance}/in"]
      "/pipeline/windows/{instance}/out": ["/offramp/out/{instance}/in"]
      "/pipeline/windows/{instance}/late": ["/offramp/late/{instance}/in"]
mapping:
  /binding/count/main: { instance: main }
`,
  );
  return file;
}

const lineCount = (file: string): number => (existsSync(file) ? readFileSync(file, 'utf8').split('\n').length - 1 : 0);

/** One run of eddy on the flow; resolves with how it ended once `until` holds (then it is killed with `signal`). */
async function runUntil(
  config: string,
  dataDir: string,
  until: () => boolean,
  signal: NodeJS.Signals,
  timeoutMs = 60000,
): Promise<{ signal: NodeJS.Signals | null; code: number | null; stderr: string }> {
  // the API (on an ephemeral port) keeps the process running after the input is read
  const child = spawn(process.execPath, [EDDY, 'server', 'run', '-f', config, '--data-dir', dataDir, '--api-port', '0'], {
    env: { ...process.env, EDDY_LOG: 'warn' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const exited = new Promise<{ signal: NodeJS.Signals | null; code: number | null }>((resolve) =>
    child.on('exit', (code, sig) => resolve({ code, signal: sig })),
  );
  let gone = false;
  void exited.then(() => (gone = true));
  const deadline = Date.now() + timeoutMs;
  while (!gone && !until()) {
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`eddy did not get there within ${timeoutMs} ms (stderr: ${stderr})`);
    }
    await new Promise((r) => setTimeout(r, 2));
  }
  child.kill(signal);
  return { ...(await exited), stderr };
}

describe('delivery: file -> qos::wal (exactly_once) -> window::aggregate -> file across kill -9', function () {
  this.timeout(300000);
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'eddy-wal-eos-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('killed with SIGKILL six times in the middle of its windows and started again: every (key, window) once, counted exactly, nothing late', async () => {
    const events = inputEvents(60_000);
    writeFileSync(join(dir, 'in.json'), events.map((e) => JSON.stringify(e)).join('\n') + '\n');
    const expected = recompute(events);
    const config = flowConfig(dir);
    const dataDir = join(dir, 'data');
    const out = join(dir, 'out.json');

    // each run is killed once the output has grown by a few windows past what the last one left (cut back to its checkpoint)
    const kills = 6;
    for (let i = 0; i < kills; i++) {
      const from = lineCount(out);
      const run = await runUntil(config, dataDir, () => lineCount(out) >= from + 40, 'SIGKILL');
      expect(run.signal, `run ${i + 1} ended before the kill: ${run.stderr}`).to.equal('SIGKILL');
      expect(lineCount(out), 'the kills landed before the end').to.be.below(expected.size);
    }
    const last = await runUntil(config, dataDir, () => lineCount(out) >= expected.size, 'SIGTERM');
    expect(last.code, last.stderr).to.equal(0);

    const text = readFileSync(out, 'utf8');
    expect(text.endsWith('\n'), 'no line cut in half').to.equal(true);
    const written = text
      .split('\n')
      .slice(0, -1)
      .map((l) => JSON.parse(l) as Output);
    const seen = new Map<string, Output[]>();
    for (const o of written) seen.set(`${o.k}@${o.start}`, [...(seen.get(`${o.k}@${o.start}`) ?? []), o]);
    const missing = [...expected.keys()].filter((id) => !seen.has(id));
    const duplicated = [...seen].filter(([, os]) => os.length > 1).map(([id]) => id);
    const wrong = [...expected].filter(([id, e]) => seen.get(id)?.some((o) => o.n !== e.n || o.sum !== e.sum)).map(([id]) => id);
    const extra = [...seen.keys()].filter((id) => !expected.has(id));
    const late = lineCount(join(dir, 'late.json'));
    console.log(
      `      ${events.length} events, ${kills} kills, ${expected.size} windows expected, ${written.length} written: ${missing.length} missing, ${duplicated.length} duplicated, ${wrong.length} wrong, ${extra.length} extra, ${late} late`,
    );
    expect({ missing, duplicated, wrong, extra, late }).to.deep.equal({ missing: [], duplicated: [], wrong: [], extra: [], late: 0 });
  });

  describe('what it refuses, before anything opens', () => {
    let runtime: Runtime;
    beforeEach(async () => {
      runtime = new Runtime({ logger: createLogger('silent') });
      await runtime.start();
      runtime.publish('onramp', { id: 'in', type: 'file', config: { source: __filename } });
    });
    afterEach(() => runtime.shutdown());

    const flow = (wal: Record<string, unknown>, offramp: Record<string, unknown>) => {
      runtime.publish('pipeline', {
        id: 'p',
        nodes: [{ id: 'log', type: 'qos::wal', config: { read_count: 10, max_elements: 100, guarantee: 'exactly_once', ...wal } }],
      });
      runtime.publish('offramp', { id: 'out', ...offramp });
      runtime.publish('binding', {
        id: 'flow',
        links: { '/onramp/in/{instance}/out': ['/pipeline/p/{instance}/in'], '/pipeline/p/{instance}/out': ['/offramp/out/{instance}/in'] },
      });
      return runtime.activate('binding', 'flow', 'main', {}).then(
        () => undefined,
        (err: unknown) => err as Error & { code?: string },
      );
    };

    it('an offramp that cannot take part in its checkpoints, named, as a 400; the file it would write untouched', async () => {
      const refused = await flow({ dir: join(dir, 'wal') }, { type: 'stdout' });
      expect(refused?.message).to.match(
        /\/pipeline\/p\/main node log \(qos::wal, guarantee: exactly_once\) checkpoints what follows it, and its events reach \/offramp\/out\/main, a stdout offramp, which cannot take part in its checkpoints: only file offramps can/,
      );
      expect(refused?.code).to.equal('invalid');
      expect(existsSync(join(dir, 'wal')), 'no log opened').to.equal(false);
    });

    it('a log with no place on disk: no dir and no --data-dir', async () => {
      writeFileSync(join(dir, 'out.json'), 'kept\n');
      const refused = await flow({}, { type: 'file', config: { file: join(dir, 'out.json') } });
      expect(refused?.message).to.match(/guarantee exactly_once keeps its log and checkpoints on disk: give it a dir, or run the server with --data-dir/);
      expect(readFileSync(join(dir, 'out.json'), 'utf8'), 'the output file untouched').to.equal('kept\n');
    });

    it('commit_interval without exactly_once, at publish', () => {
      expect(() =>
        runtime.publish('pipeline', {
          id: 'q',
          nodes: [{ id: 'log', type: 'qos::wal', config: { read_count: 10, max_elements: 100, commit_interval: '1s' } }],
        }),
      ).to.throw(/commit_interval is only for guarantee exactly_once/);
    });
  });
});
