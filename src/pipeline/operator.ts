import type { Observable, OperatorFunction, SchedulerLike } from '../core/rx';
import type { AnyConfig } from '../core/registry';
import type { EddyEvent, Insight, PortEvent } from '../core/event';
import type { Schema } from '../schema/typed';
import type { Logger } from '../core/logger';
import type { PartitionedState } from '../core/state';
import type { CheckpointParts } from '../core/checkpoint';

/** What an operator is created with: where it lives, its uid, the scheduler, and the way back to the sources. */
export interface OperatorContext {
  /** node id within the pipeline */
  readonly nodeId: string;
  /** URL of the pipeline instance, e.g. `/pipeline/main/01` */
  readonly pipelineUrl: string;
  /** a uid unique in the runtime; the key for `event.opMeta` entries */
  readonly uid: number;
  /** all timing goes through this, so marble tests run in virtual time */
  readonly scheduler: SchedulerLike;
  /** raise an insight towards the sources, such as trigger or restore */
  insight(insight: Insight): void;
  /**
   * The event is dropped by a rule of the node's config (`filter`: a
   * runtime::cel filter said false): the pipeline counts it per node and
   * rule and acks it to its source, so a source that waits for acks (kafka
   * commits on ack) goes on. Absent where no pipeline runs the node (a test).
   */
  drop?(event: EddyEvent, rule: string): void;
  /** for what has no event to go with it (a lookup table that failed to reload); silent when absent */
  readonly logger?: Logger;
  /** the server's `--data-dir`, when it has one: where a node keeps what must outlive the process unless its config names a place */
  readonly dataDir?: string;
}

/**
 * A node of a pipeline. `apply` turns the merged stream arriving at the node
 * into port-tagged emissions. `onInsight` sees contraflow on its way back to
 * the sources and returns the insight to pass on (possibly changed), or null
 * to swallow it.
 */
export interface OperatorNode {
  apply(input: Observable<EddyEvent>): Observable<PortEvent>;
  onInsight?(insight: Insight): Insight | null;
  /** output ports this operator can emit on, besides `out` (documentation and link checks) */
  readonly ports?: readonly string[];
  /** releases what the node holds (a store, files); awaited when the pipeline instance stops */
  stop?(): Promise<void> | void;
  /** a stateful node's state, per source partition, for the runtime to save and restore (core/state.ts) */
  readonly state?: PartitionedState;
  /**
   * A node that checkpoints what follows it (qos::wal with `guarantee:
   * exactly_once`, core/checkpoint.ts): called at activation, before the
   * sinks open and before any event flows, with the stateful nodes after it
   * and the sinks its events reach; restores them from its last checkpoint.
   */
  attachCheckpoint?(parts: CheckpointParts): Promise<void>;
}

/** An operator type, registered by name (`type: generic::batch` in a pipeline node). */
/** An operator type of any config, as registries and catalogs hold them (core/registry.ts AnyConfig). */
export type AnyOperatorType = OperatorType<AnyConfig>;

export interface OperatorType<C = Record<string, unknown>> {
  readonly name: string;
  /**
   * JSON schema of `config`, checked at publish time; unknown keys are
   * rejected. Built with schema/typed.ts, it is checked against `C`: what
   * passes it is what `create` takes.
   */
  readonly configSchema?: Schema<C, unknown>;
  /**
   * Builds one node. A 1-in-1-out operator may return a plain RxJS
   * OperatorFunction: everything it emits leaves on `out`.
   */
  create(config: C, ctx: OperatorContext): OperatorNode | OperatorFunction<EddyEvent, EddyEvent>;
  /**
   * The operator never copies an event with spread or Object.assign (it
   * forwards event objects, or makes new ones through withMeta/withError and
   * the data setter, which keep an undecoded event undecoded); it may read
   * meta and data through the accessors. Such a node gets events as they are; any other node gets
   * events whose `data` is an own property (decoded if an onramp had left
   * it undecoded, see core/lazy-event.ts), so that copying an
   * event with spread keeps its data.
   */
  readonly forwardsUnchanged?: boolean;
  /**
   * The ports a node of this type emits on besides `out`, from its config
   * alone (`duplicate`, `err`; a roundrobin's outputs): a link from any
   * other port is refused when the pipeline is published. Undefined from the
   * function: any port (a route computed from each event). A type without
   * it is checked when its node is created, against the node's `ports`.
   */
  outputPorts?(config: C): readonly string[] | undefined;
  /**
   * Configs as written that show the type, the first its plainest and each
   * other one a variant that changes its ports (`on_miss: port`): the
   * operators README lists the ports of each (`npm run docs`), and a test
   * holds `outputPorts` to the ports of the node `create` makes from each.
   */
  readonly examples?: readonly Readonly<Record<string, unknown>>[];
  /** extra checks at publish time (such as compiling an expression); throw `invalid(...)` */
  validate?(config: C, nodeId: string): void;
  /** the config makes the node checkpoint what follows it: every offramp its pipeline reaches must `joinsCheckpoints` (runtime/downstream.ts) */
  checkpoints?(config: C): boolean;
}
