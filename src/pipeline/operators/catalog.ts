/* eslint-disable @typescript-eslint/no-require-imports -- each module is required when its type is first looked up, so a process loads only what its config names (an import would load every one at start) */
import type { LazyType } from '../../core/registry';
import type { AnyOperatorType } from '../operator';

/**
 * The builtin operators by name, each module required when the operator is
 * first looked up (runtime::cel's CEL engine is the heavy one). Adding an
 * operator is one file plus one line here.
 */
export const operatorCatalog = [
  { name: 'passthrough', load: () => (require('./passthrough') as typeof import('./passthrough')).passthrough },
  { name: 'generic::batch', load: () => (require('./batch') as typeof import('./batch')).batch },
  { name: 'generic::counter', load: () => (require('./counter') as typeof import('./counter')).counter },
  { name: 'debug::history', load: () => (require('./history') as typeof import('./history')).history },
  { name: 'grouper::bucket', load: () => (require('./bucket') as typeof import('./bucket')).bucket },
  { name: 'qos::backpressure', load: () => (require('./backpressure') as typeof import('./backpressure')).backpressure },
  { name: 'qos::percentile', load: () => (require('./percentile') as typeof import('./percentile')).percentile },
  { name: 'qos::roundrobin', load: () => (require('./roundrobin') as typeof import('./roundrobin')).roundrobin },
  { name: 'qos::wal', load: () => (require('./wal') as typeof import('./wal')).wal },
  { name: 'runtime::cel', load: () => (require('./cel') as typeof import('./cel')).cel },
  { name: 'generic::dedupe', load: () => (require('./dedupe') as typeof import('./dedupe')).dedupe },
  { name: 'generic::reduce', load: () => (require('./reduce') as typeof import('./reduce')).reduce },
  { name: 'generic::sample', load: () => (require('./sample') as typeof import('./sample')).sample },
  { name: 'enrich::lookup', load: () => (require('./lookup') as typeof import('./lookup')).lookup },
  { name: 'window::aggregate', load: () => (require('./window-aggregate') as typeof import('./window-aggregate')).windowAggregate },
  // as const keeps each name a literal: graph.ts's BuiltinOperatorName is read from it
] as const satisfies readonly LazyType<AnyOperatorType>[];
/* eslint-enable @typescript-eslint/no-require-imports -- the catalog ends here */
