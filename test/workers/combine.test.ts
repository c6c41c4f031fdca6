import { expect } from 'chai';
import { RampCounters, rampMetricEvents } from '../../src/connectors/_shared/ramp-metrics';
import { combineObserved, type ObservedInstance } from '../../src/runtime/observe/observe';
import { combineMetrics } from '../../src/workers/metrics';

/**
 * Workers share one udp socket (docs/workers.md), so each reports the
 * kernel's drops of that same socket: combined, the count is taken once
 * (the largest), while the workers' own counts add up.
 */
describe('combining the workers’ reports: kernel drops belong to the shared socket', () => {
  const url = '/onramp/udp/main';

  it('metric events: ramp_kernel_drops is the largest report, ramp_events the sum', () => {
    const worker = (out: number, drops: number) => {
      const counters = new RampCounters();
      counters.out = out;
      counters.kernelDrops = () => drops;
      return [{ url, events: rampMetricEvents(url, counters, 1n) }];
    };
    const [combined] = combineMetrics([worker(3, 40), worker(4, 42)]);
    const field = (measurement: string, port?: string) =>
      (
        combined.events.find((e) => e.measurement === measurement && (port === undefined || (e.tags as { port?: string }).port === port))!.fields as {
          count: number;
        }
      ).count;
    expect(field('ramp_events', 'out')).to.equal(7);
    expect(field('ramp_kernel_drops')).to.equal(42);
  });

  it('observed instances (/metrics): kernelDrops is the largest report, the port counts the sum', () => {
    const observed = (events: number, kernelDrops: number): ObservedInstance[] => [
      {
        kind: 'onramp',
        artefact: 'udp',
        instance: 'main',
        url,
        state: 'running',
        reason: null,
        breaker: 'closed',
        ports: [{ port: 'out', direction: 'out', events, errors: 0 }],
        kernelDrops,
      },
    ];
    const [combined] = combineObserved([observed(3, 40), observed(4, 42)]);
    expect(combined.ports[0].events).to.equal(7);
    expect(combined.kernelDrops).to.equal(42);
  });
});
