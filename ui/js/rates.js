// Rates from GET /status's cumulative counts: the difference of two polls
// divided by the time between them. Each view that shows rates keeps its own
// baseline, so a view drawn less often still divides by its own interval.

// a poll sooner than this after the baseline (one an action triggered) updates the totals, not the rates
const MIN_RATE_SECONDS = 0.8;

/** `/kind/artefact/instance#direction:port`: one port's counts in a /status answer */
export const portKey = (path, port) => `${path}#${port.direction}:${port.port}`;

export class Rates {
  #baseline; // { at, counts: Map<key, {events, errors}> }

  /**
   * Takes one /status answer's counts. `rerate` is false when it came too
   * soon after the baseline: keep the rates shown, they would be noise.
   * `rate(key, field)` is a number per second, or undefined when there is no
   * baseline for the key (a port that just appeared, a counter that went back).
   */
  sample(counts) {
    const at = performance.now();
    const before = this.#baseline;
    const seconds = before ? (at - before.at) / 1000 : 0;
    const rerate = before === undefined || seconds >= MIN_RATE_SECONDS;
    if (rerate) this.#baseline = { at, counts };
    return {
      rerate,
      rate(key, field = 'events') {
        const then = before?.counts.get(key)?.[field];
        const now = counts.get(key)?.[field];
        if (then === undefined || now === undefined || seconds <= 0 || now < then) return undefined;
        return (now - then) / seconds;
      },
    };
  }
}

/** The counts of every port in a /status answer, by `portKey`. */
export function countsOf(status, pathOf) {
  const counts = new Map();
  for (const instance of status.instances) {
    for (const port of instance.ports) counts.set(portKey(pathOf(instance), port), { events: port.events, errors: port.errors });
  }
  return counts;
}

/** A rate as the console shows it: one decimal, `-` when unknown. */
export const formatRate = (rate) => (rate === undefined ? '-' : rate.toFixed(1));
