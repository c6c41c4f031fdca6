/** A codec as an artefact names it: `json`, or `{name: avro, config: {...}}` for a codec that takes config. */
export type CodecSpec = string | { name: string; config?: Record<string, unknown> };

export function codecName(spec: CodecSpec): string {
  return typeof spec === 'string' ? spec : spec.name;
}

/** The config written in the artefact; undefined when it names the codec alone. */
export function codecConfig(spec: CodecSpec): Record<string, unknown> | undefined {
  return typeof spec === 'string' ? undefined : spec.config;
}
