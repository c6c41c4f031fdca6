import type { OfframpType, OnrampType } from './connector';
import { amqpOnramp } from './amqp/onramp';
import { blaster } from './blaster/onramp';
import { cbOnramp } from './cb/onramp';
import { chatOnramp } from './chat/onramp';
import { crononome } from './crononome/onramp';
import { fileOnramp } from './file/onramp';
import { kafkaOnramp } from './kafka/onramp';
import { metronome } from './metronome/onramp';
import { natsOnramp } from './nats/onramp';
import { otelOnramp } from './otel/onramp';
import { postgresOnramp } from './postgres/onramp';
import { pubsubOnramp } from './pubsub/onramp';
import { restOnramp } from './rest/onramp';
import { stdin } from './stdin/onramp';
import { tcpOnramp } from './tcp/onramp';
import { udpOnramp } from './udp/onramp';
import { wsOnramp } from './ws/onramp';
import { amqpOfframp } from './amqp/offramp';
import { blackhole } from './blackhole/offramp';
import { cbOfframp } from './cb/offramp';
import { debug } from './debug/offramp';
import { elasticOfframp } from './elastic/offramp';
import { exit } from './exit/offramp';
import { fileOfframp } from './file/offramp';
import { kafkaOfframp } from './kafka/offramp';
import { kv } from './kv/offramp';
import { logvendorOfframp } from './logvendor/offramp';
import { natsOfframp } from './nats/offramp';
import { postgresOfframp } from './postgres/offramp';
import { restOfframp } from './rest/offramp';
import { stderr, stdout } from './std/offramp';
import { tcpOfframp } from './tcp/offramp';
import { udpOfframp } from './udp/offramp';
import { wsOfframp } from './ws/offramp';

/** The builtin connectors. Adding one is one file plus one line here. */
/* eslint-disable @typescript-eslint/no-explicit-any */
export const builtinOnramps: readonly OnrampType<any>[] = [
  amqpOnramp,
  blaster,
  cbOnramp,
  chatOnramp,
  crononome,
  fileOnramp,
  kafkaOnramp,
  metronome,
  natsOnramp,
  otelOnramp,
  postgresOnramp,
  pubsubOnramp,
  restOnramp,
  stdin,
  tcpOnramp,
  udpOnramp,
  wsOnramp,
];
export const builtinOfframps: readonly OfframpType<any>[] = [
  amqpOfframp,
  blackhole,
  cbOfframp,
  debug,
  elasticOfframp,
  exit,
  fileOfframp,
  kafkaOfframp,
  kv,
  logvendorOfframp,
  natsOfframp,
  postgresOfframp,
  restOfframp,
  stderr,
  stdout,
  tcpOfframp,
  udpOfframp,
  wsOfframp,
];
