import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parse as parseYaml } from 'yaml';
import { createApi, listen, type ApiOptions } from '../../src/api/server';
import { createLogger } from '../../src/core/logger';
import { Runtime } from '../../src/runtime/runtime';
import type { Observable } from 'rxjs';
import type { Frame, OnrampType } from '../../src/connectors/connector';

export interface Started {
  runtime: Runtime;
  server: Server;
  base: string;
  stop(): Promise<void>;
}

/** A runtime with its REST API (with `api` options, e.g. a token) on an ephemeral loopback port. */
export async function startRuntime(runtime?: Runtime, api: ApiOptions = {}): Promise<Started> {
  const rt = runtime ?? new Runtime({ logger: createLogger('silent') });
  await rt.start();
  const server = await listen(createApi(rt, api), '127.0.0.1', 0);
  const { port } = server.address() as AddressInfo;
  return {
    runtime: rt,
    server,
    base: `http://127.0.0.1:${port}`,
    async stop() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
      await rt.shutdown();
    },
  };
}

export interface Reply {
  status: number;
  type: string;
  text: string;
  body: unknown;
}

export interface RequestOptions {
  body?: unknown;
  /** send the body as YAML instead of JSON */
  yaml?: boolean;
  contentType?: string;
  accept?: string;
  raw?: string;
}

/** One HTTP request; the reply body is parsed by its content type. */
export async function call(base: string, method: string, path: string, options: RequestOptions = {}): Promise<Reply> {
  const headers: Record<string, string> = {};
  let body: string | undefined;
  if (options.raw !== undefined) body = options.raw;
  else if (options.body !== undefined) {
    const { stringify } = await import('yaml');
    body = options.yaml ? stringify(options.body) : JSON.stringify(options.body);
    headers['content-type'] = options.yaml ? 'application/yaml' : 'application/json';
  }
  if (options.contentType) headers['content-type'] = options.contentType;
  if (options.accept) headers.accept = options.accept;
  const res = await fetch(base + path, { method, headers, body });
  const text = await res.text();
  const type = (res.headers.get('content-type') ?? '').split(';')[0];
  let parsed: unknown = text;
  if (type === 'application/json') parsed = JSON.parse(text);
  if (type === 'application/yaml') parsed = parseYaml(text);
  return { status: res.status, type, text, body: parsed };
}

/** Waits until `check` holds, polling; fails after `ms`. */
export async function eventually(check: () => boolean | Promise<boolean>, ms = 5000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`timed out after ${ms} ms waiting for ${what}`);
}

/**
 * Registers `watched_<type>`: the onramp type `type` with its frames passed
 * through `watch`, so a test can see when they are subscribed or complete
 * instead of waiting some time. Returns the new type's name.
 */
export function registerWatchedOnramp(runtime: Runtime, type: string, watch: (frames: Observable<Frame>) => Observable<Frame>): string {
  const original = runtime.registries.onramps.get(type) as OnrampType<unknown>;
  const name = `watched_${type}`;
  runtime.registerOnramp({
    ...original,
    name,
    async create(config, ctx) {
      const source = await original.create(config, ctx);
      return { ...source, frames: watch(source.frames) };
    },
  });
  return name;
}
