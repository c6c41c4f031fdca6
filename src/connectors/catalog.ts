/* eslint-disable @typescript-eslint/no-require-imports -- each module is required when its type is first looked up, so a process loads only what its config names (an import would load every one at start) */
import type { LazyType } from '../core/registry';
import type { AnyOfframpType, AnyOnrampType } from './connector';

/**
 * The builtin connectors by name, each module required when its type is
 * first looked up (see LazyType). Adding a connector is one file plus one
 * line here.
 *
 * Each line spells its module twice on purpose: the bundler (scripts/bundle.js)
 * follows only a literal `require('./x')`, and the type-aware lint needs the
 * module's type (`typeof import('./x')`) to check the export's name. A
 * `lazy(path)` helper would take the path as a variable, which neither can
 * follow; one generic over the module would still repeat both.
 */
export const onrampCatalog: readonly LazyType<AnyOnrampType>[] = [
  { name: 'amqp', load: () => (require('./amqp/onramp') as typeof import('./amqp/onramp')).amqpOnramp },
  { name: 'blaster', load: () => (require('./blaster/onramp') as typeof import('./blaster/onramp')).blaster },
  { name: 'cb', load: () => (require('./cb/onramp') as typeof import('./cb/onramp')).cbOnramp },
  { name: 'chat', load: () => (require('./chat/onramp') as typeof import('./chat/onramp')).chatOnramp },
  { name: 'crononome', load: () => (require('./crononome/onramp') as typeof import('./crononome/onramp')).crononome },
  { name: 'file', load: () => (require('./file/onramp') as typeof import('./file/onramp')).fileOnramp },
  { name: 'kafka', load: () => (require('./kafka/onramp') as typeof import('./kafka/onramp')).kafkaOnramp },
  { name: 'metronome', load: () => (require('./metronome/onramp') as typeof import('./metronome/onramp')).metronome },
  { name: 'nats', load: () => (require('./nats/onramp') as typeof import('./nats/onramp')).natsOnramp },
  { name: 'otel', load: () => (require('./otel/onramp') as typeof import('./otel/onramp')).otelOnramp },
  { name: 'postgres', load: () => (require('./postgres/onramp') as typeof import('./postgres/onramp')).postgresOnramp },
  { name: 'pubsub', load: () => (require('./pubsub/onramp') as typeof import('./pubsub/onramp')).pubsubOnramp },
  { name: 'rest', load: () => (require('./rest/onramp') as typeof import('./rest/onramp')).restOnramp },
  { name: 'stdin', load: () => (require('./stdin/onramp') as typeof import('./stdin/onramp')).stdin },
  { name: 'tcp', load: () => (require('./tcp/onramp') as typeof import('./tcp/onramp')).tcpOnramp },
  { name: 'udp', load: () => (require('./udp/onramp') as typeof import('./udp/onramp')).udpOnramp },
  { name: 'ws', load: () => (require('./ws/onramp') as typeof import('./ws/onramp')).wsOnramp },
];

export const offrampCatalog: readonly LazyType<AnyOfframpType>[] = [
  { name: 'amqp', load: () => (require('./amqp/offramp') as typeof import('./amqp/offramp')).amqpOfframp },
  { name: 'blackhole', load: () => (require('./blackhole/offramp') as typeof import('./blackhole/offramp')).blackhole },
  { name: 'cb', load: () => (require('./cb/offramp') as typeof import('./cb/offramp')).cbOfframp },
  { name: 'debug', load: () => (require('./debug/offramp') as typeof import('./debug/offramp')).debug },
  { name: 'elastic', load: () => (require('./elastic/offramp') as typeof import('./elastic/offramp')).elasticOfframp },
  { name: 'exit', load: () => (require('./exit/offramp') as typeof import('./exit/offramp')).exit },
  { name: 'file', load: () => (require('./file/offramp') as typeof import('./file/offramp')).fileOfframp },
  { name: 'kafka', load: () => (require('./kafka/offramp') as typeof import('./kafka/offramp')).kafkaOfframp },
  { name: 'kv', load: () => (require('./kv/offramp') as typeof import('./kv/offramp')).kv },
  { name: 'logvendor', load: () => (require('./logvendor/offramp') as typeof import('./logvendor/offramp')).logvendorOfframp },
  { name: 'nats', load: () => (require('./nats/offramp') as typeof import('./nats/offramp')).natsOfframp },
  { name: 'otel', load: () => (require('./otel/offramp') as typeof import('./otel/offramp')).otelOfframp },
  { name: 'postgres', load: () => (require('./postgres/offramp') as typeof import('./postgres/offramp')).postgresOfframp },
  { name: 'rest', load: () => (require('./rest/offramp') as typeof import('./rest/offramp')).restOfframp },
  { name: 'stderr', load: () => (require('./std/offramp') as typeof import('./std/offramp')).stderr },
  { name: 'stdout', load: () => (require('./std/offramp') as typeof import('./std/offramp')).stdout },
  { name: 'tcp', load: () => (require('./tcp/offramp') as typeof import('./tcp/offramp')).tcpOfframp },
  { name: 'udp', load: () => (require('./udp/offramp') as typeof import('./udp/offramp')).udpOfframp },
  { name: 'ws', load: () => (require('./ws/offramp') as typeof import('./ws/offramp')).wsOfframp },
];
/* eslint-enable @typescript-eslint/no-require-imports -- the catalog ends here */
