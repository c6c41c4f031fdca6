/**
 * A preload (`node -r dist/bench/heap-spaces.js ...`) that prints the used
 * size of each V8 heap space to stderr once a second: a steadily growing
 * `old` in a flow whose live data stays small is garbage allocated in (or
 * promoted to) the old space, as grouper::bucket's Map-based LRU once made
 * (bench/README.md, "The cel flow's extra memory"). Prints figures, asserts
 * nothing.
 *
 *   sed -e "s#\${DATA}#$PWD/bench/data/data.json.xz#" -e 's/\${WARMUP}/1/' -e 's/\${SECS}/5/' \
 *     bench/real-workflow.yaml > /tmp/wc.yaml
 *   node -r ./dist/bench/heap-spaces.js bin/eddy server run -f /tmp/wc.yaml --no-api >/dev/null
 */
import { getHeapSpaceStatistics } from 'node:v8';

const MB = 1e6;
const timer = setInterval(() => {
  const spaces = getHeapSpaceStatistics()
    .filter((space) => space.space_used_size > 0)
    .map((space) => `${space.space_name.replace(/_space$/, '')}=${(space.space_used_size / MB).toFixed(1)}MB`);
  process.stderr.write(`heap ${spaces.join(' ')}\n`);
}, 1000);
timer.unref();
