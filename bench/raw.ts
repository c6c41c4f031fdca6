/**
 * The raw baselines: a tight Node loop doing only the unavoidable work of a
 * benchmark row, over the same lines eddy replays. Run as a child process
 * by bench/run.ts (`node dist/bench/raw.js KIND SECONDS WARMUP_SECONDS`) so
 * it starts from a fresh heap, as eddy does; prints one JSON line.
 *
 * - json:    bytes -> utf8 text -> JSON.parse -> JSON.stringify -> bytes, per line
 * - string:  split the lines out of one buffer (indexOf '\n') and copy each line's bytes, counting them
 * - msgpack: unpack then pack each (base64-decoded) line with msgpackr, plain maps
 * - group-by-count: JSON.parse, a Map of index_type -> {count, events}; at 10
 *   events of a type JSON.stringify `{index_type, count, first: [events]}` to bytes
 *   and forget the type (bench/group-by-count.yaml by hand)
 * - tumbling-groups, soak-windows: JSON.parse, a Map of group -> {n, sum, min,
 *   max} of `aint`, the clock (Date.now) read per event; when a 1 s window ends,
 *   JSON.stringify `{group, n, total, low, high, mean}` per group to bytes and
 *   start a new Map (bench/tumbling-groups.yaml, bench/soak-windows.yaml by hand)
 * - real-workflow: JSON.parse, Tremor's real-workflow classification rules in
 *   plain JavaScript (class, rate, dimension), a sliding-window rate check per
 *   class and dimension as grouper::bucket makes it (1 s in 100 slots, the
 *   clock read per event), JSON.stringify to bytes (bench/real-workflow.yaml by hand)
 * - codec-NAME (for the README, not a table column): eddy's own registered
 *   codec's decode then encode per line, so eddy / codec-NAME is what the
 *   runtime around the codec costs
 */
import { Packr } from 'msgpackr';
import { ROLLING_KEYS, TUMBLING_GROUPS, groupedLines, loadLines, msgpackLines, rollingKeyLines } from './data';
import { Registries } from '../src/runtime/registries';

export type RawKind = 'json' | 'string' | 'msgpack' | 'group-by-count' | 'tumbling-groups' | 'soak-windows' | 'real-workflow' | `codec-${string}`;

export interface RawResult {
  kind: RawKind;
  events: number;
  bytes: number;
  seconds: number;
  events_per_second: number;
  megabytes_per_second: number;
  /** CPU time (user + system) of the measured loop */
  cpu_seconds: number;
}

/** Work for one line: returns the bytes it produced, so nothing is optimised away. */
type Work = (line: Buffer) => number;

function jsonWork(): Work {
  return (line) => Buffer.from(JSON.stringify(JSON.parse(line.toString('utf8'))), 'utf8').length;
}

function msgpackWork(): Work {
  const packr = new Packr({ useRecords: false });
  return (line) => packr.pack(packr.unpack(line)).length;
}

/** Tremor's group-by-count by hand: count windows of 10 per index_type, each emitted with its events. */
function groupByCountWork(): Work {
  const groups = new Map<string, { count: number; events: unknown[] }>();
  return (line) => {
    const event = JSON.parse(line.toString('utf8')) as Record<string, unknown>;
    const key = event.index_type;
    if (typeof key !== 'string') throw new Error('index_type: not a string');
    let group = groups.get(key);
    if (!group) groups.set(key, (group = { count: 0, events: [] }));
    group.count++;
    group.events.push(event);
    if (group.count < 10) return 0;
    groups.delete(key);
    return Buffer.from(JSON.stringify({ index_type: key, count: group.count, first: group.events }), 'utf8').length;
  };
}

/** 1 s tumbling processing-time windows by hand: count, sum, min, max and mean of `aint` per `group`. */
function tumblingWork(): Work {
  const WINDOW_MS = 1000;
  interface Acc {
    n: number;
    sum: number;
    min: number;
    max: number;
  }
  let groups = new Map<string, Acc>();
  let end = 0;
  return (line) => {
    const event = JSON.parse(line.toString('utf8')) as Record<string, unknown>;
    const now = Date.now();
    let bytes = 0;
    if (now >= end) {
      for (const [group, a] of groups) {
        bytes += Buffer.from(JSON.stringify({ group, n: a.n, total: a.sum, low: a.min, high: a.max, mean: a.sum / a.n }), 'utf8').length;
      }
      groups = new Map();
      end = (Math.floor(now / WINDOW_MS) + 1) * WINDOW_MS;
    }
    const key = event.group;
    const v = event.aint;
    if (typeof key !== 'string' || typeof v !== 'number') throw new Error('group or aint missing');
    let a = groups.get(key);
    if (!a) groups.set(key, (a = { n: 0, sum: 0, min: v, max: v }));
    a.n++;
    a.sum += v;
    if (v < a.min) a.min = v;
    if (v > a.max) a.max = v;
    return bytes;
  };
}

const APP_RATES: Record<string, number> = { app1: 1250, app2: 2500, app3: 18750, app4: 750, app5: 18750 };
const SYSLOG_RATES: Record<string, number> = { syslog_app3: 1750, syslog_app4: 7500, syslog_app5: 125, syslog_app6: 3750 };

/** A rate check over 1 s in 100 slots of 10 ms: admits at most `rate` events per sliding second. */
class RateWindow {
  private readonly slots = new Array<number>(100).fill(0);
  private head = -1;
  private total = 0;

  constructor(private readonly rate: number) {}

  admit(nowMs: number): boolean {
    const slot = Math.floor(nowMs / 10);
    if (this.head < 0) this.head = slot;
    for (let s = this.head + 1; s <= slot && s <= this.head + 100; s++) {
      this.total -= this.slots[s % 100];
      this.slots[s % 100] = 0;
    }
    if (slot > this.head) this.head = slot;
    if (this.total >= this.rate) return false;
    this.slots[slot % 100]++;
    this.total++;
    return true;
  }
}

/** Tremor's real-workflow by hand: classify, rate-check per class and dimension, write out (both outcomes are written, as both ports go to the sink). */
function realWorkflowWork(): Work {
  const windows = new Map<string, RateWindow>();
  return (line) => {
    const event = JSON.parse(line.toString('utf8')) as Record<string, unknown>;
    const app = event.application as string;
    const index = event.index_type as string;
    let cls: string;
    let rate: number;
    let dimension: unknown;
    if (APP_RATES[app] !== undefined) {
      cls = 'applog_app1';
      rate = APP_RATES[app];
      dimension = app;
    } else if (index === 'applog_app6') {
      cls = 'applog_app6';
      rate = 4500;
      dimension = event.logger_name;
    } else if (index === 'syslog_app1') {
      cls = 'syslog_app1';
      rate = 2500;
      dimension = event.syslog_hostname;
    } else if ((event.tags as unknown[]).includes('tag1')) {
      cls = 'syslog_app2';
      rate = 125;
      dimension = event.syslog_hostname;
    } else if (SYSLOG_RATES[index] !== undefined) {
      cls = index;
      rate = SYSLOG_RATES[index];
      dimension = event.syslog_hostname;
    } else {
      cls = 'default';
      rate = 250;
      dimension = event.syslog_hostname;
    }
    const key = `${cls}\u0000${String(dimension)}`;
    let window = windows.get(key);
    if (!window) windows.set(key, (window = new RateWindow(rate)));
    const admitted = window.admit(Date.now());
    return Buffer.from(JSON.stringify(event), 'utf8').length + (admitted ? 0 : 1);
  };
}

interface Tally {
  events: number;
  bytes: number;
  seconds: number;
  cpu_seconds: number;
}

/**
 * Calls `slice` (which does some events' work and returns its events and
 * bytes) until `ms` have passed, timing wall clock and CPU; a warm-up run
 * first, then the measured one.
 */
function measure(slice: () => { events: number; bytes: number }, seconds: number, warmup: number): Omit<RawResult, 'kind'> {
  const runFor = (ms: number): Tally => {
    let events = 0;
    let bytes = 0;
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    let t = t0;
    while (t - t0 < ms) {
      const done = slice();
      events += done.events;
      bytes += done.bytes;
      t = performance.now();
    }
    const cpu = process.cpuUsage(cpu0);
    return { events, bytes, seconds: (t - t0) / 1000, cpu_seconds: (cpu.user + cpu.system) / 1e6 };
  };
  runFor(warmup * 1000);
  return summary(runFor(seconds * 1000));
}

/** Runs `work` over the lines round-robin in slices of 1000, checking the clock per slice. */
function measureLines(lines: Buffer[], work: Work, seconds: number, warmup: number): Omit<RawResult, 'kind'> {
  let i = 0;
  return measure(
    () => {
      let bytes = 0;
      for (let k = 0; k < 1000; k++) {
        bytes += work(lines[i]);
        if (++i === lines.length) i = 0;
      }
      return { events: 1000, bytes };
    },
    seconds,
    warmup,
  );
}

/** string: the input arrives as one buffer of lines; split and copy each line. */
function measureString(lines: Buffer[], seconds: number, warmup: number): Omit<RawResult, 'kind'> {
  // about 1 MB of the data repeated, so the scan runs over memory, not one short line list
  const one = Buffer.concat(lines.flatMap((l) => [l, Buffer.from('\n')]));
  const big = Buffer.concat(Array.from({ length: Math.max(1, Math.ceil(1_048_576 / one.length)) }, () => one));
  return measure(
    () => {
      let events = 0;
      let bytes = 0;
      let start = 0;
      for (let nl = big.indexOf(10); nl !== -1; nl = big.indexOf(10, start)) {
        bytes += Buffer.from(big.subarray(start, nl)).length;
        start = nl + 1;
        events++;
      }
      return { events, bytes };
    },
    seconds,
    warmup,
  );
}

function summary(r: Tally): Omit<RawResult, 'kind'> {
  return {
    ...r,
    events_per_second: r.events / r.seconds,
    megabytes_per_second: r.bytes / r.seconds / 1048576,
  };
}

export async function measureRaw(kind: RawKind, dataPath: string, seconds: number, warmup: number): Promise<RawResult> {
  const lines = await loadLines(dataPath);
  if (kind === 'string') return { kind, ...measureString(lines, seconds, warmup) };
  if (kind === 'json') return { ...measureLines(lines, jsonWork(), seconds, warmup), kind };
  if (kind === 'real-workflow') return { ...measureLines(lines, realWorkflowWork(), seconds, warmup), kind };
  if (kind === 'group-by-count') return { ...measureLines(lines, groupByCountWork(), seconds, warmup), kind };
  if (kind === 'tumbling-groups') return { ...measureLines(groupedLines(lines, TUMBLING_GROUPS), tumblingWork(), seconds, warmup), kind };
  if (kind === 'soak-windows') return { ...measureLines(rollingKeyLines(lines, ROLLING_KEYS), tumblingWork(), seconds, warmup), kind };
  if (kind.startsWith('codec-')) {
    const name = kind.slice('codec-'.length);
    const codec = Registries.withBuiltins().codecs.get(name, 'codec').create();
    const input = name === 'msgpack' ? msgpackLines(lines) : lines;
    return { ...measureLines(input, (l) => codec.encode(codec.decode(l, 0n)).length, seconds, warmup), kind };
  }
  return { ...measureLines(msgpackLines(lines), msgpackWork(), seconds, warmup), kind };
}

if (require.main === module) {
  const [kind, secs, warm, data] = process.argv.slice(2);
  measureRaw(kind as RawKind, data, Number(secs), Number(warm)).then(
    (r) => process.stdout.write(JSON.stringify(r) + '\n'),
    (err: unknown) => {
      process.stderr.write(`raw baseline failed: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(1);
    },
  );
}
