/* eslint-disable @typescript-eslint/no-require-imports -- each module is required when its type is first looked up, so a process loads only what its config names (an import would load every one at start) */
import type { LazyType } from '../core/registry';
import type { CodecType } from './codec';

/**
 * The builtin codecs by name, each module (msgpackr, yaml, ...) required when
 * the codec is first looked up. Adding a codec is one file plus one line here.
 */
export const codecCatalog: readonly LazyType<CodecType>[] = [
  { name: 'json', load: () => (require('./json') as typeof import('./json')).json },
  { name: 'msgpack', load: () => (require('./msgpack') as typeof import('./msgpack')).msgpack },
  { name: 'string', load: () => (require('./string') as typeof import('./string')).string },
  { name: 'null', load: () => (require('./null') as typeof import('./null')).nullCodec },
  { name: 'influx', load: () => (require('./influx') as typeof import('./influx')).influx },
  { name: 'yaml', load: () => (require('./yaml') as typeof import('./yaml')).yaml },
  { name: 'binary', load: () => (require('./binary') as typeof import('./binary')).binary },
  { name: 'binflux', load: () => (require('./binflux') as typeof import('./binflux')).binflux },
  { name: 'statsd', load: () => (require('./statsd') as typeof import('./statsd')).statsd },
  { name: 'syslog', load: () => (require('./syslog') as typeof import('./syslog')).syslog },
  { name: 'avro', load: () => (require('./avro') as typeof import('./avro')).avro },
  { name: 'protobuf', load: () => (require('./protobuf') as typeof import('./protobuf')).protobufCodec },
];
/* eslint-enable @typescript-eslint/no-require-imports -- the catalog ends here */
