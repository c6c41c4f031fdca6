// Our published .d.ts use Node's types (Buffer, NodeJS.*, node:http...). This makes any program that
// imports eddy load @types/node even when its tsconfig does not list it (TypeScript 6+ includes no @types
// by default); preserve="true" keeps the directive in the emitted index.d.ts. See docs/embedding.md, "Types".
/// <reference types="node" preserve="true" />
/**
 * eddy as a library.
 *
 * - Run pipelines in any RxJS program: `pipelineOperator(artefact)` is an
 *   `OperatorFunction` from values or events to events (`pipelinePorts` for
 *   every output port).
 * - Embed a whole runtime: `new Runtime()`, register your own operator,
 *   codec, onramp and offramp types, publish artefacts, activate instances,
 *   serve the REST API with `serveApi`.
 * - Test pipelines in virtual time: see `eddy/testing`.
 *
 * @packageDocumentation
 */
export { Runtime, type ExitRequest, type Health, type InstanceHealth, type RuntimeOptions } from './runtime/runtime';
export { Registries } from './runtime/registries';
export type {
  Artefact,
  BindingArtefact,
  BuiltinOperatorName,
  OfframpArtefact,
  OnrampArtefact,
  OperatorName,
  PipelineArtefact,
  PipelineNode,
  StoredPipeline,
} from './runtime/artefacts';
export type { Kind } from './runtime/urls';
export { serveApi, type ServeOptions } from './api/public';
export {
  applyConfig,
  configDocument,
  loadConfigFile,
  loadConfigFiles,
  readConfigFile,
  type Applied,
  type ApplyOptions,
  type ArtefactRef,
  type ConfigFile,
  type ConfigSource,
} from './config/load';
export { LevelStore, StoreError, type RuntimeStore, type StoredInstance } from './runtime/store';
export { PathPolicy, type PolicyOptions, type PublishPolicy } from './runtime/policy';

export { event, isEvent, batchValues, trackedIds, APP_ORIGIN, APP_UID } from './core/event';
export type { EddyEvent, EventId, EventOptions, Insight, InsightKind, Meta, PortEvent } from './core/event';
export { EddyError } from './core/errors';
export { createLogger, type Logger } from './core/logger';

export { pipelineOperator, pipelinePorts, type PipelineOperatorOptions } from './embed/pipeline-operator';
export { standalonePipeline, validatePipeline, type StandaloneOptions, type StandalonePipeline } from './embed/standalone';
export { PipelineRuntime } from './pipeline/pipeline';
export type { OperatorType, OperatorNode, OperatorContext } from './pipeline/operator';

export { operators, codecs, preprocessors, postprocessors, onramps, offramps } from './builtins';
export type { Codec, CodecType } from './codecs/codec';
export type { Preprocessor, Postprocessor, PreprocessorType, PostprocessorType, FrameContext } from './processors/processor';
export type { OnrampType, OnrampSource, OnrampContext, OnrampReply, OfframpType, OfframpContext, Frame, FrameResult, Sink, Gate } from './connectors/connector';
export type { JsonSchema } from './schema/json-schema';
export { CircuitBreaker } from './contraflow/circuit-breaker';
export { version } from './version';
