/**
 * "Did you mean" for a misspelled key or name: the candidate nearest to what
 * was written, by edit distance, when it is near enough to be a typo rather
 * than another word.
 */

/** The Levenshtein distance of `a` and `b` (insertions, deletions and substitutions, each 1), or `limit + 1` once it exceeds `limit`. */
export function editDistance(a: string, b: string, limit = Infinity): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    let best = i;
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
      best = Math.min(best, current[j]);
    }
    // every later row is at least this row's least value: stop once that is past the limit
    if (best > limit) return limit + 1;
    previous = current;
  }
  return previous[b.length];
}

/**
 * The candidate `written` is most likely a typo of: the nearest within a
 * third of its length (at least 1, at most 3 edits), case ignored; none when
 * two are equally near or `written` is itself a candidate.
 */
export function closest(written: string, candidates: Iterable<string>): string | undefined {
  if (written.length > 64) return undefined; // no key that long is a typo of a short one, and the distance would cost its square
  const word = written.toLowerCase();
  const limit = Math.min(3, Math.max(1, Math.floor(written.length / 3)));
  let best: string | undefined;
  let bestDistance = limit + 1;
  let tie = false;
  for (const candidate of candidates) {
    if (candidate === written) return undefined;
    const d = editDistance(word, candidate.toLowerCase(), limit);
    if (d < bestDistance) [best, bestDistance, tie] = [candidate, d, false];
    else if (d === bestDistance && d <= limit && candidate !== best) tie = true;
  }
  return tie ? undefined : best;
}

/**
 * ` (did you mean 'x'?)`, or nothing when no candidate is near. A name
 * written without its namespace (`batch` for `generic::batch`) is near the
 * one candidate it ends.
 */
export function didYouMean(written: string, candidates: Iterable<string>): string {
  const list = [...candidates];
  const namespaced = list.filter((c) => c.endsWith(`::${written}`));
  const near = closest(written, list) ?? (namespaced.length === 1 && !written.includes('::') ? namespaced[0] : undefined);
  return near === undefined ? '' : ` (did you mean '${near}'?)`;
}
