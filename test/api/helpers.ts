import { request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parse as parseYaml } from 'yaml';
import { createApi, listen, type ApiOptions } from '../../src/api/server';
import { createLogger } from '../../src/core/logger';
import { Runtime } from '../../src/runtime/runtime';

export interface Api {
  runtime: Runtime;
  server: Server;
  port: number;
  stop(): Promise<void>;
}

/** A runtime with its REST API, built with `options`, on an ephemeral loopback port. */
export async function startApi(options: ApiOptions = {}, runtime = new Runtime({ logger: createLogger('silent') })): Promise<Api> {
  await runtime.start();
  const server = await listen(createApi(runtime, options), '127.0.0.1', 0);
  return {
    runtime,
    server,
    port: (server.address() as AddressInfo).port,
    async stop() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
      await runtime.shutdown();
    },
  };
}

export interface HttpReply {
  status: number;
  headers: IncomingHttpHeaders;
  type: string;
  text: string;
  /** parsed by the reply's content type (JSON or YAML); the text otherwise */
  body: unknown;
}

/**
 * One request with exactly the headers given (node:http, not fetch: fetch
 * sets Host itself and adds Accept and others). A body without a
 * content-type header goes out without one.
 */
export function send(
  port: number,
  method: string,
  path: string,
  options: { headers?: Record<string, string>; body?: string | Buffer } = {},
): Promise<HttpReply> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { host: `127.0.0.1:${port}`, ...options.headers };
    if (options.body !== undefined) headers['content-length'] = Buffer.byteLength(options.body);
    const req = httpRequest({ host: '127.0.0.1', port, method, path, headers, setHost: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const type = (res.headers['content-type'] ?? '').split(';')[0];
        let body: unknown = text;
        if (text === '') body = undefined;
        else if (type === 'application/json') body = JSON.parse(text);
        else if (['application/yaml', 'application/x-yaml', 'text/yaml'].includes(type)) body = parseYaml(text);
        resolve({ status: res.statusCode!, headers: res.headers, type, text, body });
      });
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

export const JSON_HEADERS = { 'content-type': 'application/json' };
export const YAML_HEADERS = { 'content-type': 'application/yaml' };

/** An onramp that is valid and cheap to publish. */
export const onramp = (id: string) => JSON.stringify({ id, type: 'metronome', config: { interval: 1000 } });

/** Every artefact id of every kind: what a failed request must leave as it was. */
export async function repositoryState(port: number): Promise<Record<string, unknown>> {
  const state: Record<string, unknown> = {};
  for (const kind of ['pipeline', 'onramp', 'offramp', 'binding']) state[kind] = (await send(port, 'GET', `/${kind}`)).body;
  return state;
}
