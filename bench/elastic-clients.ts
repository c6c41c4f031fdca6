/**
 * Elasticsearch client lines side by side (docs/connectors/elastic.md,
 * "Which client"): a bulk loop shaped as the elastic offramp sends it
 * (`transport.request` POST `/_bulk` with a prebuilt NDJSON body of 200
 * documents, 4 requests in flight) for BENCH_SECS (8) s with each client
 * given, in turn, BENCH_ROUNDS (3) times. Each client is a directory
 * holding a copy of the package, installed outside the project:
 *
 *   (cd /tmp/es819 && npm init -y && npm install @elastic/elasticsearch@8.19)
 *   node dist/bench/elastic-clients.js node_modules/@elastic/elasticsearch /tmp/es819/node_modules/@elastic/elasticsearch
 *
 * Prints documents per second (the cluster is usually the limit) and the
 * client's CPU per 1,000 documents, with the load average. A client that
 * cannot talk to the cluster prints its error (the 9.x line against an 8
 * cluster). EDDY_ELASTIC_URL (default http://127.0.0.1:9200).
 */
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import { REPO, envNumber } from './data';

interface BulkAnswer {
  errors: boolean;
  items: unknown[];
}
interface ClientLike {
  transport: { request<T>(params: { method: string; path: string; bulkBody?: Buffer }): Promise<T> };
  indices: { delete(params: { index: string }): Promise<unknown> };
}

const DOCS = 200;
const IN_FLIGHT = 4;

async function measure(dir: string, secs: number): Promise<string> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- each client is loaded from its own directory
  const { Client } = require(dir) as { Client: new (options: object) => ClientLike };
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- its version, from the same directory
  const version = (require(`${dir}/package.json`) as { version: string }).version;
  const lines = readFileSync(`${REPO}/bench/data/tcp-lines.json`, 'utf8').split('\n').filter(Boolean);
  const index = `eddy-bench-client-${version.replace(/\./g, '-')}`;
  const body = Buffer.from(
    lines
      .slice(0, DOCS)
      .map((line) => `{"index":{"_index":"${index}"}}\n${line}\n`)
      .join(''),
  );
  const client = new Client({ node: process.env.EDDY_ELASTIC_URL ?? 'http://127.0.0.1:9200', maxRetries: 0 });
  const load = loadavg()[0].toFixed(1);
  try {
    await client.transport.request({ method: 'GET', path: '/_cluster/health' });
    let docs = 0;
    const end = Date.now() + secs * 1000;
    const cpu = process.cpuUsage();
    const start = process.hrtime.bigint();
    const loop = async () => {
      while (Date.now() < end) docs += (await client.transport.request<BulkAnswer>({ method: 'POST', path: '/_bulk', bulkBody: body })).items.length;
    };
    await Promise.all(Array.from({ length: IN_FLIGHT }, loop));
    const seconds = Number(process.hrtime.bigint() - start) / 1e9;
    const used = process.cpuUsage(cpu);
    await client.indices.delete({ index });
    return `${version}: ${Math.round(docs / seconds)} docs/s, ${((used.user + used.system) / 1e3 / (docs / 1e3)).toFixed(2)} ms client CPU per 1,000 docs (load ${load})`;
  } catch (error) {
    return `${version}: cannot bulk: ${(error as Error).message.split('\n')[0]} (load ${load})`;
  }
}

async function main(): Promise<void> {
  const dirs = process.argv.slice(2).map((dir) => resolve(dir));
  if (dirs.length === 0) throw new Error('usage: node dist/bench/elastic-clients.js CLIENT_DIR...');
  for (let round = 0; round < envNumber('BENCH_ROUNDS', 3); round++) {
    for (const dir of dirs) console.log(await measure(dir, envNumber('BENCH_SECS', 8)));
  }
}

void main();
