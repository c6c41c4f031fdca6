/**
 * Waits until `done()` holds, for as long as `count()` keeps growing: it
 * fails when the count has not grown for `stallMs` (nothing arrives any
 * more) or, at the latest, after `maxMs`. A loaded machine only makes the
 * wait longer, where one fixed timeout for a whole flow would fail it; a flow
 * that stopped still fails, `stallMs` after its last event, saying what was
 * awaited and, from `state`, what the flow looked like then.
 */
export async function whileArriving(
  count: () => number,
  done: () => boolean,
  what: string,
  { stallMs = 60_000, maxMs = 600_000, state = () => '' }: { stallMs?: number; maxMs?: number; state?: () => string } = {},
): Promise<void> {
  const start = Date.now();
  let last = count();
  let grown = start;
  while (!done()) {
    const now = Date.now();
    const n = count();
    if (n !== last) [last, grown] = [n, now];
    const why = now - grown >= stallMs ? `nothing new for ${stallMs} ms` : now - start >= maxMs ? `still arriving after ${maxMs} ms` : undefined;
    if (why) throw new Error(`waiting for ${what}: ${why} (have ${n})${state() ? `; ${state()}` : ''}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
