import { peer } from '../../helpers/peers';
import { execFile } from 'node:child_process';
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { EddyEvent } from '../../../src/core/event';
import type { Logger } from '../../../src/core/logger';
import { Runtime } from '../../../src/runtime/runtime';

import { freePort } from '../net-helpers';
export { freePort };

export interface HttpAnswer {
  status: number;
  /** lowercase names; repeated headers joined with ", " */
  headers: Record<string, string>;
  body: string;
}

/** One request with curl; `args` are extra curl arguments (method, headers, data). */
export function curl(url: string, args: string[] = []): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    // -i: headers then body; Expect disabled so there is no 100 Continue interim answer
    execFile(peer('curl'), ['-s', '-i', '-m', '10', '-H', 'Expect:', ...args, url], { encoding: 'latin1' }, (err, stdout) => {
      if (err) return reject(new Error(`curl ${url} failed: ${err.message}`));
      const split = stdout.indexOf('\r\n\r\n');
      const head = stdout.slice(0, split).split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of head.slice(1)) {
        const colon = line.indexOf(':');
        const name = line.slice(0, colon).toLowerCase();
        const value = line.slice(colon + 1).trim();
        headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
      }
      resolve({ status: Number(head[0].split(' ')[1]), headers, body: Buffer.from(stdout.slice(split + 4), 'latin1').toString('utf8') });
    });
  });
}

/** A logger that keeps every line, for tests that look at what was logged. */
export function recordingLogger(): Logger & { lines: string[] } {
  const lines: string[] = [];
  const keep = (level: string) => (msg: string) => void lines.push(`${level} ${msg}`);
  return { lines, debug: keep('debug'), info: keep('info'), warn: keep('warn'), error: keep('error') };
}

export interface RestFlow {
  runtime: Runtime;
  port: number;
  base: string;
  /** events on the pipeline's `out` */
  events: EddyEvent[];
  /** events on the onramp's `err` port */
  errors: EddyEvent[];
  stop(): Promise<void>;
}

export interface RestFlowSpec {
  /** the onramp artefact's fields besides id, type and config */
  onramp?: Record<string, unknown>;
  config?: Record<string, unknown>;
  /** pipeline nodes between `in` and `out` (default one passthrough) */
  nodes?: { id: string; type: string; config?: Record<string, unknown> }[];
  /** linked: the pipeline's `out` goes back to the onramp's `in` (default: when the onramp is linked) */
  replies?: boolean;
  logger?: Logger;
}

/**
 * An in-process runtime with a rest onramp `web` on a free port, its `out`
 * into pipeline `p` and its `err` recorded; a linked onramp gets `p`'s
 * output back as replies.
 */
export async function startRestFlow(spec: RestFlowSpec = {}): Promise<RestFlow> {
  const runtime = new Runtime({ logger: spec.logger ?? silent });
  await runtime.start();
  const port = await freePort();
  const nodes = spec.nodes ?? [{ id: 'pass', type: 'passthrough' }];
  const links: Record<string, string[]> = { in: [nodes[0].id] };
  nodes.forEach((n, i) => (links[n.id] = [i + 1 < nodes.length ? nodes[i + 1].id : 'out']));
  runtime.publish('onramp', { id: 'web', type: 'rest', ...spec.onramp, config: { host: '127.0.0.1', port, ...spec.config } });
  runtime.publish('pipeline', { id: 'p', interface: { inputs: ['in'], outputs: ['out'] }, nodes, links });
  const bindingLinks: Record<string, string[]> = {
    '/onramp/web/{instance}/out': ['/pipeline/p/{instance}/in'],
    '/onramp/web/{instance}/err': ['/pipeline/system::passthrough/{instance}/in'],
  };
  if (spec.replies ?? spec.onramp?.linked === true) bindingLinks['/pipeline/p/{instance}/out'] = ['/onramp/web/{instance}/in'];
  runtime.publish('binding', { id: 'web', links: bindingLinks });
  await runtime.activate('binding', 'web', 'main', {});
  const events: EddyEvent[] = [];
  const errors: EddyEvent[] = [];
  runtime
    .pipeline('/pipeline/p/main')!
    .output('out')
    .subscribe((e) => events.push(e));
  runtime
    .pipeline('/pipeline/system::passthrough/main')!
    .output('out')
    .subscribe((e) => errors.push(e));
  return { runtime, port, base: `http://127.0.0.1:${port}`, events, errors, stop: () => runtime.shutdown() };
}

const quiet = () => undefined;
const silent: Logger = { debug: quiet, info: quiet, warn: quiet, error: quiet };

export interface Received {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

export interface TargetServer {
  server: Server;
  port: number;
  received: Received[];
  /** most requests the server was handling at the same time */
  maxInFlight: number;
  close(): Promise<void>;
}

/**
 * An HTTP server for the offramp to send to. `answer` decides each reply
 * (default 200 with a JSON body); it may be async, to hold requests in flight.
 */
export async function targetServer(
  answer: (req: Received, res: ServerResponse) => void | Promise<void> = (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"ok":true}');
  },
  port = 0,
): Promise<TargetServer> {
  const received: Received[] = [];
  let inFlight = 0;
  const target: TargetServer = {
    server: createHttpServer((req, res) => {
      inFlight++;
      target.maxInFlight = Math.max(target.maxInFlight, inFlight);
      res.once('close', () => inFlight--);
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const r: Received = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
        received.push(r);
        void answer(r, res);
      });
    }),
    port: 0,
    received,
    maxInFlight: 0,
    async close() {
      target.server.closeAllConnections();
      await new Promise((resolve) => target.server.close(resolve));
    },
  };
  await new Promise<void>((resolve) => target.server.listen(port, '127.0.0.1', resolve));
  target.port = (target.server.address() as AddressInfo).port;
  return target;
}
