/**
 * The messages between the compliance suite (parent) and the child process
 * that runs one connector in a Runtime (fixtures/ramp-child.ts). Commands go
 * over the IPC channel; the child's final report is one line on its stdout
 * (the IPC channel is closed by then, so it cannot hold the child alive).
 */
import type { ProcessorSpec } from '../../../src/processors/processor';

export type Side = 'onramp' | 'offramp';

/** The artefact fields a harness chooses; id and type are the suite's. */
export interface RampParts {
  config: Record<string, unknown>;
  codec?: string;
  preprocessors?: ProcessorSpec[];
  postprocessors?: ProcessorSpec[];
  linked?: boolean;
}

export type Command =
  | { cmd: 'start'; side: Side; type: string; ramp: RampParts }
  /** activate an instance that cannot open what it needs (a port in use, a missing file): it must fail */
  | { cmd: 'try'; side: Side; type: string; ramp: RampParts }
  /** offramps: an event into the pipeline that feeds the offramp */
  | { cmd: 'send'; data: unknown; meta?: Record<string, unknown> }
  | { cmd: 'status' }
  /** the suite's self-test only: opens a file and a timer and never closes them */
  | { cmd: 'leak' }
  /** close the IPC channel, shut the runtime down, report what is left, exit by itself */
  | { cmd: 'stop' };

export interface Counters {
  in: number;
  out: number;
  error: number;
  bytes: number;
}

export interface ChildStatus {
  /** the ramp under test's counters */
  counters: Counters;
  /** what a linked offramp emitted on its out and err ports */
  replies: { out: unknown[]; err: unknown[] };
  /** exit statuses requested of the runtime (exit offramp, cb onramp); the child never exits on them */
  exits: number[];
}

/** How a `try` activation ended: refused with this error (code and message), or activated after all. */
export interface Refusal {
  activated: boolean;
  code?: string;
  message?: string;
}

export interface Reply {
  seq: number;
  ok: boolean;
  error?: string;
  status?: ChildStatus;
  refusal?: Refusal;
}

/** The child's last stdout line starts with this, followed by a `Leftovers` JSON. */
export const REPORT_MARKER = '@@compliance-leftovers ';

export interface Leftovers {
  /** `process.getActiveResourcesInfo()` after shutdown, stdio excluded */
  resources: string[];
  /** file descriptors (sockets, files) opened since the child started and still open */
  fds: string[];
  /** polling turns it took (the bound when something was left) */
  turns: number;
}
