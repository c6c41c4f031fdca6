/**
 * The worker thread of bench/lookup-reload.ts's `worker` way: reads the CSV
 * in 64 KiB pieces with enrich::lookup's reader and posts its rows in
 * batches of 5,000, then null.
 */
import { createReadStream } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { CsvRowReader } from '../src/pipeline/lookup/csv';

const { file } = workerData as { file: string };
const port = parentPort!;
let batch: Record<string, string>[] = [];
const reader = new CsvRowReader(file, ',', (row) => {
  batch.push(row);
  if (batch.length === 5000) {
    port.postMessage(batch);
    batch = [];
  }
});

async function run(): Promise<void> {
  for await (const piece of createReadStream(file, { encoding: 'utf8', highWaterMark: 64 * 1024 })) reader.push(piece as string);
  reader.end();
  if (batch.length > 0) port.postMessage(batch);
  port.postMessage(null);
}

void run();
