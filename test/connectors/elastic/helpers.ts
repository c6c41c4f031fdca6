import { createServer as createHttpServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { Subject } from 'rxjs';
import { Client } from '@elastic/elasticsearch';
import type { Frame } from '../../../src/connectors/connector';
import type { EddyEvent, Meta } from '../../../src/core/event';
import { createLogger } from '../../../src/core/logger';
import { Registries } from '../../../src/runtime/registries';
import { Runtime } from '../../../src/runtime/runtime';
import { feedOnramp } from '../../helpers/feed-onramp';
import { requireService, type ServiceAddress } from '../../helpers/services';

/** A test source: the test pushes each event's data and meta; the acks and fails that come back are kept (by event seq). */
export interface Feed {
  push(value: unknown, meta?: Meta): void;
  /** an event as the bytes of a frame, for the onramp's codec (json) to decode (or to leave unread) */
  pushText(text: string, meta?: Meta): void;
  acks: number[];
  fails: number[];
}

export interface ElasticFlow {
  runtime: Runtime;
  feed: Feed;
  /** what the linked offramp emitted on out and err */
  out: EddyEvent[];
  err: EddyEvent[];
  /** the feed onramp's breaker: false while triggered */
  gateOpen(): boolean;
  stop(): Promise<void>;
}

export interface ElasticFlowSpec {
  /** the offramp artefact's fields besides id and type */
  offramp: Record<string, unknown>;
  /** pipeline nodes between `in` and `out` (default one passthrough) */
  nodes?: { id: string; type: string; config?: Record<string, unknown> }[];
}

/** feed onramp -> pipeline -> elastic offramp `dst`; a linked offramp's out and err recorded. */
export async function startElasticFlow(spec: ElasticFlowSpec): Promise<ElasticFlow> {
  const frames = new Subject<Frame>();
  const feed = { frames, acks: [] as number[], fails: [] as number[] };
  const registries = Registries.withBuiltins();
  registries.onramps.register('feed', feedOnramp(frames, { ack: (id) => feed.acks.push(id.seq), fail: (id) => feed.fails.push(id.seq) }));
  const runtime = new Runtime({ registries, logger: createLogger('silent') });
  await runtime.start();
  const nodes = spec.nodes ?? [{ id: 'pass', type: 'passthrough' }];
  const links: Record<string, string[]> = { in: [nodes[0].id] };
  nodes.forEach((n, i) => (links[n.id] = [i + 1 < nodes.length ? nodes[i + 1].id : 'out']));
  const passthrough = (id: string) => ({
    id,
    interface: { inputs: ['in'], outputs: ['out'] },
    nodes: [{ id: 'pass', type: 'passthrough' }],
    links: { in: ['pass'], pass: ['out'] },
  });
  runtime.publish('onramp', { id: 'src', type: 'feed', config: {} });
  runtime.publish('pipeline', { id: 'p', interface: { inputs: ['in'], outputs: ['out'] }, nodes, links });
  runtime.publish('pipeline', passthrough('replies'));
  runtime.publish('pipeline', passthrough('errors'));
  runtime.publish('offramp', { id: 'dst', type: 'elastic', ...spec.offramp });
  const bindingLinks: Record<string, string[]> = {
    '/onramp/src/{instance}/out': ['/pipeline/p/{instance}/in'],
    '/pipeline/p/{instance}/out': ['/offramp/dst/{instance}/in'],
  };
  const linked = spec.offramp.linked === true;
  if (linked) {
    bindingLinks['/offramp/dst/{instance}/out'] = ['/pipeline/replies/{instance}/in'];
    bindingLinks['/offramp/dst/{instance}/err'] = ['/pipeline/errors/{instance}/in'];
  }
  runtime.publish('binding', { id: 'flow', links: bindingLinks });
  await runtime.activate('binding', 'flow', 'main', {});
  const out: EddyEvent[] = [];
  const err: EddyEvent[] = [];
  if (linked) {
    runtime
      .pipeline('/pipeline/replies/main')!
      .output('out')
      .subscribe((e) => out.push(e));
    runtime
      .pipeline('/pipeline/errors/main')!
      .output('out')
      .subscribe((e) => err.push(e));
  }
  return {
    runtime,
    feed: {
      push: (value, meta) => frames.next({ stream: 0, value, meta, originUri: 'svc-feed://test' }),
      pushText: (text, meta) => frames.next({ stream: 0, data: Buffer.from(text, 'utf8'), meta, originUri: 'svc-feed://test' }),
      acks: feed.acks,
      fails: feed.fails,
    },
    out,
    err,
    gateOpen: () => runtime.onramp('/onramp/src/main')!.runtime.breaker.isOpen,
    stop: () => runtime.shutdown(),
  };
}

let indexCount = 0;
/** An index name no other test or run uses. */
export function uniqueIndex(what: string): string {
  return `eddy-test-${what}-${process.pid}-${Date.now().toString(36)}-${++indexCount}`;
}

/** The real client, for the test's own look at the cluster; `dispose` deletes the indices it made and closes it. */
export function testClient(address: ServiceAddress): Client & { indices_made: string[]; dispose(): Promise<void> } {
  const client = new Client({ node: `http://${address.host}:${address.port}` }) as Client & { indices_made: string[]; dispose(): Promise<void> };
  client.indices_made = [];
  client.dispose = async () => {
    if (client.indices_made.length > 0) await client.indices.delete({ index: client.indices_made, ignore_unavailable: true }).catch(() => undefined);
    await client.close();
  };
  return client;
}

export type TestClient = ReturnType<typeof testClient>;

/** The Elasticsearch of a suite: found in its `before` hook (the suite is skipped, or fails under CI, without one). */
export interface ElasticSuite {
  readonly es: ServiceAddress;
  /** the test's own client; the indices named by `index` are deleted after the suite */
  readonly client: TestClient;
  /** the `nodes` config of an elastic offramp for this cluster */
  nodes(): string[];
  /** a fresh index name, deleted after the suite */
  index(what: string): string;
}

/** Registers the suite's hooks that find the cluster and clean up after it; call it inside `describe`. */
export function useElastic(): ElasticSuite {
  let es: ServiceAddress | undefined;
  let client: TestClient | undefined;
  before(async function () {
    es = await requireService(this, 'elastic');
    client = testClient(es);
  });
  after(async () => client?.dispose());
  const suite: ElasticSuite = {
    get es() {
      return es!;
    },
    get client() {
      return client!;
    },
    nodes: () => [`http://${es!.host}:${es!.port}`],
    index(what) {
      const name = uniqueIndex(what);
      client!.indices_made.push(name);
      return name;
    },
  };
  return suite;
}

/** Every document of `index` (refreshed first), sorted by `_id`. */
export async function documentsIn(client: Client, index: string): Promise<{ _id: string; _source: unknown }[]> {
  await client.indices.refresh({ index });
  const found = await client.search({ index, size: 1000, query: { match_all: {} } });
  return found.hits.hits.map((h) => ({ _id: h._id!, _source: h._source })).sort((a, b) => (a._id < b._id ? -1 : 1));
}

import { freePort } from '../net-helpers';
export { freePort };

export interface Proxy {
  port: number;
  /** bulk requests it has seen */
  bulks: number;
  /** most bulk requests it was forwarding at the same time */
  maxInFlight: number;
  /** stops listening and drops every connection: the cluster "goes away" */
  close(): Promise<void>;
}

/**
 * An HTTP proxy in front of the real node that counts the bulk requests in
 * flight and holds each one `delayMs` before forwarding it, so that
 * concurrency shows; closing it is a connection loss eddy cannot tell from
 * the cluster going down.
 */
export async function proxyTo(target: ServiceAddress, options: { port?: number; delayMs?: number } = {}): Promise<Proxy> {
  const sockets = new Set<Socket>();
  let inFlight = 0;
  const proxy: Proxy = { port: 0, bulks: 0, maxInFlight: 0, close: async () => undefined };
  const server: Server = createHttpServer((req, res) => {
    const bulk = req.url?.startsWith('/_bulk') === true;
    if (bulk) {
      proxy.bulks++;
      proxy.maxInFlight = Math.max(proxy.maxInFlight, ++inFlight);
      res.once('close', () => inFlight--);
    }
    const forward = () => {
      // a connection of its own per request (agent: false): Node's global agent keeps sockets alive, and one the
      // cluster had closed as idle, reused by the next request, failed that request ("other side closed") now and then
      const upstream = httpRequest(
        { host: target.host, port: target.port, method: req.method, path: req.url, headers: req.headers, agent: false },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      upstream.on('error', () => res.destroy());
      req.pipe(upstream);
    };
    if (bulk && options.delayMs) setTimeout(forward, options.delayMs);
    else forward();
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(options.port ?? 0, '127.0.0.1', resolve));
  proxy.port = (server.address() as AddressInfo).port;
  proxy.close = async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  };
  return proxy;
}

export const range = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, i) => from + i);
export const sorted = (xs: number[]): number[] => [...xs].sort((a, b) => a - b);
