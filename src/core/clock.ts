/**
 * Wall-clock nanoseconds since the epoch, read from the monotonic clock so
 * that latencies measured between two readings never go backwards.
 */
const originWallNs = BigInt(Date.now()) * 1_000_000n;
const originMonoNs = process.hrtime.bigint();
const originSec = Number(originMonoNs / 1_000_000_000n);
const originNsec = Number(originMonoNs % 1_000_000_000n);
/** wall minus monotonic origin, so a reading is one BigInt addition (called per event: one BigInt made fewer) */
const monoToWallNs = originWallNs - originMonoNs;

export function nowNs(): bigint {
  return process.hrtime.bigint() + monoToWallNs;
}

/**
 * The same clock as `nowNs`, as a plain number of nanoseconds since this
 * module loaded: no BigInt is made, for per-event arithmetic on the hot
 * path (exact while below 2^53 ns, about 104 days).
 */
export function monoNs(): number {
  const t = process.hrtime();
  return (t[0] - originSec) * 1e9 + (t[1] - originNsec);
}

/** A `nowNs` reading (such as an event's `ingestNs`) on the `monoNs` scale. */
export function toMonoNs(ns: bigint): number {
  return Number(ns - originWallNs);
}
