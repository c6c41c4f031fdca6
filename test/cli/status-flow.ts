import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApi, listen } from '../../src/api/server';
import { createLogger } from '../../src/core/logger';
import { Runtime } from '../../src/runtime/runtime';

export interface Served {
  runtime: Runtime;
  base: string;
  stop(): Promise<void>;
}

/** A runtime with its API (and the console) on a free loopback port, needing `token` when given. */
export async function serve(token?: string): Promise<Served> {
  const runtime = new Runtime({ logger: createLogger('silent') });
  await runtime.start();
  const server: Server = await listen(createApi(runtime, { token }), '127.0.0.1', 0);
  return {
    runtime,
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async stop() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
      await runtime.shutdown();
    },
  };
}

/** A metronome ticking every `intervalMs`, bound to the system passthrough pipeline (instance main): a flow whose counts move. */
export async function startTicker(runtime: Runtime, intervalMs = 20): Promise<void> {
  runtime.publish('onramp', { id: 'ticker', type: 'metronome', config: { interval: intervalMs } });
  runtime.publish('binding', { id: 'ticks', links: { '/onramp/ticker/{instance}/out': ['/pipeline/system::passthrough/{instance}/in'] } });
  await runtime.activate('binding', 'ticks', 'main', { instance: 'main' });
}

/** Publishes binding `id`: onramp `onramp` → system::passthrough → offramp `offramp` (both published already), and activates it as `instance`. */
export async function bindThroughPassthrough(runtime: Runtime, id: string, onramp: string, offramp: string, instance: string): Promise<void> {
  runtime.publish('binding', {
    id,
    links: {
      [`/onramp/${onramp}/{instance}/out`]: ['/pipeline/system::passthrough/{instance}/in'],
      '/pipeline/system::passthrough/{instance}/out': [`/offramp/${offramp}/{instance}/in`],
    },
  });
  await runtime.activate('binding', id, instance, { instance });
}
