/**
 * Full jitter for every back-off and retry (docs/delivery.md, "Retries"):
 * each delay is drawn evenly from (0, cap], where cap is what the
 * exponential back-off would wait. Processes that failed together (the
 * workers of `--workers N`, the members of a consumer group, every client
 * of a broker that restarted) then spread their attempts instead of
 * retrying on the same beat; full jitter is the variant that spreads them
 * most for the least total wait (Brooker, "Exponential Backoff And Jitter",
 * AWS Architecture Blog, 2015).
 */

/** A source of numbers in [0, 1): `Math.random`, or a fixed one in tests. */
export type Random = () => number;

/** No jitter: every delay is its cap (tests that check delays exactly, and users who ask for `jitter: false`). */
export const NO_JITTER: Random = () => 0;

/**
 * For a retry loop with a fixed count and no user setting (the kafka
 * client's): a delay in [cap, 1.5 cap], jittered upwards, so the count still
 * covers at least as long an outage as without jitter (full jitter would
 * halve it on average, and a broker restart could outlast it).
 */
export function upwardJitter(capMs: number, random: Random = Math.random): number {
  return capMs + Math.floor((capMs * random()) / 2);
}

/** A delay in (0, cap] ms, whole milliseconds, never 0 (a 0 would retry in a tight loop). */
export function fullJitter(capMs: number, random: Random = Math.random): number {
  return Math.max(1, Math.ceil(capMs * (1 - random())));
}
