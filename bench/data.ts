import { mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Packr } from 'msgpackr';
import { builtinCodecs } from '../src/codecs';
import type { Codec } from '../src/codecs/codec';
import { readMaybeXz, splitLines } from '../src/connectors/_shared/read-source';

/** The repository root (this file runs as dist/bench/*.js). */
export const REPO = resolve(__dirname, '..', '..');

/** The benchmark data: `bench/data/data.json.xz` (real sample events kept in the repository), or BENCH_DATA. */
export function dataPath(): string {
  return resolve(process.env.BENCH_DATA ?? join(REPO, 'bench', 'data', 'data.json.xz'));
}

/** Where the runner writes resolved configs and derived data. */
export function workDir(): string {
  const dir = join(tmpdir(), `eddy-bench-${process.pid}`);
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** The non-empty lines of a data file, as the blaster reads them. */
export async function loadLines(path: string): Promise<Buffer[]> {
  return splitLines(await readMaybeXz(path)).filter((l) => l.length > 0);
}

/** Each JSON line re-encoded as plain msgpack (standard maps of the smallest size, no msgpackr records). */
export function msgpackLines(jsonLines: Buffer[]): Buffer[] {
  // the smallest map header, as other MessagePack libraries write it (and eddy's codec)
  const packr = new Packr({ useRecords: false, variableMapSize: true });
  return jsonLines.map((l) => Buffer.from(packr.pack(JSON.parse(l.toString('utf8')))));
}

/** Writes the msgpack version of the data, one base64 line per event, for blaster `base64: true`. */
export async function writeMsgpackData(jsonPath: string, dir: string): Promise<string> {
  const out = join(dir, 'data.msgpack.b64');
  const lines = msgpackLines(await loadLines(jsonPath));
  writeFileSync(out, lines.map((l) => l.toString('base64')).join('\n') + '\n');
  return out;
}

/** A number from the environment (`fallback` when unset); anything else than a number of at least `min` is an error naming the variable. */
export function envNumber(name: string, fallback: number, min = 0): number {
  const v = process.env[name];
  if (v === undefined || v === '') return fallback;
  const n = Number(v);
  if (!Number.isFinite(n) || n < min) throw new Error(`${name}: not a number of at least ${min}: ${v}`);
  return n;
}

/** A fresh instance of the builtin codec `name`. */
export function builtinCodec(name: string): Codec {
  const type = builtinCodecs.find((candidate) => candidate.name === name);
  if (!type) throw new Error(`no codec ${name}`);
  return type.create();
}

/**
 * The data lines with a group key added, for the windowed rows: line i of
 * `keys` is data line i mod n with `"group": "g-<i>"`, so replaying them
 * gives `keys` groups in rotation (the tumbling row: 1,000 groups).
 */
export function groupedLines(jsonLines: Buffer[], keys: number): Buffer[] {
  return Array.from({ length: keys }, (_, i) => {
    const data = JSON.parse(jsonLines[i % jsonLines.length].toString('utf8')) as Record<string, unknown>;
    return Buffer.from(JSON.stringify({ ...data, group: `g-${i}` }));
  });
}

/**
 * Small events with `keys` rolling keys, for the windowed soak: line i is
 * `{"group":"k-<i>", ...}` with aint, application and short_message of data
 * line i mod n (small, so 100,000 of them hold ~8 MB in the blaster, not 60).
 */
export function rollingKeyLines(jsonLines: Buffer[], keys: number): Buffer[] {
  return Array.from({ length: keys }, (_, i) => {
    const data = JSON.parse(jsonLines[i % jsonLines.length].toString('utf8')) as Record<string, unknown>;
    return Buffer.from(JSON.stringify({ group: `k-${i}`, aint: data.aint, application: data.application, short_message: data.short_message }));
  });
}

/** Writes derived lines to `dir/name` for the blaster; returns the path. */
export function writeLines(lines: Buffer[], dir: string, name: string): string {
  const out = join(dir, name);
  writeFileSync(out, Buffer.concat(lines.flatMap((l) => [l, Buffer.from('\n')])));
  return out;
}

/** The groups of bench/tumbling-groups.yaml and the keys of bench/soak-windows.yaml. */
export const TUMBLING_GROUPS = 1000;
export const ROLLING_KEYS = 100_000;
