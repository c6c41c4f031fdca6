/**
 * window::aggregate's saved state, against the node it was saved from:
 * restore(snapshot(s)) goes on exactly as s would, and a changelog built
 * from every takeChanges() holds what snapshot() holds (core/state.ts).
 */
import { expect } from 'chai';
import fc from 'fast-check';
import { Subject } from 'rxjs';
import type { EddyEvent, PortEvent } from '../../src/core/event';
import { compactJson } from '../../src/codecs/json/compact';
import { parsePrecise } from '../../src/codecs/json/precise-parse';
import { windowAggregateNode, type WindowAggregateConfig } from '../../src/pipeline/operators/window-aggregate';
import type { PartitionedState, StateValue } from '../../src/core/state';
import { ev, testContext, testScheduler } from './helpers';

const WINDOWS: WindowAggregateConfig['window'][] = [{ size: 10 }, { size: 20, hop: 5 }, { gap: 6 }, { count: 3 }];

function config(window: WindowAggregateConfig['window']): WindowAggregateConfig {
  return {
    window,
    time: 'event.t',
    allowed_lateness: 5,
    group_by: { k: 'event.k' },
    aggregate: {
      n: 'count()',
      sum: 'sum(event.v)',
      lo: 'min(event.v)',
      mean: 'mean(event.v)',
      sd: 'stddev(event.v)',
      p50: 'percentile(event.v, 0.5)',
      vs: 'collect(event.v)',
      ks: 'distinct(event.v)',
      first: 'first(event.v)',
      last: 'last(event.v)',
    },
  };
}

/** A node fed by hand; what it emits is collected in `outs`. */
function start(cfg: WindowAggregateConfig, restored?: Map<string, Map<string, StateValue>>) {
  const outs: PortEvent[] = [];
  const input = new Subject<EddyEvent>();
  const node = windowAggregateNode(cfg, testContext(testScheduler()));
  for (const [p, entries] of restored ?? []) node.state!.restore(p, entries);
  node.apply(input).subscribe((o) => outs.push(o));
  return { outs, input, state: node.state! };
}

/** Through eddy's JSON, as a changelog or a checkpoint file would carry it. */
const throughJson = (entries: Map<string, StateValue>) =>
  new Map([...entries].map(([k, v]) => [k, parsePrecise(compactJson(v === undefined ? null : v))] as [string, StateValue]));

const seen = (o: PortEvent) => ({ port: o.port, data: o.event.data, meta: o.event.meta, partition: o.event.partition });

function snapshotAll(state: PartitionedState): Map<string, Map<string, StateValue>> {
  return new Map(state.partitions().map((p) => [p, throughJson(state.snapshot(p))]));
}

const inputs = fc.array(
  fc.record({
    p: fc.constantFrom('t/0', 't/1', 't/2'),
    t: fc.integer({ min: 0, max: 120 }),
    k: fc.constantFrom('a', 'b', 'c'),
    v: fc.oneof(fc.integer({ min: -1000, max: 1000 }), fc.double({ min: -1e6, max: 1e6, noNaN: true, noDefaultInfinity: true })),
  }),
  { maxLength: 80 },
);

describe('window::aggregate state: snapshot and restore', () => {
  it('a node restored from a snapshot emits what the original emits from then on, for every window kind', () => {
    fc.assert(
      fc.property(inputs, fc.constantFrom(...WINDOWS), fc.nat(), (events, window, cutAt) => {
        const cut = events.length === 0 ? 0 : cutAt % (events.length + 1);
        const cfg = config(window);
        const a = start(cfg);
        events.slice(0, cut).forEach((e, i) => a.input.next(ev(i + 1, e, { partition: e.p })));
        const before = a.outs.length;
        const b = start(cfg, snapshotAll(a.state));
        events.slice(cut).forEach((e, i) => {
          a.input.next(ev(cut + i + 1, e, { partition: e.p }));
          b.input.next(ev(cut + i + 1, e, { partition: e.p }));
        });
        a.input.complete();
        b.input.complete();
        // ids differ (each node mints its own); what they say does not
        expect(b.outs.map(seen)).to.deep.equal(a.outs.slice(before).map(seen));
      }),
      { numRuns: 300 },
    );
  });

  it('a changelog of every takeChanges() holds what snapshot() holds, at every point', () => {
    fc.assert(
      fc.property(inputs, fc.constantFrom(...WINDOWS), fc.array(fc.nat(), { maxLength: 5 }), (events, window, points) => {
        const a = start(config(window));
        const changelog = new Map<string, Map<string, StateValue>>();
        const checks = new Set(points.map((p) => (events.length === 0 ? 0 : p % events.length)));
        events.forEach((e, i) => {
          a.input.next(ev(i + 1, e, { partition: e.p }));
          if (!checks.has(i)) return;
          for (const [p, changes] of a.state.takeChanges()) {
            const log = changelog.get(p) ?? new Map<string, StateValue>();
            for (const [key, value] of changes) {
              log.delete(key);
              if (value !== undefined) log.set(key, value);
            }
            changelog.set(p, log);
          }
          for (const p of a.state.partitions()) {
            expect(Object.fromEntries(throughJson(changelog.get(p) ?? new Map())), `partition ${p} after event ${i}`).to.deep.equal(
              Object.fromEntries(throughJson(a.state.snapshot(p))),
            );
          }
        });
      }),
      { numRuns: 300 },
    );
  });

  it('refuses an entry it cannot read, naming the node, the entry and why', () => {
    const cfg = config({ size: 10 });
    const node = windowAggregateNode(cfg, testContext(testScheduler(), 'w'));
    expect(() => node.apply(new Subject<EddyEvent>()).subscribe() && node.state!.restore('t/0', new Map([['f:0:a', { q: 1, f: {}, a: [] }]]))).to.throw(
      /window::aggregate node w: state entry "f:0:a": 0 accumulators saved, the config has 10 aggregate calls/,
    );
    expect(() => node.state!.restore('t/0', new Map([['g:1', { q: 1, f: {}, a: [] }]]))).to.throw(/state entry "g:1": not an entry of a tumbling window/);
    expect(() => node.state!.restore('t/0', new Map([['wm', 'soon']]))).to.throw(/state entry "wm": the watermark must be a number/);
  });
});
