import type { OfframpType } from '../connector';
import { s } from '../../schema/typed';

/** debug: counts events per `$class` and prints the table to stdout every second while events arrive. */
export const debug: OfframpType<Record<string, never>> = {
  name: 'debug',
  defaultCodec: 'json',
  placement: 'every-worker', // counts per worker (docs/workers.md)
  autoAck: true,
  example: {},
  configSchema: s.object({}, { description: 'Counts events per class and prints the counts to stdout every second.' }),
  create() {
    let counts = new Map<string, number>();
    let total = 0;
    const report = () => {
      if (total === 0) return;
      const rows = [...counts].map(([c, n]) => `|${c.padEnd(20)}| ${String(n).padStart(7)}|`);
      process.stdout.write(`\n|classification      | total  |\n|TOTAL               | ${String(total).padStart(7)}|\n${rows.join('\n')}\n`);
      counts = new Map();
      total = 0;
    };
    const timer = setInterval(report, 1000);
    timer.unref();
    return {
      send(_payloads, event) {
        const cls = typeof event.meta.class === 'string' ? event.meta.class : '<unclassified>';
        counts.set(cls, (counts.get(cls) ?? 0) + 1);
        total++;
      },
      close() {
        clearInterval(timer);
        report();
      },
    };
  },
};
