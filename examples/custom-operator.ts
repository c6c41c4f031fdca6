/**
 * An application's own operator type, written as a plain RxJS
 * OperatorFunction. Register it with `runtime.registerOperator(...)` (or in
 * the registries given to `pipelineOperator` and `eddy/testing`) and use it in
 * a pipeline as `type: example::uppercase`.
 *
 * ```yaml
 * nodes:
 *   - id: shout
 *     type: example::uppercase
 *     config: { field: message }
 * ```
 */
import { map, type OperatorFunction } from 'rxjs';
import type { EddyEvent, OperatorType, Registries } from 'eddy';

export interface UppercaseConfig {
  /** top-level string field to upper-case; the whole value when absent */
  field?: string;
}

/** Upper-cases one string field (or a string value); anything else passes unchanged. */
export function uppercase(config: UppercaseConfig): OperatorFunction<EddyEvent, EddyEvent> {
  return map((event) => {
    const data = event.data;
    if (config.field === undefined) return typeof data === 'string' ? { ...event, data: data.toUpperCase() } : event;
    if (data === null || typeof data !== 'object' || Array.isArray(data)) return event;
    const value = (data as Record<string, unknown>)[config.field];
    return typeof value === 'string' ? { ...event, data: { ...data, [config.field]: value.toUpperCase() } } : event;
  });
}

export const uppercaseOperator: OperatorType<UppercaseConfig> = {
  name: 'example::uppercase',
  configSchema: {
    type: 'object',
    additionalProperties: false,
    properties: { field: { type: 'string', minLength: 1, description: 'field to upper-case; the whole value when absent' } },
  },
  // returning a function is enough: the compiler sends everything it emits to `out`
  create: (config) => uppercase(config),
};

/** For `eddy test --require`: registers the type in the registries the cases run with. */
export function register(registries: Registries): void {
  registries.operators.register(uppercaseOperator.name, uppercaseOperator);
}
