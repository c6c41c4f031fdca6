/**
 * The raw baselines: a tight Node loop doing only the unavoidable work of a
 * benchmark row, over the same lines eddy replays. Run as a child process
 * by bench/run.ts (`node dist/bench/raw.js KIND SECONDS WARMUP_SECONDS`) so
 * it starts from a fresh heap, as eddy does; prints one JSON line.
 *
 * - json:    bytes -> utf8 text -> JSON.parse -> JSON.stringify -> bytes, per line
 * - string:  split the lines out of one buffer (indexOf '\n') and copy each line's bytes, counting them
 * - msgpack: unpack then pack each (base64-decoded) line with msgpackr, plain maps
 * - codec-NAME (for the README, not a table column): eddy's own registered
 *   codec's decode then encode per line, so eddy / codec-NAME is what the
 *   runtime around the codec costs
 */
import { Packr } from 'msgpackr';
import { loadLines, msgpackLines } from './data';
import { Registries } from '../src/runtime/registries';

export type RawKind = 'json' | 'string' | 'msgpack' | `codec-${string}`;

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

type Tally = { events: number; bytes: number; seconds: number; cpu_seconds: number };

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
    (err: Error) => {
      process.stderr.write(`raw baseline failed: ${err.message}\n`);
      process.exit(1);
    },
  );
}
