import type { Subscriber } from 'rxjs';
import type { Frame, OfframpType } from '../../src/connectors/connector';
import { activatePushFlow, pushOnramp } from '../helpers/push-onramp';
import { createLogger } from '../../src/core/logger';
import type { EddyEvent } from '../../src/core/event';
import { Runtime } from '../../src/runtime/runtime';
import { call, startRuntime, type Started } from '../helpers/runtime';
import type { ApiOptions } from '../../src/api/server';

/**
 * A flow the observe tests drive by hand: `push` (an onramp the test feeds)
 * → `relay` (a pipeline with one passthrough node) → `keeper` (an offramp
 * that keeps what it receives), bound as `/binding/flow/main`; the keeper's
 * `trigger`/`restore` open and close its circuit breaker.
 */
export interface Flow extends Started {
  /** feeds one value (or undecodable bytes) into the push onramp */
  push(value: unknown, meta?: Record<string, unknown>): void;
  pushRaw(bytes: string): void;
  /** what the keeper received, in order */
  readonly kept: EddyEvent[];
  trigger(): void;
  restore(): void;
}

export async function startFlow(api: ApiOptions = {}): Promise<Flow> {
  const feeds = new Map<string, Subscriber<Frame>>();
  const kept: EddyEvent[] = [];
  const breaker = { trigger: (): void => undefined, restore: (): void => undefined };
  const push = pushOnramp(feeds);
  const keeper: OfframpType<Record<string, never>> = {
    name: 'keeper',
    defaultCodec: 'json',
    autoAck: true,
    configSchema: { type: 'object', additionalProperties: false, properties: {} },
    create(_config, ctx) {
      breaker.trigger = ctx.trigger;
      breaker.restore = ctx.restore;
      return { send: (_payloads, event) => void kept.push(event) };
    },
  };
  const runtime = new Runtime({ logger: createLogger('silent') }).registerOnramp(push).registerOfframp(keeper);
  const started = await startRuntime(runtime, api);
  await activatePushFlow(runtime);
  const frame = (f: Omit<Frame, 'stream' | 'originUri'>) => {
    const feed = feeds.get('/onramp/push/main');
    if (!feed) throw new Error('the push onramp is not running');
    feed.next({ stream: 0, originUri: 'svc-push://test', ...f });
  };
  return {
    ...started,
    push: (value, meta) => frame(meta ? { value, meta } : { value }),
    pushRaw: (bytes) => frame({ data: Buffer.from(bytes) }),
    kept,
    trigger: () => breaker.trigger(),
    restore: () => breaker.restore(),
  };
}

export interface SseMessage {
  event: string;
  data: unknown;
}

/**
 * Reads a Server-Sent Events stream until `until` holds for what came so
 * far, or the stream ends; then stops reading (aborts the request).
 */
export async function readSse(url: string, until: (messages: SseMessage[]) => boolean, headers: Record<string, string> = {}): Promise<SseMessage[]> {
  const abort = new AbortController();
  const res = await fetch(url, { headers: { accept: 'text/event-stream', ...headers }, signal: abort.signal });
  if (res.status !== 200) throw new Error(`tap answered ${res.status}: ${await res.text()}`);
  const messages: SseMessage[] = [];
  const decoder = new TextDecoder();
  let buffer = '';
  try {
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      buffer += decoder.decode(chunk, { stream: true });
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const event = /^event: (.*)$/m.exec(block)?.[1];
        const data = /^data: (.*)$/m.exec(block)?.[1];
        if (event !== undefined && data !== undefined) messages.push({ event, data: JSON.parse(data) });
      }
      if (until(messages)) break;
    }
  } finally {
    abort.abort();
  }
  return messages;
}

export { call };
