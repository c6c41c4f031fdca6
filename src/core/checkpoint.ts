/**
 * Checkpoints without Kafka (docs/design-exactly-once.md §6): a `qos::wal`
 * with `guarantee: exactly_once` saves, in one write to its own store, how
 * far it has read its log, the state of every stateful node after it, and
 * how long every file its flow writes is. After a crash the flow goes on
 * from that checkpoint: the state comes back, the files are cut back to
 * those lengths, and the log is read again from there; what was done
 * after the checkpoint is done again, once.
 *
 * These types sit in core because both sides use them: the WAL (pipeline)
 * drives the checkpoint, and the sinks (connectors) take part in it.
 */
import type { PartitionedState } from './state';

/** What a sink offers a checkpointing WAL (the file offramp): its length, and a way back to a saved one. */
export interface CheckpointedSink {
  /**
   * Before the sink opens (`Sink.commit`): the length its output had at the
   * last checkpoint, from which it goes on (cutting off what was written
   * after it); `undefined` when there is no checkpoint yet: it opens as it
   * would without one (a file offramp truncates, or appends).
   */
  resumeAt(length: number | undefined): void;
  /** Once every event it was given is written: the length of its output now, which the checkpoint saves. */
  position(): Promise<number>;
  /** While running, after a failure: cuts its output back to a saved length and writes on from there. */
  rewind(length: number): Promise<void>;
}

/** What a checkpointing WAL's events reach, found by the runtime at activation (runtime/downstream.ts). */
export interface CheckpointParts {
  /** the stateful nodes after the WAL: in its pipeline, and in the pipelines its outputs feed */
  readonly stateful: readonly { readonly pipeline: string; readonly node: string; readonly state: PartitionedState }[];
  /** every offramp its events reach: each must take part (`Sink.checkpointed`), checked before anything opens */
  readonly sinks: readonly { readonly url: string; readonly type: string; readonly sink: CheckpointedSink | undefined }[];
}
