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
 *
 * Each line starts with the process's RSS, V8's `heapTotal` and the memory
 * Buffers hold outside the V8 heap (`external`), then each space as
 * used/committed: RSS minus the other two is native memory (the node
 * binary, malloc), and a committed `new` space twice Node 20's is Node
 * 24+'s default (bench/README.md, "Memory on Node 24+").
 */
import { getHeapSpaceStatistics } from 'node:v8';

const MB = 1e6;
const mb = (bytes: number) => (bytes / MB).toFixed(1);
const timer = setInterval(() => {
  const { rss, heapTotal, external } = process.memoryUsage();
  const spaces = getHeapSpaceStatistics()
    .filter((space) => space.space_used_size > 0)
    .map((space) => `${space.space_name.replace(/_space$/, '')}=${mb(space.space_used_size)}/${mb(space.space_size)}MB`);
  process.stderr.write(`rss=${mb(rss)}MB heapTotal=${mb(heapTotal)}MB external=${mb(external)}MB heap ${spaces.join(' ')}\n`);
}, 1000);
timer.unref();
