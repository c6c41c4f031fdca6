/**
 * enrich::lookup: what a reload of a large CSV table costs the event loop
 * and memory, three ways (issue 33 item 6):
 *
 * - `sync`: the whole file read (async), then parsed and keyed at once, as
 *   before: `parseCsv` of the whole text and a map built from the rows.
 * - `pieces`: `FileTable.refresh`, as now: the file read 64 KiB at a time,
 *   each piece parsed into the new map as it comes, the event loop running
 *   between pieces.
 * - `worker`: a worker thread reads and parses the file (the same reader)
 *   and posts the rows in batches of 5,000; the main thread keys each batch
 *   into the new map as it arrives.
 *
 * Each run is a child process of its own (RSS is per process): it generates
 * nothing, loads the table once (the old table, serving meanwhile, as in a
 * running node), then reloads it with one of the three while
 * `perf_hooks.monitorEventLoopDelay` (10 ms resolution) and a 5 ms interval
 * timer watch the event loop; the peak RSS is the kernel's (VmHWM, reset
 * just before the reload through /proc/self/clear_refs). Runs
 * alternate between the ways, BENCH_LOOKUP_RUNS (3) of each.
 *
 * `node dist/bench/lookup-reload.js [ROWS]` (default 1,000,000 rows, about
 * 40 MB; the file is written to the temporary directory and removed).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import { parseCsv } from '../src/pipeline/lookup/csv';
import { FileTable } from '../src/pipeline/lookup/file-table';
import type { Row } from '../src/pipeline/lookup/tables';
import { envNumber } from './data';

const WAYS = ['sync', 'pieces', 'worker'] as const;
type Way = (typeof WAYS)[number];

interface Sample {
  way: Way;
  rows: number;
  reloadMs: number;
  /** the longest the event loop did not answer: the largest gap between two ticks of a 5 ms timer, less 5 ms */
  maxStallMs: number;
  loopDelayP99Ms: number;
  loopDelayMaxMs: number;
  rssBeforeMb: number;
  rssPeakMb: number;
  rssAfterMb: number;
}

/** A CSV of `rows` hosts with five more columns, one a quoted field with a comma. */
function writeTable(file: string, rows: number): void {
  const lines = ['host,team,oncall,region,rack,note'];
  for (let i = 0; i < rows; i++)
    lines.push(`host-${i.toString().padStart(7, '0')},team-${i % 97},"Oncall ${i % 13}, Person",eu-west-${i % 3},r${i % 500},note ${i}`);
  writeFileSync(file, lines.join('\n') + '\n');
}

/** The reload with the worker: the rows come in batches, the map is built here. */
function reloadInWorker(file: string): Promise<Map<string, Row>> {
  return new Promise((resolve, reject) => {
    const rows = new Map<string, Row>();
    const worker = new Worker(join(__dirname, 'lookup-reload-worker.js'), { workerData: { file } });
    worker.on('message', (batch: Row[] | null) => {
      if (batch === null) {
        resolve(rows);
        void worker.terminate();
        return;
      }
      for (const row of batch) rows.set(row.host as string, row);
    });
    worker.on('error', reject);
  });
}

async function reloadSync(file: string): Promise<Map<string, Row>> {
  const text = await readFile(file, 'utf8');
  const rows = new Map<string, Row>();
  for (const row of parseCsv(text, file)) rows.set(row.host, row);
  return rows;
}

async function child(way: Way, file: string): Promise<Sample> {
  const table = new FileTable(file, 'host');
  const mb = () => process.memoryUsage.rss() / 1e6;
  // settle: the garbage of the first load goes before measuring
  (globalThis as { gc?: () => void }).gc?.();
  await new Promise((r) => setTimeout(r, 200));
  utimesSync(file, new Date(), new Date(Date.now() + 5000));
  // the peak RSS from here on: Linux resets VmHWM to the current RSS on a 5 written to clear_refs
  writeFileSync('/proc/self/clear_refs', '5');
  const rssBefore = mb();
  let peak = rssBefore;
  let last = performance.now();
  let maxGap = 0;
  const probe = setInterval(() => {
    const now = performance.now();
    maxGap = Math.max(maxGap, now - last);
    last = now;
    peak = Math.max(peak, mb());
  }, 5);
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  const started = performance.now();
  let rows: number;
  if (way === 'pieces') {
    const result = await table.refresh();
    if (result.kind !== 'loaded') throw new Error(`not reloaded: ${JSON.stringify(result)}`);
    rows = table.rows.size;
  } else {
    table.rows = way === 'sync' ? await reloadSync(file) : await reloadInWorker(file);
    rows = table.rows.size;
  }
  const reloadMs = performance.now() - started;
  delay.disable();
  clearInterval(probe);
  maxGap = Math.max(maxGap, performance.now() - last);
  return {
    way,
    rows,
    reloadMs,
    maxStallMs: Math.max(0, maxGap - 5),
    loopDelayP99Ms: delay.percentile(99) / 1e6,
    loopDelayMaxMs: delay.max / 1e6,
    rssBeforeMb: rssBefore,
    rssPeakMb: Math.max(peak, peakRss()),
    rssAfterMb: mb(),
  };
}

/** VmHWM of /proc/self/status, in MB. */
function peakRss(): number {
  const kb = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync('/proc/self/status', 'utf8'));
  return kb ? Number(kb[1]) / 1e3 : 0;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

function main(): void {
  const rows = Number(process.argv[2] ?? 1_000_000);
  const runs = envNumber('BENCH_LOOKUP_RUNS', 3);
  const dir = mkdtempSync(join(tmpdir(), 'eddy-bench-lookup-'));
  const file = join(dir, 'owners.csv');
  try {
    writeTable(file, rows);
    const samples: Sample[] = [];
    for (let r = 0; r < runs; r++) {
      for (const way of WAYS) {
        const out = spawnSync(process.execPath, ['--expose-gc', __filename, '--child', way, file], { encoding: 'utf8' });
        if (out.status !== 0) throw new Error(`${way}: ${out.stderr}`);
        samples.push(JSON.parse(out.stdout) as Sample);
      }
    }
    console.log(
      `enrich::lookup reload of ${rows.toLocaleString('en')} CSV rows, median of ${runs} runs each (max stall: the longest the event loop did not answer)`,
    );
    console.log('| way | reload s | max stall ms | loop delay p99 ms | RSS before MB | RSS peak MB | RSS after MB |');
    console.log('| --- | --- | --- | --- | --- | --- | --- |');
    for (const way of WAYS) {
      const of = samples.filter((s) => s.way === way);
      const m = (k: keyof Sample) => median(of.map((s) => s[k] as number));
      console.log(
        `| ${way} | ${(m('reloadMs') / 1000).toFixed(2)} | ${m('maxStallMs').toFixed(0)} | ${m('loopDelayP99Ms').toFixed(0)} | ${m('rssBeforeMb').toFixed(0)} | ${m('rssPeakMb').toFixed(0)} | ${m('rssAfterMb').toFixed(0)} |`,
      );
    }
    if (process.env.BENCH_JSON) console.log(JSON.stringify(samples));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[2] === '--child') {
  child(process.argv[3] as Way, process.argv[4]).then(
    (sample) => console.log(JSON.stringify(sample)),
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
} else main();
