import type { StoredPipeline } from './pipeline/graph';

/**
 * The artefacts that exist at start and cannot be deleted: two passthrough
 * pipelines and the two standard streams. Here, among the catalogs, since
 * they name builtin types; the runtime publishes them knowing no type by
 * name (test/hygiene/type-names.test.ts).
 */
export type SystemArtefact =
  | { readonly kind: 'pipeline'; readonly artefact: StoredPipeline }
  | { readonly kind: 'offramp'; readonly artefact: { id: string; type: string; codec: string; description: string } };

const pipeline = (id: string, description: string): SystemArtefact => ({
  kind: 'pipeline',
  artefact: {
    id,
    description,
    interface: { inputs: ['in'], outputs: ['out'] },
    nodes: [{ id: 'passthrough', type: 'passthrough' }],
    links: { in: ['passthrough'], passthrough: ['out'] },
  },
});

const stream = (type: 'stdout' | 'stderr', name: string): SystemArtefact => ({
  kind: 'offramp',
  artefact: { id: `system::${type}`, type, codec: 'json', description: `Prints events as JSON lines to standard ${name}` },
});

export const SYSTEM_ARTEFACTS: readonly SystemArtefact[] = [
  pipeline('system::passthrough', 'Forwards every event unchanged'),
  pipeline('system::metrics', 'Metrics of every ramp and pipeline instance'),
  stream('stdout', 'output'),
  stream('stderr', 'error'),
];
