/**
 * eddy as a library: build a Runtime, register your own types, publish
 * artefacts and activate instances, or use the pieces (operators,
 * codecs, pipelines) directly in any RxJS program.
 */
export { Runtime, type ExitRequest, type RuntimeOptions } from './runtime/runtime';
export { Registries } from './runtime/registries';
export { createApi, listen } from './api/server';
export { loadConfigFile, loadConfigFiles, readConfigFile } from './config/load';
export { LevelStore, StoreError, type RuntimeStore, type StoredInstance } from './runtime/store';
export { PathPolicy, type PolicyOptions, type PublishPolicy } from './runtime/policy';
export type { EddyEvent, EventId, Insight, InsightKind, Meta, PortEvent } from './core/event';
export { trackedIds } from './core/event';
export { EddyError } from './core/errors';
export type { Codec, CodecType } from './codecs/codec';
export type { Preprocessor, Postprocessor, PreprocessorType, PostprocessorType } from './processors/processor';
export type { OperatorType, OperatorNode, OperatorContext } from './pipeline/operator';
export type { OnrampType, OfframpType, Frame, Sink, OnrampContext, OfframpContext } from './connectors/connector';
export { PipelineRuntime } from './pipeline/pipeline';
export { CircuitBreaker } from './contraflow/circuit-breaker';
export { version } from './version';
