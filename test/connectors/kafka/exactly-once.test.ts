/**
 * The kafka onramp with `guarantee: exactly_once` against the real broker
 * (docs/design-exactly-once.md): state that survives kill -9, output each
 * window once for a read_committed reader, and the flows it refuses.
 */
import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger } from '../../../src/core/logger';
import { Runtime } from '../../../src/runtime/runtime';
import { eventually } from '../../helpers/runtime';
import { type EddyChild, spawnEddy, tail, unique, useSharedKafka } from './helpers';
import { sleep } from '../net-helpers';
import { mulberry32 } from '../../helpers/random';

const PARTITIONS = 4;
const KEYS = 8;
const WINDOW_MS = 1000;
const PER_WINDOW = 80;
const BASE = 1_700_000_000_000;

interface Input {
  id: number;
  k: string;
  v: number;
  ts: number;
}

interface Output {
  k: string;
  n: number;
  sum: number;
  start: number;
}

/** The events of window `w`, or the part `[from, to)` of them: every key, values from the id. */
function windowEvents(w: number, from = 0, to = PER_WINDOW): Input[] {
  return Array.from({ length: to - from }, (_, j) => {
    const i = from + j;
    return { id: w * PER_WINDOW + i, k: `k${i % KEYS}`, v: (i * 7) % 13, ts: BASE + w * WINDOW_MS + Math.floor((i * WINDOW_MS) / PER_WINDOW) };
  });
}

function flowConfig(dir: string, broker: string, group: string, input: string, output: string, late?: { topic: string; lateness: number }): string {
  const file = join(dir, `${group}.yaml`);
  const lateOfframp = late ? `\n  - id: late\n    type: kafka\n    config: { topic: ${late.topic}, brokers: ["${broker}"] }` : '';
  const lateLink = late ? `\n      "/pipeline/windows/{instance}/late": ["/offramp/late/{instance}/in"]` : '';
  writeFileSync(
    file,
    `onramp:
  - id: in
    type: kafka
    config:
      group_id: ${group}
      topics: [${input}]
      brokers: ["${broker}"]
      guarantee: exactly_once
      rdkafka_options: { auto.offset.reset: earliest, session.timeout.ms: "6000" }
offramp:
  - id: out
    type: kafka
    config: { topic: ${output}, brokers: ["${broker}"] }${lateOfframp}
pipeline:
  - id: windows
    interface: { inputs: [in], outputs: [out, late] }
    nodes:
      - id: per_key
        type: window::aggregate
        config:
          window: { size: ${WINDOW_MS} }
          time: event.ts
${late ? `          allowed_lateness: ${late.lateness}\n` : ''}          group_by: { k: event.k }
          aggregate: { n: count(), sum: sum(event.v) }
      - id: bounds
        type: runtime::cel
        config: { set: { start: meta.window.start } }
    links: { in: [per_key], per_key: [bounds], bounds: [out], per_key/late: [late] }
binding:
  - id: count
    links:
      "/onramp/in/{instance}/out": ["/pipeline/windows/{instance}/in"]
      "/pipeline/windows/{instance}/out": ["/offramp/out/{instance}/in"]${lateLink}
mapping:
  /binding/count/main: { instance: main }
`,
  );
  return file;
}

/** A number in [0, 1) from a seeded generator: the same out-of-order times in every run. */
function prng(seed: number): () => number {
  const next = mulberry32(seed);
  return () => next() / 4294967296;
}

/** Every (key, window) of `events` with its count and sum: what the flow must write, once each. */
function recompute(events: readonly Input[]): Map<string, Output> {
  const out = new Map<string, Output>();
  for (const e of events) {
    const start = Math.floor(e.ts / WINDOW_MS) * WINDOW_MS;
    const id = `${e.k}@${start}`;
    const o = out.get(id) ?? { k: e.k, n: 0, sum: 0, start };
    o.n++;
    o.sum += e.v;
    out.set(id, o);
  }
  return out;
}

describe('kafka onramp, guarantee: exactly_once', function () {
  this.timeout(120000);
  const kafka = useSharedKafka();
  let dir: string;
  const children: EddyChild[] = [];
  const closers: (() => Promise<void>)[] = [];

  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'eddy-eos-'))));
  afterEach(async function () {
    if (this.currentTest?.state === 'failed') for (const [i, c] of children.entries()) console.log(`      process ${i} said:\n${c.stderr().slice(-4000)}`);
    await Promise.all(children.splice(0).map((c) => c.kill('SIGKILL')));
    for (const close of closers.splice(0)) await close();
    rmSync(dir, { recursive: true, force: true });
  });

  const produce = (topic: string, events: readonly Input[]) =>
    kafka.peer.produce(
      topic,
      events.map((e) => ({ key: e.k, value: JSON.stringify(e) })),
    );

  it('a process killed with SIGKILL in the middle of a window resumes it from its changelog: every window once, counted exactly', async () => {
    const group = unique('eos');
    const input = unique('eos-in');
    const output = unique('eos-out');
    await kafka.peer.createTopic(input, PARTITIONS);
    await kafka.peer.createTopic(output, 1);
    const out = await tail(kafka.peer, output);
    closers.push(out.close);
    const config = flowConfig(dir, kafka.broker, group, input, output);

    // windows 0-2 whole, window 3 half: 0-2 close (3's events move the watermark past them), 3 stays open
    const first = [...windowEvents(0), ...windowEvents(1), ...windowEvents(2), ...windowEvents(3, 0, PER_WINDOW / 2)];
    await produce(input, first);
    const one = spawnEddy(config);
    children.push(one);
    // every input offset committed: window 3's first half is then only in the state, saved in the changelog
    const perPartition = (events: readonly Input[]) => events.length; // the total is what the group's offsets add up to
    await eventually(
      async () => Object.values(await kafka.peer.committed(group, input)).reduce((a, b) => a + Math.max(0, b), 0) >= perPartition(first),
      60000,
      'every input offset committed',
    );
    expect(await one.kill('SIGKILL')).to.equal('SIGKILL');

    // the rest of window 3, then windows 4 and 5 (5 closes 4; 5 stays open); a second process takes over
    const second = [...windowEvents(3, PER_WINDOW / 2), ...windowEvents(4), ...windowEvents(5)];
    await produce(input, second);
    const two = spawnEddy(config);
    children.push(two);
    const expected = recompute([...first, ...second]);
    const closed = [...expected.values()].filter((o) => o.start < BASE + 5 * WINDOW_MS);
    await eventually(() => out.values.length >= closed.length, 60000, `${closed.length} windows written (have ${out.values.length})`);
    await two.kill('SIGTERM');

    const written = out.values.map((v) => JSON.parse(v) as Output);
    const seen = new Map<string, Output[]>();
    for (const o of written.filter((o) => o.start < BASE + 5 * WINDOW_MS)) seen.set(`${o.k}@${o.start}`, [...(seen.get(`${o.k}@${o.start}`) ?? []), o]);
    const twice = [...seen].filter(([, os]) => os.length > 1).map(([id]) => id);
    const wrong = closed.filter((e) => {
      const got = seen.get(`${e.k}@${e.start}`);
      return got !== undefined && (got[0].n !== e.n || got[0].sum !== e.sum);
    });
    const missing = closed.filter((e) => !seen.has(`${e.k}@${e.start}`)).map((e) => `${e.k}@${e.start}`);
    expect({ missing, twice, wrong }).to.deep.equal({ missing: [], twice: [], wrong: [] });
  });

  it('the chaos test: two processes in one group, one killed with SIGKILL every 8 s and started again 2 s later; every (key, window) once, exact, nothing late', async function () {
    this.timeout(300000);
    const group = unique('eos-chaos');
    const input = unique('eos-chaos-in');
    const output = unique('eos-chaos-out');
    const lateTopic = unique('eos-chaos-late');
    await kafka.peer.createTopic(input, PARTITIONS);
    await kafka.peer.createTopic(output, 1);
    await kafka.peer.createTopic(lateTopic, 1);
    const out = await tail(kafka.peer, output);
    const late = await tail(kafka.peer, lateTopic);
    closers.push(out.close, late.close);
    const config = flowConfig(dir, kafka.broker, group, input, output, { topic: lateTopic, lateness: 2 * WINDOW_MS });

    // CHAOS_EVENTS events over CHAOS_SECS s, keyed k0..k19, event times out of order by up to 1 s
    const total = Number(process.env.CHAOS_EVENTS ?? 200_000);
    const secs = Number(process.env.CHAOS_SECS ?? 40);
    const random = prng(42);
    const events: Input[] = Array.from({ length: total }, (_, id) => ({
      id,
      k: `k${id % 20}`,
      v: id % 97,
      ts: BASE + Math.floor((id * secs * 1000) / total) - Math.floor(random() * WINDOW_MS),
    }));
    const processes: EddyChild[] = [spawnEddy(config, 600000), spawnEddy(config, 600000)];
    children.push(...processes);
    let kills = 0;
    const started = Date.now();
    // every 8 s one of the two (in turn) is killed, and started again 2 s later
    const chaos = (async () => {
      for (let next = 8000; ; next += 8000) {
        await sleep(Math.max(0, started + next - Date.now()));
        // at least five kills, the last ones after the input ended if need be
        if (Date.now() - started > secs * 1000 && kills >= 5) return;
        const i = kills % 2;
        await processes[i].kill('SIGKILL');
        kills++;
        await sleep(2000);
        processes[i] = spawnEddy(config, 600000);
        children.push(processes[i]);
      }
    })();
    // produced at a steady rate, in 100 ms steps
    const step = Math.ceil(total / (secs * 10));
    for (let from = 0; from < total; from += step) {
      await sleep(Math.max(0, started + (from / step) * 100 - Date.now()));
      await produce(input, events.slice(from, from + step));
    }
    await chaos;
    // one event per key well past the end closes every window of the stream (their own windows stay open)
    const end = BASE + secs * 1000 + 10 * WINDOW_MS;
    await produce(
      input,
      Array.from({ length: 20 }, (_, i) => ({ id: total + i, k: `k${i}`, v: 0, ts: end })),
    );
    const expected = recompute(events);
    await eventually(() => out.values.length >= expected.size, 180000, `${expected.size} windows written (have ${out.values.length})`);
    await Promise.all(processes.map((p) => p.kill('SIGTERM')));

    const seen = new Map<string, Output[]>();
    for (const o of out.values.map((v) => JSON.parse(v) as Output)) seen.set(`${o.k}@${o.start}`, [...(seen.get(`${o.k}@${o.start}`) ?? []), o]);
    const missing = [...expected.keys()].filter((id) => !seen.has(id));
    const duplicated = [...seen].filter(([, os]) => os.length > 1).map(([id]) => id);
    const wrong = [...expected].filter(([id, e]) => seen.get(id)?.some((o) => o.n !== e.n || o.sum !== e.sum)).map(([id]) => id);
    const extra = [...seen.keys()].filter((id) => !expected.has(id));
    console.log(
      `      ${total} events, ${kills} kills, ${expected.size} windows expected, ${out.values.length} written: ${missing.length} missing, ${duplicated.length} duplicated, ${wrong.length} wrong, ${extra.length} extra, ${late.values.length} late`,
    );
    expect(kills, 'kills').to.be.at.least(5);
    expect({ missing, duplicated, wrong, extra, late: late.values.length }).to.deep.equal({ missing: [], duplicated: [], wrong: [], extra: [], late: 0 });
  });

  it('generic::dedupe in front of a kafka sink, every id sent twice 30 s apart, across SIGKILLs: each id out exactly once', async function () {
    this.timeout(300000);
    const group = unique('eos-dedupe');
    const input = unique('eos-dedupe-in');
    const output = unique('eos-dedupe-out');
    await kafka.peer.createTopic(input, PARTITIONS);
    await kafka.peer.createTopic(output, 1);
    const out = await tail(kafka.peer, output);
    closers.push(out.close);
    const file = join(dir, `${group}.yaml`);
    writeFileSync(
      file,
      `onramp:
  - id: in
    type: kafka
    config:
      group_id: ${group}
      topics: [${input}]
      brokers: ["${kafka.broker}"]
      guarantee: exactly_once
      rdkafka_options: { auto.offset.reset: earliest, session.timeout.ms: "6000" }
offramp:
  - id: out
    type: kafka
    config: { topic: ${output}, brokers: ["${kafka.broker}"] }
pipeline:
  - id: once
    interface: { inputs: [in], outputs: [out] }
    nodes:
      - id: first
        type: generic::dedupe
        config: { key: event.id, within: 1m }
    links: { in: [first], first: [out] }
binding:
  - id: dedupe
    links:
      "/onramp/in/{instance}/out": ["/pipeline/once/{instance}/in"]
      "/pipeline/once/{instance}/out": ["/offramp/out/{instance}/in"]
mapping:
  /binding/dedupe/main: { instance: main }
`,
    );
    // DEDUPE_IDS ids over 10 s, each sent again 30 s after its first copy (the same key: the same partition)
    const ids = Number(process.env.DEDUPE_IDS ?? 20_000);
    const spread = 10_000;
    const apart = Number(process.env.DEDUPE_APART_MS ?? 30_000);
    const copy = (id: number) => ({ id, k: `k${id % 20}`, v: 0, ts: 0 });
    const processes: EddyChild[] = [spawnEddy(file, 600000), spawnEddy(file, 600000)];
    children.push(...processes);
    const started = Date.now();
    let kills = 0;
    const chaos = (async () => {
      for (let next = 8000; next < spread + apart; next += 8000) {
        await sleep(Math.max(0, started + next - Date.now()));
        const i = kills % 2;
        await processes[i].kill('SIGKILL');
        kills++;
        await sleep(2000);
        processes[i] = spawnEddy(file, 600000);
        children.push(processes[i]);
      }
    })();
    const step = Math.ceil(ids / 100);
    for (let t = 0; t < 200; t++) {
      // step t sends the first copies of its ids (t < 100) and, 30 s later, their second copies
      const at = t < 100 ? t * (spread / 100) : apart + (t - 100) * (spread / 100);
      await sleep(Math.max(0, started + at - Date.now()));
      const from = (t % 100) * step;
      await produce(
        input,
        Array.from({ length: Math.max(0, Math.min(step, ids - from)) }, (_, j) => copy(from + j)),
      );
    }
    await chaos;
    await eventually(() => out.values.length >= ids, 120000, `${ids} ids written (have ${out.values.length})`);
    // the last second copies are read and dropped before the processes stop (nothing more may come out)
    await eventually(
      async () => Object.values(await kafka.peer.committed(group, input)).reduce((a, b) => a + Math.max(0, b), 0) >= 2 * ids,
      60000,
      'every copy read',
    );
    await Promise.all(processes.map((p) => p.kill('SIGTERM')));
    const counts = new Map<number, number>();
    for (const v of out.values) {
      const id = (JSON.parse(v) as Input).id;
      counts.set(id, (counts.get(id) ?? 0) + 1);
    }
    const missing = Array.from({ length: ids }, (_, id) => id).filter((id) => !counts.has(id));
    const twice = [...counts].filter(([, n]) => n > 1).map(([id]) => id);
    console.log(
      `      ${ids} ids sent twice ${apart / 1000} s apart, ${kills} kills: ${out.values.length} written, ${missing.length} missing, ${twice.length} more than once`,
    );
    expect(kills, 'kills').to.be.at.least(3);
    expect({ missing: missing.length, twice: twice.length }).to.deep.equal({ missing: 0, twice: 0 });
  });

  it('refuses at activation a flow whose exactly_once source reaches an offramp that cannot join its transactions, naming it', async () => {
    const runtime = new Runtime({ logger: createLogger('silent') });
    await runtime.start();
    closers.push(() => runtime.shutdown());
    runtime.publish('onramp', {
      id: 'in',
      type: 'kafka',
      config: { group_id: unique('eos'), topics: [unique('eos-in')], brokers: [kafka.broker], guarantee: 'exactly_once' },
    });
    runtime.publish('pipeline', {
      id: 'p',
      interface: { inputs: ['in'], outputs: ['out'] },
      nodes: [{ id: 'pass', type: 'passthrough' }],
      links: { in: ['pass'], pass: ['out'] },
    });
    runtime.publish('offramp', { id: 'file', type: 'file', config: { file: join(dir, 'out.json') } });
    runtime.publish('binding', {
      id: 'flow',
      links: { '/onramp/in/{instance}/out': ['/pipeline/p/{instance}/in'], '/pipeline/p/{instance}/out': ['/offramp/file/{instance}/in'] },
    });
    let refused: Error | undefined;
    await runtime.activate('binding', 'flow', 'main', {}).catch((err: unknown) => (refused = err as Error));
    expect(refused?.message).to.match(
      /\/onramp\/in\/main commits exactly once .* reach \/offramp\/file\/main, a file offramp, which cannot take part in its transactions/,
    );
    expect((refused as { code?: string } | undefined)?.code, 'a 400 over REST').to.equal('invalid');
  });

  it('refuses at publish what cannot go with exactly_once, naming the option', async () => {
    const runtime = new Runtime({ logger: createLogger('silent') });
    const base = { group_id: 'g', topics: ['t'], brokers: [kafka.broker] };
    expect(() =>
      runtime.publish('onramp', { id: 'a', type: 'kafka', config: { ...base, guarantee: 'exactly_once', rdkafka_options: { 'enable.auto.commit': 'true' } } }),
    ).to.throw(/enable\.auto\.commit: true cannot be used with guarantee exactly_once/);
    expect(() =>
      runtime.publish('onramp', {
        id: 'b',
        type: 'kafka',
        config: { ...base, guarantee: 'exactly_once', rdkafka_options: { 'isolation.level': 'read_uncommitted' } },
      }),
    ).to.throw(/isolation\.level: read_uncommitted cannot be used with guarantee exactly_once/);
    expect(() => runtime.publish('onramp', { id: 'c', type: 'kafka', config: { ...base, commit_interval: '1s' } })).to.throw(
      /commit_interval: only with guarantee exactly_once/,
    );
  });
});
