/**
 * Wall-clock nanoseconds since the epoch, read from the monotonic clock so
 * that latencies measured between two readings never go backwards.
 */
const originWallNs = BigInt(Date.now()) * 1_000_000n;
const originMonoNs = process.hrtime.bigint();

export function nowNs(): bigint {
  return originWallNs + (process.hrtime.bigint() - originMonoNs);
}

export function nsToMs(ns: bigint): number {
  return Number(ns / 1_000_000n);
}
