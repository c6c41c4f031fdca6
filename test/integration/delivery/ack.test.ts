import { expect } from 'chai';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { builtinOfframps } from '../../../src/connectors';
import { eventually } from '../../helpers/runtime';
import { type Flow, type ProbeLog, probeOnramp, range, registriesWith, startFlow } from './helpers';

/** Captures what is written to stdout and stderr while `body` runs (the std and debug sinks write there). */
async function quietly<T>(body: () => Promise<T>): Promise<T> {
  // eslint-disable-next-line @typescript-eslint/unbound-method -- kept only to be put back on the stream below
  const out = process.stdout.write;
  // eslint-disable-next-line @typescript-eslint/unbound-method -- as `out`
  const err = process.stderr.write;
  // a stream's write calls back once written: the std sinks ack then
  const discard = ((_chunk: unknown, encoding?: unknown, callback?: unknown) => {
    const done = typeof encoding === 'function' ? encoding : callback;
    if (typeof done === 'function') process.nextTick(done);
    return true;
  }) as typeof process.stdout.write;
  process.stdout.write = discard;
  process.stderr.write = discard;
  try {
    return await body();
  } finally {
    process.stdout.write = out;
    process.stderr.write = err;
  }
}

describe('delivery: auto-acking sinks ack transactional events back to the source', () => {
  let dir: string;
  let flow: Flow | undefined;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'eddy-ack-'))));
  afterEach(async () => {
    await flow?.stop();
    flow = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  it('flags exactly the spec\'s "always" sinks as auto-acking, with otel and kafka, whose sends settle when their receiver answered (cb acks by its own rules)', () => {
    // the spec's "always" row; every other sink (cb, tcp, udp, ...) acks by its own rules
    // otel is not in the spec: its send settles when the receiver answered the request holding the event (docs/connectors/otel.md)
    // kafka ("per the client library"): its send's promise is the produce request holding the event, resolved when the broker confirmed it
    const always = new Set(['blackhole', 'debug', 'exit', 'file', 'kv', 'postgres', 'stderr', 'stdout', 'otel', 'kafka']);
    const flags = Object.fromEntries(builtinOfframps.map((t) => [t.name, t.autoAck]));
    expect(flags).to.deep.equal(Object.fromEntries(builtinOfframps.map((t) => [t.name, always.has(t.name)])));
    expect(flags).to.include({ blackhole: true, cb: false, debug: true, exit: true, file: true, stderr: true, stdout: true });
  });

  const sinks: [string, (dir: string) => Record<string, unknown>][] = [
    ['blackhole', () => ({ warmup_secs: 0, stop_after_secs: 0, significant_figures: 2 })],
    ['debug', () => ({})],
    ['exit', () => ({})],
    ['file', (d) => ({ file: join(d, 'out.json') })],
    ['stderr', () => ({})],
    ['stdout', () => ({})],
  ];
  for (const [type, config] of sinks) {
    it(`${type}: every event is acked once, none failed`, async () => {
      const log: ProbeLog = { read: 0, acks: [], fails: [] };
      await quietly(async () => {
        flow = await startFlow({
          registries: registriesWith([probeOnramp(log)], []),
          // `exit` and `delay` make the events valid for the exit sink; the delay outlives the test
          onramp: { type: 'probe', config: { count: 40, data: { exit: 0, delay: 600000 } } },
          offramp: { type, config: config(dir) },
        });
        await eventually(() => log.acks.length >= 40, 5000, `acks from ${type}`);
        await flow.stop();
        flow = undefined;
      });
      expect(log.acks).to.deep.equal(range(1, 40));
      expect(log.fails).to.deep.equal([]);
    });
  }

  it('file: the acked events are the ones written', async () => {
    const log: ProbeLog = { read: 0, acks: [], fails: [] };
    const file = join(dir, 'out.json');
    flow = await startFlow({
      registries: registriesWith([probeOnramp(log)], []),
      onramp: { type: 'probe', config: { count: 25 } },
      offramp: { type: 'file', config: { file } },
    });
    await eventually(() => log.acks.length >= 25, 5000, 'acks');
    await flow.stop();
    flow = undefined;
    expect(readFileSync(file, 'utf8')).to.equal(
      range(1, 25)
        .map((id) => `{"id":${id}}\n`)
        .join(''),
    );
    // one ack per event: the original's file sink acked twice
    expect(log.acks).to.deep.equal(range(1, 25));
  });

  it('acks nothing for events that are not transactional', async () => {
    const log: ProbeLog = { read: 0, acks: [], fails: [] };
    flow = await startFlow({
      registries: registriesWith([probeOnramp(log)], []),
      onramp: { type: 'probe', config: { count: 25, transactional: false } },
      offramp: { type: 'file', config: { file: join(dir, 'out.json') } },
    });
    await eventually(() => log.read === 25, 5000, 'reads');
    // shutting down drains the pipeline and waits for every send to settle: any ack would have come by then
    await flow.stop();
    flow = undefined;
    expect(readFileSync(join(dir, 'out.json'), 'utf8').split('\n')).to.have.length(26);
    expect(log.acks).to.deep.equal([]);
    expect(log.fails).to.deep.equal([]);
  });
});
