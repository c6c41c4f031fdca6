import { expect } from 'chai';
import fc from 'fast-check';
import type { TestScheduler } from 'rxjs/testing';
import type { EddyEvent, Insight } from '../../src/core/event';
import type { Logger } from '../../src/core/logger';
import { DROP_LOG_INTERVAL_MS } from '../../src/pipeline/accounting';
import type { StoredPipeline } from '../../src/pipeline/graph';
import { PipelineRuntime } from '../../src/pipeline/pipeline';
import { Registries } from '../../src/runtime/registries';
import { ev, testScheduler } from '../helpers';

/** A logger that keeps its warnings. */
function recordingLogger(): Logger & { warnings: string[] } {
  const warnings: string[] = [];
  const none = () => undefined;
  return { warnings, debug: none, info: none, error: none, warn: (msg: string) => void warnings.push(msg) };
}

/** A started pipeline whose insights towards its sources are collected in `insights`. */
function pipeline(artefact: StoredPipeline, scheduler: TestScheduler, logger: Logger = recordingLogger()) {
  let uid = 1000;
  const p = new PipelineRuntime(artefact, {
    url: '/pipeline/acc/one',
    operators: Registries.withBuiltins().operators,
    scheduler,
    logger,
    nextUid: () => ++uid,
  });
  const insights: Insight[] = [];
  p.addSource({ url: '/onramp/src/one', contraflow: (i) => void insights.push(i) });
  p.start();
  return { p, insights };
}

const tx = (seq: number, data: unknown): EddyEvent => ev(1, seq, data, { transactional: true });
const acked = (insights: Insight[]) => insights.filter((i) => i.kind === 'ack').map((i) => i.event!.id.seq);

describe('pipeline accounting: every event that reaches a node leaves on a port or is counted as dropped', () => {
  let scheduler: TestScheduler;
  beforeEach(() => (scheduler = testScheduler()));

  it('a runtime::cel filter drops by its rule: counted as dropped filter, acked to the source, not logged', () => {
    const logger = recordingLogger();
    const { p, insights } = pipeline(
      {
        id: 'f',
        interface: { inputs: ['in'], outputs: ['out'] },
        nodes: [{ id: 'keep', type: 'runtime::cel', config: { filter: 'event.n > 1' } }],
        links: { in: ['keep'], keep: ['out'] },
      },
      scheduler,
      logger,
    );
    const outs: unknown[] = [];
    p.output('out').subscribe((e) => outs.push(e.data));
    for (const [seq, n] of [1, 2, 3, 0].entries()) p.input('in').next(tx(seq + 1, { n }));
    expect(outs).to.deep.equal([{ n: 2 }, { n: 3 }]);
    expect(acked(insights)).to.deep.equal([1, 4]);
    expect(p.nodeStats()).to.deep.equal([{ node: 'keep', type: 'runtime::cel', in: 4, out: { out: 2 }, dropped: { filter: 2 } }]);
    expect(logger.warnings).to.deep.equal([]);
  });

  it('an event on a port no link takes (a cel err) is counted per node and port, acked, and logged once with its error, then once a minute', () => {
    const logger = recordingLogger();
    const { p, insights } = pipeline(
      {
        id: 'e',
        interface: { inputs: ['in'], outputs: ['out'] },
        nodes: [{ id: 'route', type: 'runtime::cel', config: { set: { y: 'event.x + 1' } } }],
        links: { in: ['route'], route: ['out'] },
      },
      scheduler,
      logger,
    );
    p.output('out').subscribe(() => undefined);
    scheduler.run(({ cold, expectObservable }) => {
      // three bad events at 0, 1 and 2 ms, one more a minute later
      const feed = cold(`abc ${DROP_LOG_INTERVAL_MS}ms d`, { a: tx(1, {}), b: tx(2, {}), c: tx(3, { x: 1 }), d: tx(4, {}) });
      feed.subscribe((e) => p.input('in').next(e));
      expectObservable(feed).toBe(`abc ${DROP_LOG_INTERVAL_MS}ms d`, { a: tx(1, {}), b: tx(2, {}), c: tx(3, { x: 1 }), d: tx(4, {}) });
    });
    expect(acked(insights)).to.deep.equal([1, 2, 4]);
    expect(p.nodeStats()[0]).to.deep.include({ in: 4, out: { out: 1 }, dropped: { 'unlinked:err': 3 } });
    expect(logger.warnings).to.have.length(2);
    expect(logger.warnings[0]).to.match(
      /^pipeline \/pipeline\/acc\/one: node 'route' emitted on port 'err', which no link takes: the event is dropped and acked to its source \(error: runtime::cel node route: set\.y: .*\)/,
    );
    expect(logger.warnings[1]).to.equal("pipeline /pipeline/acc/one: node 'route' emitted on port 'err': 2 more events dropped since the last line");
  });

  it('an interface output no binding links drops what reaches it: counted, acked, logged', () => {
    const logger = recordingLogger();
    const { p, insights } = pipeline(
      {
        id: 'o',
        interface: { inputs: ['in'], outputs: ['out'] },
        nodes: [{ id: 'pass', type: 'passthrough' }],
        links: { in: ['pass'], pass: ['out'] },
      },
      scheduler,
      logger,
    );
    p.input('in').next(tx(1, 'a'));
    expect(acked(insights)).to.deep.equal([1]);
    expect(p.unwiredDrops()).to.deep.equal({ 'unlinked:out': 1 });
    expect(logger.warnings[0]).to.match(/^pipeline \/pipeline\/acc\/one: output 'out' of the pipeline, which no link takes/);
    // once linked, nothing more is dropped there
    const outs: unknown[] = [];
    p.output('out').subscribe((e) => outs.push(e.data));
    p.input('in').next(tx(2, 'b'));
    expect(outs).to.deep.equal(['b']);
    expect(acked(insights)).to.deep.equal([1]);
  });

  it('a link from a port its node does not have is refused when the pipeline is built, naming the node, the port and its ports', () => {
    expect(() =>
      pipeline(
        {
          id: 'typo',
          interface: { inputs: ['in'], outputs: ['out'] },
          nodes: [{ id: 'once', type: 'generic::dedupe', config: { key: 'event.id' } }],
          links: { in: ['once'], once: ['out'], 'once/dupes': ['out'] },
        },
        scheduler,
      ),
    ).to.throw("links.once/dupes: node 'once' (generic::dedupe) has no output port 'dupes' (ports: out, duplicate, err)");
  });

  /**
   * Random pipelines of nodes that emit at most one event per event they
   * take (cel filters, routes to linked and unlinked ports, errors, dedupe,
   * sample, passthrough), with random links: for every node, in = the sum
   * of out + the sum of dropped; and every transactional event that went
   * into the pipeline left on a linked output or was acked by it.
   */
  it('property: in = out + dropped at every node of random pipelines, and no event vanishes', () => {
    const nodeKinds = [
      { type: 'passthrough', ports: ['out'] },
      { type: 'runtime::cel', config: { filter: 'event.n % 3 != 0' }, ports: ['out', 'err'] },
      { type: 'runtime::cel', config: { route: 'event.n % 2 == 0 ? "even" : "out"' }, ports: ['out', 'even', 'err'] },
      { type: 'runtime::cel', config: { set: { y: 'event.n / (event.n % 4)' } }, ports: ['out', 'err'] },
      { type: 'generic::dedupe', config: { key: 'event.n % 5' }, ports: ['out', 'duplicate', 'err'] },
      { type: 'generic::sample', config: { one_in: 2 }, ports: ['out', 'dropped', 'err'] },
    ];
    const arbitraryPipeline = fc
      .array(fc.record({ kind: fc.nat(nodeKinds.length - 1), linkMask: fc.nat(7), target: fc.nat(100) }), { minLength: 1, maxLength: 6 })
      .map((specs) => {
        const nodes = specs.map((s, i) => ({ id: `n${i}`, ...nodeKinds[s.kind] }));
        const links: Record<string, string[]> = { in: ['n0'] };
        for (const [i, s] of specs.entries()) {
          nodes[i].ports.forEach((port, bit) => {
            if ((s.linkMask & (1 << bit)) === 0) return; // this port stays unlinked
            // to a later node (the graph stays acyclic) or to the output
            const later = specs.length - i - 1;
            const to = later > 0 && s.target % 3 !== 0 ? `n${i + 1 + (s.target % later)}` : 'out';
            (links[port === 'out' ? nodes[i].id : `${nodes[i].id}/${port}`] ??= []).push(to);
          });
        }
        return {
          id: 'random',
          interface: { inputs: ['in'], outputs: ['out'] },
          nodes: nodes.map(({ id, type, config }) => ({ id, type, ...(config ? { config } : {}) })),
          links,
        } satisfies StoredPipeline;
      });
    fc.assert(
      fc.property(arbitraryPipeline, fc.array(fc.integer({ min: 0, max: 20 }), { maxLength: 40 }), (artefact, values) => {
        const { p, insights } = pipeline(artefact, testScheduler());
        const delivered = new Set<number>();
        p.output('out').subscribe((e) => delivered.add(e.id.seq));
        values.forEach((n, i) => p.input('in').next(tx(i + 1, { n })));
        for (const stats of p.nodeStats()) {
          const sum = (c: Record<string, number>) => Object.values(c).reduce((a, b) => a + b, 0);
          expect(stats.in, `${stats.node}: ${JSON.stringify(stats)}`).to.equal(sum(stats.out) + sum(stats.dropped));
        }
        const ackedSeqs = new Set(acked(insights));
        const vanished = values.map((_, i) => i + 1).filter((seq) => !delivered.has(seq) && !ackedSeqs.has(seq));
        expect(vanished, JSON.stringify(artefact.links)).to.deep.equal([]);
      }),
      { numRuns: 150, seed: 33 },
    );
  });
});
