import type { SchedulerLike } from '../core/rx';
import { parse as parseYaml } from 'yaml';
import { EddyError, invalid } from '../core/errors';
import { yamlErrorMessage } from '../core/yaml-error';
import { createLogger, type Logger } from '../core/logger';
import { Registries } from '../runtime/registries';
import { Repository } from '../runtime/repository';
import { createPipeline } from '../runtime/instances';
import { SchemaValidator } from '../schema/artefacts';
import { buildGraph, type StoredPipeline } from '../pipeline/graph';
import type { PipelineRuntime } from '../pipeline/pipeline';

/** How a pipeline is built outside a Runtime. */
export interface StandaloneOptions {
  /** the operator types it may use; the built-in ones when absent */
  registries?: Registries;
  /** the clock of its time-based operators; real time when absent (pass a TestScheduler for virtual time) */
  scheduler?: SchedulerLike;
  /** where operators log; silent when absent */
  logger?: Logger;
  /** the instance URL its operators see (in insights, WAL names); `/pipeline/<id>/standalone` when absent */
  url?: string;
}

/** A validated pipeline artefact, ready to be instantiated any number of times. */
export interface StandalonePipeline {
  readonly artefact: StoredPipeline;
  /** its input ports */
  readonly inputs: readonly string[];
  /** its output ports, `err` included */
  readonly outputs: readonly string[];
  /** builds a fresh, unstarted instance */
  instantiate(): PipelineRuntime;
}

/**
 * Validates a pipeline artefact exactly as publishing it would (schema, links,
 * operator configs with their defaults) without building anything yet. A
 * YAML or JSON text is parsed first. Invalid artefacts throw an `EddyError`
 * naming the field.
 */
export function standalonePipeline(artefact: unknown, options: StandaloneOptions = {}): StandalonePipeline {
  const registries = options.registries ?? Registries.withBuiltins();
  const repository = new Repository(registries, new SchemaValidator());
  const body = typeof artefact === 'string' ? parseArtefactText(artefact) : artefact;
  const validated = named(body, () => repository.validate('pipeline', body) as StoredPipeline);
  const url = options.url ?? `/pipeline/${validated.id}/standalone`;
  const logger = options.logger ?? createLogger('silent');
  let uid = 0;
  const env = {
    registries,
    repository,
    logger,
    scheduler: options.scheduler,
    nextUid: () => ++uid,
    requestExit: () => logger.warn(`${url}: an exit request has no process to stop outside a Runtime`),
  };
  const graph = buildGraph(validated);
  return { artefact: validated, inputs: graph.inputs, outputs: graph.outputs, instantiate: () => createPipeline(url, validated, env) };
}

/**
 * Checks a pipeline artefact of unknown shape (parsed from a file, received
 * over the wire) exactly as publishing it would, and returns it typed, with
 * its `interface` and `links` filled in, for `pipelineOperator` and
 * `pipelinePorts`. Throws an `EddyError` naming the field. `registries`
 * holds the operator types it may use (the builtin ones when absent).
 */
export function validatePipeline(artefact: unknown, options: Pick<StandaloneOptions, 'registries'> = {}): StoredPipeline {
  return standalonePipeline(artefact, options).artefact;
}

/** Throws a clear error unless `port` is one of `ports`. */
export function checkPort(pipeline: StandalonePipeline, direction: 'input' | 'output', port: string): void {
  const ports = direction === 'input' ? pipeline.inputs : pipeline.outputs;
  if (!ports.includes(port)) throw invalid(`pipeline '${pipeline.artefact.id}' has no ${direction} port '${port}' (${direction}s: ${ports.join(', ')})`);
}

/** Runs a check, prefixing its error with the pipeline it is about. */
function named<T>(body: unknown, check: () => T): T {
  try {
    return check();
  } catch (err) {
    if (!(err instanceof EddyError)) throw err;
    const id = (body as { id?: unknown } | null)?.id;
    throw new EddyError(err.code, `pipeline${typeof id === 'string' ? ` '${id}'` : ''}: ${err.message}`);
  }
}

function parseArtefactText(text: string): unknown {
  try {
    return parseYaml(text);
  } catch (err) {
    throw invalid(`pipeline: not valid YAML or JSON: ${yamlErrorMessage(err, text)}`);
  }
}
