import { Subject, map } from 'rxjs';
import { Registries, Runtime, type EddyEvent, type OfframpType, type OnrampType, type OperatorType } from '../../src/index';
import type { Frame } from '../../src/connectors/connector';
import { createLogger } from '../../src/core/logger';

/**
 * A flow for the hot-path tests: a feed onramp (frames pushed by the test)
 * -> a pipeline of the given nodes -> offramps that record what their sinks
 * got, decode errors recorded as the offramp `err`. `stopFlowsAfterEach`
 * stops every flow a test started.
 */
export interface Sent {
  payload: Buffer;
  event: EddyEvent;
}

export interface Flow {
  frames: Subject<Frame>;
  /** what each offramp's sink got, by offramp id */
  sent: Record<string, Sent[]>;
  stop(): Promise<void>;
}

const feedType = (frames: Subject<Frame>): OnrampType => ({
  name: 'test::feed',
  defaultCodec: 'json',
  configSchema: { type: 'object', additionalProperties: false, properties: {} },
  create: () => ({ frames }),
});

const recordType = (sent: Record<string, Sent[]>, mutate: boolean): OfframpType => ({
  name: mutate ? 'test::record-and-change' : 'test::record',
  defaultCodec: 'json',
  autoAck: true,
  configSchema: { type: 'object', additionalProperties: false, properties: { id: { type: 'string' } } },
  create: (config) => ({
    send(payloads, event) {
      // one record per payload: a batch event's members each have their own
      for (const payload of payloads) (sent[(config as { id: string }).id] ??= []).push({ payload, event });
      // a sink that changes the value it was handed (nothing builtin does; nothing forbids it)
      if (mutate) (event.data as Record<string, unknown>).changed = true;
    },
  }),
});

/** changes the value in place and forwards the same event object */
const changeInPlace: OperatorType = {
  name: 'test::change',
  configSchema: { type: 'object', additionalProperties: false, properties: {} },
  create: () =>
    map((event: EddyEvent) => {
      (event.data as Record<string, unknown>).seen = 1;
      return event;
    }),
};

/** reads the value, forwards the event untouched */
const readOnly: OperatorType = {
  name: 'test::read',
  configSchema: { type: 'object', additionalProperties: false, properties: {} },
  create: () => map((event: EddyEvent) => (JSON.stringify(event.data), event)),
};

export async function startFlow(
  nodes: { id: string; type: string; config?: Record<string, unknown> }[],
  offramps: { id: string; codec: string; changes?: boolean }[],
  onrampCodec = 'json',
  extend: (registries: Registries) => void = () => undefined,
): Promise<Flow> {
  const frames = new Subject<Frame>();
  const sent: Record<string, Sent[]> = {};
  const registries = Registries.withBuiltins();
  extend(registries);
  registries.onramps.register('test::feed', feedType(frames));
  registries.offramps.register('test::record', recordType(sent, false));
  registries.offramps.register('test::record-and-change', recordType(sent, true));
  registries.operators.register('test::change', changeInPlace);
  registries.operators.register('test::read', readOnly);
  const runtime = new Runtime({ registries, logger: createLogger('silent') });
  await runtime.start();
  const links: Record<string, string[]> = { in: [nodes[0].id] };
  nodes.forEach((n, i) => (links[n.id] = [i + 1 < nodes.length ? nodes[i + 1].id : 'out']));
  runtime.publish('onramp', { id: 'src', type: 'test::feed', codec: onrampCodec, config: {} });
  runtime.publish('pipeline', { id: 'p', interface: { inputs: ['in'], outputs: ['out'] }, nodes, links });
  for (const o of offramps) {
    runtime.publish('offramp', { id: o.id, type: o.changes ? 'test::record-and-change' : 'test::record', codec: o.codec, config: { id: o.id } });
  }
  // decode errors go through a pipeline of their own to an offramp recorded as `err`
  runtime.publish('pipeline', { id: 'errs', interface: { inputs: ['in'], outputs: ['out'] }, nodes: passthrough, links: { in: ['pass'], pass: ['out'] } });
  runtime.publish('offramp', { id: 'err', type: 'test::record', codec: 'json', config: { id: 'err' } });
  runtime.publish('binding', {
    id: 'flow',
    links: {
      '/onramp/src/{instance}/out': ['/pipeline/p/{instance}/in'],
      '/onramp/src/{instance}/err': ['/pipeline/errs/{instance}/in'],
      '/pipeline/errs/{instance}/out': ['/offramp/err/{instance}/in'],
      '/pipeline/p/{instance}/out': offramps.map((o) => `/offramp/${o.id}/{instance}/in`),
    },
  });
  await runtime.activate('binding', 'flow', 'main', {});
  const flow = { frames, sent, stop: () => runtime.shutdown() };
  started.add(flow);
  return flow;
}

const started = new Set<Flow>();

/** Registers an afterEach hook that stops every flow the test started. */
export function stopFlowsAfterEach(): void {
  afterEach(async () => {
    const flows = [...started];
    started.clear();
    await Promise.all(flows.map((flow) => flow.stop()));
  });
}

export const passthrough = [{ id: 'pass', type: 'passthrough' }];

export function feed(flow: Flow, texts: string[]): Buffer[] {
  const buffers = texts.map((t) => Buffer.from(t, 'utf8'));
  for (const data of buffers) flow.frames.next({ stream: 0, data, originUri: 'test://feed' });
  return buffers;
}
