import { present } from '../core/errors';
import { EMPTY, Observable, Observer, SchedulerLike, Subject, Subscription, filter, map, merge, share } from '../core/rx';
import type { EddyEvent, Insight, PortEvent } from '../core/event';
import type { Logger } from '../core/logger';
import type { TypeRegistry } from '../core/registry';
import type { ContraflowTarget } from '../contraflow/contraflow';
import type { OperatorNode, OperatorType } from './operator';
import type { PartitionedState } from '../core/state';
import { Endpoint, StoredPipeline, buildGraph, checkNodePorts } from './graph';
import { DropPoint, type NodeStats } from './accounting';
// the hot path's Subject (no allocation per event); it lives with the ramp machinery it is shared with
import { FastSubject } from '../core/fast-subject';
import { ownData } from '../core/lazy-event';

export interface PipelineContext {
  readonly url: string;
  readonly operators: TypeRegistry<OperatorType>;
  readonly scheduler: SchedulerLike;
  readonly logger: Logger;
  nextUid(): number;
  /** `--data-dir`, handed to every node (OperatorContext.dataDir) */
  readonly dataDir?: string;
}

interface CompiledNode {
  readonly id: string;
  /** the operator type's name */
  readonly type: string;
  readonly node: OperatorNode | null;
  /** all emissions, port-tagged (ported operators) */
  readonly tagged$: Observable<PortEvent> | null;
  /** emissions of a plain OperatorFunction: everything is `out` */
  readonly out$: Observable<EddyEvent> | null;
}

/**
 * One pipeline instance: the spec's graph compiled into RxJS. Each input is
 * a Subject that bindings feed; each node is an operator over the merge of
 * the streams linked into it, shared so fan-out subscribes once; each output
 * is a Subject that offramps and downstream pipelines subscribe to.
 * Contraflow runs back through the nodes' `onInsight` in reverse topological
 * order, then on to every source feeding this pipeline.
 */
export class PipelineRuntime implements ContraflowTarget {
  readonly inputs = new Map<string, Subject<EddyEvent>>();
  readonly outputs = new Map<string, Subject<EddyEvent>>();
  /** events counted per `node|direction|port`, for the pipeline metrics */
  readonly counts = new Map<string, { count: number }>();
  /** partitions released upstream, passed on once this pipeline's nodes dropped them (releasePartitions) */
  readonly partitionsReleased$ = new Subject<readonly string[]>();
  /** an upstream source stopped or started reading, passed on once this pipeline's nodes heard it (sourceReading) */
  readonly sourceReading$ = new Subject<{ source: string; reading: boolean }>();
  private readonly sources = new Set<ContraflowTarget>();
  /** the parts whose trigger this pipeline passed upstream and that have not restored yet */
  private readonly triggeredBy = new Set<string>();
  private readonly nodes: CompiledNode[] = [];
  private readonly subscription = new Subscription();
  private readonly graph: ReturnType<typeof buildGraph>;
  private readonly feeding: (to: (e: Endpoint) => boolean) => Observable<EddyEvent>;
  /** each node's drops (`''`: the interface outputs), by reason */
  private readonly drops = new Map<string, Map<string, DropPoint>>();
  private started = false;

  constructor(
    readonly artefact: StoredPipeline,
    private readonly ctx: PipelineContext,
  ) {
    const graph = buildGraph(artefact);
    for (const name of graph.inputs) this.inputs.set(name, new FastSubject<EddyEvent>());
    // an output no binding links drops what reaches it: counted, logged and acked like an unlinked node port
    const unwired = this.dropper('');
    for (const name of graph.outputs) this.outputs.set(name, new OutputSubject((e) => unwired(e, `unlinked:${name}`, this.nodes.length - 1)));

    const compiled = new Map<string, CompiledNode>();
    // Counting happens in the subject that already multicasts each input and
    // node port, once per event, weighted by the edges leaving that port (the
    // count the metrics report per edge): no extra operator layer per edge.
    const edgesFromInput = (name: string) => graph.edges.filter((e) => e.from.kind === 'input' && e.from.name === name).length;
    const edgesFromNode = (id: string, port: string) => graph.edges.filter((e) => e.from.kind === 'node' && e.from.id === id && e.from.port === port).length;
    for (const name of graph.inputs) {
      const weight = edgesFromInput(name);
      if (weight > 0) this.inputs.set(name, new CountingSubject(this.counter('in', 'output', name), weight));
    }
    const countedShare = (id: string, port: string) =>
      share<EddyEvent>({ connector: () => new CountingSubject(this.counter(id, 'output', port), edgesFromNode(id, port)) });
    /** per ported node, one shared stream per linked port, so each port is filtered and counted once */
    const portStreams = new Map<string, Observable<EddyEvent>>();
    const streamOf = (from: Endpoint): Observable<EddyEvent> => {
      // every input has its subject (set above) and every linked node is compiled (graph order)
      if (from.kind === 'input') return present(this.inputs.get(from.name), `input '${from.name}'`);
      if (from.kind !== 'node') throw new Error('an output cannot feed a link');
      const node = present(compiled.get(from.id), `node '${from.id}'`);
      if (node.out$) return from.port === 'out' ? node.out$ : EMPTY;
      const key = `${from.id}|${from.port}`;
      let stream = portStreams.get(key);
      if (!stream) {
        // a node emits on out$ or, ported, on tagged$
        stream = present(node.tagged$, `the ports of node '${from.id}'`).pipe(
          filter((pe) => pe.port === from.port),
          map((pe) => pe.event),
          countedShare(from.id, from.port),
        );
        portStreams.set(key, stream);
      }
      return stream;
    };
    const feeding = (to: (e: Endpoint) => boolean) => {
      const streams = graph.edges.filter((e) => to(e.to)).map((e) => streamOf(e.from));
      return streams.length === 1 ? streams[0] : merge(...streams);
    };

    /** each node's ports besides `out`, from its type (or the node a type made, when the type does not say) */
    const ports = new Map<string, readonly string[] | undefined>();
    for (const id of graph.order) {
      const spec = present(
        artefact.nodes.find((n) => n.id === id),
        `node '${id}'`,
      );
      const type = ctx.operators.get(spec.type, `nodes.${id}.type`);
      const position = this.nodes.length;
      const drop = this.dropper(id);
      const made = type.create(spec.config ?? {}, {
        nodeId: id,
        pipelineUrl: ctx.url,
        uid: ctx.nextUid(),
        scheduler: ctx.scheduler,
        logger: ctx.logger,
        dataDir: ctx.dataDir,
        // an operator's own insight starts at the nodes before it, as if it came from downstream of them
        insight: (insight) => this.runContraflow(insight, position - 1),
        drop: (event, rule) => drop(event, rule, position - 1),
      });
      ports.set(id, type.outputPorts?.(spec.config ?? {}) ?? (typeof made === 'function' ? [] : made.ports));
      const fed$ = feeding((to) => to.kind === 'node' && to.id === id);
      // an operator that may read data gets events whose data is an own property, safe to spread
      const input$ = type.forwardsUnchanged ? fed$ : fed$.pipe(map(ownData));
      const node: CompiledNode =
        typeof made === 'function'
          ? { id, type: spec.type, node: null, tagged$: null, out$: made(input$).pipe(edgesFromNode(id, 'out') > 0 ? countedShare(id, 'out') : fastShare()) }
          : { id, type: spec.type, node: made, tagged$: made.apply(input$).pipe(fastShare<PortEvent>()), out$: null };
      compiled.set(id, node);
      this.nodes.push(node);
    }
    // a type that did not say its ports at publish is held to what its node says now, before anything runs
    checkNodePorts(artefact, (id) => ports.get(id));
    this.graph = graph;
    this.feeding = feeding;
  }

  /**
   * Starts the nodes. The runtime calls it once the offramps and downstream
   * pipelines are connected and before the onramps are, so that what a node
   * emits at once (a WAL replaying after a restart) reaches its sinks.
   */
  start(): void {
    if (this.started) return;
    this.started = true;
    const { graph, feeding, ctx } = this;
    for (const [name, subject] of this.outputs) {
      const edges = graph.edges.filter((e) => e.to.kind === 'output' && e.to.name === name);
      if (edges.length > 0) this.subscription.add(feeding((to) => to.kind === 'output' && to.name === name).subscribe(subject));
    }
    // Keep every node running even when none of its ports is linked, so
    // stateful operators (batch timers, the WAL) behave the same either way.
    for (const [position, node] of this.nodes.entries()) {
      // what a node emits on a port no link takes (a window's `late`, a cel `err`) is not lost unseen:
      // counted (direction `unlinked`), logged, and acked to its source (docs/delivery.md#every-event-is-accounted-for)
      const unlinked = this.unlinked(node.id, position);
      const error = (err: unknown) => ctx.logger.error(`Pipeline ${ctx.url} node ${node.id} failed: ${(err as Error).message}`);
      if (node.tagged$) this.subscription.add(node.tagged$.subscribe({ next: (pe) => unlinked(pe.port, pe.event), error }));
      else {
        const linked = this.graph.edges.some((e) => e.from.kind === 'node' && e.from.id === node.id);
        this.subscription.add(present(node.out$, `the output of node '${node.id}'`).subscribe({ next: linked ? undefined : (e) => unlinked('out', e), error }));
      }
    }
  }

  get url(): string {
    return this.ctx.url;
  }

  /** The output ports some link feeds: only these ever emit or complete. */
  linkedOutputs(): string[] {
    return [...this.outputs.keys()].filter((name) => this.graph.edges.some((e) => e.to.kind === 'output' && e.to.name === name));
  }

  /**
   * Events through each interface port so far: inputs (`in`) as they
   * entered, outputs (`out`) as they left. Derived at call time from the
   * edge-weighted `counts` and the graph, so counting stays one addition per
   * port on the hot path.
   */
  portCounts(): { port: string; direction: 'in' | 'out'; events: number }[] {
    const { edges } = this.graph;
    const ports: { port: string; direction: 'in' | 'out'; events: number }[] = [];
    for (const name of this.graph.inputs) ports.push({ port: name, direction: 'in', events: this.eventsFrom({ kind: 'input', name }) });
    for (const name of this.graph.outputs) {
      const feeding = edges.filter((e) => e.to.kind === 'output' && e.to.name === name);
      ports.push({ port: name, direction: 'out', events: feeding.reduce((sum, e) => sum + this.eventsFrom(e.from), 0) });
    }
    return ports;
  }

  /** The observer a binding subscribes to feed an input port. */
  input(port: string): Observer<EddyEvent> {
    const subject = this.inputs.get(port);
    if (!subject) throw new Error(`pipeline ${this.url} has no input port '${port}'`);
    // a source completing must not complete the shared input: other sources may still feed it
    return { next: (e) => subject.next(e), error: () => undefined, complete: () => undefined };
  }

  output(port: string): Subject<EddyEvent> {
    const subject = this.outputs.get(port);
    if (!subject) throw new Error(`pipeline ${this.url} has no output port '${port}'`);
    return subject;
  }

  /** A source connects: it learns at once of every trigger still in force downstream (it missed them). */
  addSource(source: ContraflowTarget): void {
    this.sources.add(source);
    for (const from of this.triggeredBy) source.contraflow({ kind: 'trigger', from });
  }

  /** A source goes: the triggers it was told of no longer concern it. */
  removeSource(source: ContraflowTarget): void {
    if (!this.sources.delete(source)) return;
    for (const from of this.triggeredBy) source.contraflow({ kind: 'restore', from });
  }

  /** Contraflow arriving from an offramp or a downstream pipeline. */
  contraflow(insight: Insight): void {
    this.runContraflow(insight, this.nodes.length - 1);
  }

  /** Completes the inputs: operators flush what they hold (a batch) downstream, then complete. */
  drain(): void {
    for (const subject of this.inputs.values()) subject.complete();
  }

  /** The pipelines feeding this one. */
  upstreamPipelines(): PipelineRuntime[] {
    return [...this.sources].filter((s): s is PipelineRuntime => s instanceof PipelineRuntime);
  }

  /** The nodes that keep state per source partition, by node id (a transactional source saves and restores them). */
  statefulNodes(): { node: string; state: PartitionedState }[] {
    return this.nodes.flatMap(({ id, node }) => (node?.state ? [{ node: id, state: node.state }] : []));
  }

  /** The nodes that checkpoint what follows them (a qos::wal with `guarantee: exactly_once`), with the stateful nodes after each. */
  checkpointingNodes(): { node: string; attach: NonNullable<OperatorNode['attachCheckpoint']>; after: { node: string; state: PartitionedState }[] }[] {
    return this.nodes.flatMap(({ id, node }) => {
      if (!node?.attachCheckpoint) return [];
      const reached = this.nodesAfter(id);
      const after = this.statefulNodes().filter((s) => reached.has(s.node));
      return [{ node: id, attach: node.attachCheckpoint.bind(node), after }];
    });
  }

  /** The ids of the nodes reachable from node `id` through the pipeline's links (not `id` itself, unless in a cycle). */
  private nodesAfter(id: string): Set<string> {
    const seen = new Set<string>();
    const queue = [id];
    for (let at = queue.shift(); at !== undefined; at = queue.shift()) {
      for (const { from, to } of this.graph.edges) {
        if (from.kind === 'node' && from.id === at && to.kind === 'node' && !seen.has(to.id)) {
          seen.add(to.id);
          queue.push(to.id);
        }
      }
    }
    return seen;
  }

  /**
   * Source partitions another process reads from now on: every stateful
   * node drops its state of them (without emitting it), then the pipelines
   * this one feeds do the same (`partitionsReleased$`).
   */
  releasePartitions(partitions: readonly string[]): void {
    for (const { node } of this.nodes) {
      if (node?.state) for (const partition of partitions) node.state.release(partition);
    }
    this.partitionsReleased$.next(partitions);
  }

  /**
   * Source `source` upstream stopped (`false`) or started reading: the
   * stateful nodes stop or restart the clocks that measure their
   * partitions' silence, then the pipelines this one feeds do the same.
   */
  sourceReading(source: string, reading: boolean): void {
    for (const { node } of this.nodes) node?.state?.sourceReading?.(source, reading);
    this.sourceReading$.next({ source, reading });
  }

  /** Stops every node and waits for nodes holding resources (the WAL's store) to release them. */
  async stop(): Promise<void> {
    this.subscription.unsubscribe();
    for (const subject of this.outputs.values()) subject.complete();
    await Promise.all(this.nodes.map((n) => Promise.resolve(n.node?.stop?.())));
  }

  /** Runs an insight back through the nodes from `from` down to the first (reverse topological order), then to the sources. */
  private runContraflow(insight: Insight, from: number): void {
    let current: Insight | null = insight;
    for (let i = from; i >= 0 && current; i--) {
      const node = this.nodes[i].node;
      if (node?.onInsight) current = node.onInsight(current);
    }
    if (current) this.forward(current);
  }

  private forward(insight: Insight): void {
    if (insight.kind === 'trigger') this.triggeredBy.add(insight.from);
    if (insight.kind === 'restore') this.triggeredBy.delete(insight.from);
    for (const source of this.sources) source.contraflow(insight);
  }

  /** What to do with a node's emission on a port: nothing when a link takes it; else drop it as `unlinked:<port>`. */
  private unlinked(id: string, position: number): (port: string, event: EddyEvent) => void {
    const linked = new Set(this.graph.edges.flatMap((e) => (e.from.kind === 'node' && e.from.id === id ? [e.from.port] : [])));
    const drop = this.dropper(id);
    return (port, event) => {
      if (!linked.has(port)) drop(event, `unlinked:${port}`, position);
    };
  }

  /**
   * How events are dropped at a node (`''`: an interface output no binding
   * links): each is counted (and, on a port no link takes, logged) at its
   * `DropPoint`, made once per reason, and acked to its source back through
   * the nodes from `position`: it was handled, as the config says (a
   * filter), or as it failed to say (a port left unlinked), and a source
   * that waits for acks (kafka commits) goes on.
   */
  private dropper(node: string): (event: EddyEvent, reason: string, position: number) => void {
    let points = this.drops.get(node);
    if (!points) this.drops.set(node, (points = new Map<string, DropPoint>()));
    const from = node === '' ? this.ctx.url : `${this.ctx.url}/${node}`;
    return (event, reason, position) => {
      let point = points.get(reason);
      if (!point) points.set(reason, (point = this.dropPoint(node, reason)));
      point.note(event);
      if (event.transactional) this.runContraflow({ kind: 'ack', event, from }, position);
    };
  }

  private dropPoint(node: string, reason: string): DropPoint {
    const unlinked = reason.startsWith('unlinked:');
    const port = unlinked ? reason.slice('unlinked:'.length) : reason;
    const counter = this.counter(node === '' ? 'out' : node, unlinked ? 'unlinked' : 'dropped', port);
    const where = !unlinked ? undefined : node === '' ? `output '${port}' of the pipeline` : `node '${node}' emitted on port '${port}'`;
    return new DropPoint(counter, where, this.ctx.url, this.ctx.logger, this.ctx.scheduler);
  }

  /** A node's drops (or, `''`, the interface outputs'), by reason. */
  private droppedAt(node: string): Record<string, number> {
    const dropped: Record<string, number> = {};
    for (const [reason, point] of this.drops.get(node) ?? []) dropped[reason] = point.counter.count;
    return dropped;
  }

  /** Events that left an input or a node port, from the edge-weighted counts (one per edge leaving it). */
  private eventsFrom(from: Endpoint): number {
    const key = portKey(from);
    const weight = this.graph.edges.filter((e) => portKey(e.from) === key).length;
    return weight === 0 ? 0 : (this.counts.get(key)?.count ?? 0) / weight;
  }

  /** Per node: events in, out on each linked port, and dropped by reason (see `NodeStats`). */
  nodeStats(): NodeStats[] {
    return this.nodes.map(({ id, type, node }) => {
      const feeding = this.graph.edges.filter((e) => e.to.kind === 'node' && e.to.id === id);
      const out: Record<string, number> = {};
      for (const e of this.graph.edges) if (e.from.kind === 'node' && e.from.id === id) out[e.from.port] = this.eventsFrom(e.from);
      const stats: NodeStats = { node: id, type, in: feeding.reduce((sum, e) => sum + this.eventsFrom(e.from), 0), out, dropped: this.droppedAt(id) };
      if (node?.state) {
        stats.partitions = node.state.partitions();
        const watermarks = node.state.watermarks?.();
        if (watermarks && Object.keys(watermarks).length > 0) stats.watermarks = watermarks;
      }
      return stats;
    });
  }

  /** Events dropped at an interface output no binding links, by `unlinked:<output>`. */
  unwiredDrops(): Record<string, number> {
    return this.droppedAt('');
  }

  private counter(node: string, direction: string, port: string): { count: number } {
    const key = `${node}|${direction}|${port}`;
    let counter = this.counts.get(key);
    if (!counter) this.counts.set(key, (counter = { count: 0 }));
    return counter;
  }
}

/** The `counts` key of the events leaving an input or a node port (`in|output|<input>`, `<node>|output|<port>`). */
function portKey(from: Endpoint): string {
  return from.kind === 'input' ? `in|output|${from.name}` : from.kind === 'node' ? `${from.id}|output|${from.port}` : '';
}

/**
 * An interface output: what reaches it while no binding links it (nothing
 * observes it) is handed to `unwired` (dropped, counted, logged, acked)
 * instead of vanishing.
 */
class OutputSubject extends FastSubject<EddyEvent> {
  constructor(private readonly unwired: (event: EddyEvent) => void) {
    super();
  }

  override next(value: EddyEvent): void {
    if (!this.observed && !this.stopped) this.unwired(value);
    else super.next(value);
  }
}

function fastShare<T = EddyEvent>() {
  return share<T>({ connector: () => new FastSubject<T>() });
}

/** A Subject that counts what passes through it: `weight` per event (one per edge it feeds). */
class CountingSubject extends FastSubject<EddyEvent> {
  constructor(
    private readonly counter: { count: number },
    private readonly weight: number,
  ) {
    super();
  }

  override next(value: EddyEvent): void {
    this.counter.count += this.weight;
    super.next(value);
  }
}
