import type { ProcessorSpec } from '../processors/processor';
import type { BuiltinOperatorName, OperatorName, PipelineArtefact, PipelineNode, StoredPipeline } from '../pipeline/graph';
import type { DeadLetterConfig, RetryConfig } from '../schema/artefacts';
import type { CodecSpec } from '../codecs/spec';

export type { BuiltinOperatorName, OperatorName, PipelineArtefact, PipelineNode, StoredPipeline };

/** What onramp and offramp artefacts share (the spec's schema): type, codec, processors, config. */
export interface RampArtefact {
  id: string;
  type: string;
  description?: string;
  codec?: CodecSpec;
  codec_map?: Record<string, string>;
  config?: Record<string, unknown>;
  linked?: boolean;
  metrics_interval_s?: number;
  preprocessors?: ProcessorSpec[];
  postprocessors?: ProcessorSpec[];
}

/** An onramp artefact; `err_required` holds its events back until something is linked to its `err` port. */
export interface OnrampArtefact extends RampArtefact {
  err_required?: boolean;
}

/** An offramp artefact; `retry` and `dead_letter` shape what happens to a failed send (docs/delivery.md). */
export interface OfframpArtefact extends RampArtefact {
  retry?: RetryConfig;
  dead_letter?: DeadLetterConfig;
}

/** A binding artefact: links from `/kind/artefact/{instance}/port` to lists of such URLs. */
export interface BindingArtefact {
  id: string;
  description?: string;
  links: Record<string, string[]>;
}

/** Any artefact, as published and returned by the repository (a pipeline with its interface and links filled in). */
export type Artefact = StoredPipeline | OnrampArtefact | OfframpArtefact | BindingArtefact;
