import { expect } from 'chai';
import { Agent, request } from 'node:http';
import type { EddyEvent } from '../../../src/core/event';
import { Runtime } from '../../../src/runtime/runtime';
import { eventually } from '../../helpers/runtime';
import { freePort, recordingLogger, targetServer, type Received, type TargetServer } from './helpers';
import type { ServerResponse } from 'node:http';

interface Relay {
  runtime: Runtime;
  base: string;
  /** the linked offramp's err events */
  errors: EddyEvent[];
  stop(): Promise<void>;
}

/** linked rest onramp -> pipeline -> linked rest offramp -> backend; the offramp's answers back to the onramp. */
async function startRelay(spec: { backend: TargetServer; timeout: number; concurrency: number }): Promise<Relay> {
  const runtime = new Runtime({ logger: recordingLogger() });
  await runtime.start();
  const port = await freePort();
  const pass = (id: string) => ({ id, interface: { inputs: ['in'], outputs: ['out'] }, nodes: [{ id: 'pass', type: 'passthrough' }], links: { in: ['pass'], pass: ['out'] } });
  runtime.publish('onramp', { id: 'web', type: 'rest', linked: true, config: { host: '127.0.0.1', port, timeout: spec.timeout } });
  runtime.publish('offramp', { id: 'hook', type: 'rest', linked: true, config: { endpoint: `http://127.0.0.1:${spec.backend.port}/`, concurrency: spec.concurrency } });
  for (const id of ['to', 'back', 'errors']) runtime.publish('pipeline', pass(id));
  runtime.publish('binding', {
    id: 'relay',
    links: {
      '/onramp/web/{instance}/out': ['/pipeline/to/{instance}/in'],
      '/pipeline/to/{instance}/out': ['/offramp/hook/{instance}/in'],
      '/offramp/hook/{instance}/out': ['/pipeline/back/{instance}/in'],
      '/pipeline/back/{instance}/out': ['/onramp/web/{instance}/in'],
      '/offramp/hook/{instance}/err': ['/pipeline/errors/{instance}/in'],
    },
  });
  await runtime.activate('binding', 'relay', 'main', {});
  const errors: EddyEvent[] = [];
  runtime.pipeline('/pipeline/errors/main')!.output('out').subscribe((e) => errors.push(e));
  return { runtime, base: `http://127.0.0.1:${port}`, errors, stop: () => runtime.shutdown() };
}

describe('rest relay (linked onramp -> linked offramp -> backend)', () => {
  let relay: Relay | undefined;
  let backend: TargetServer | undefined;
  afterEach(async () => {
    await relay?.stop();
    await backend?.close();
    relay = backend = undefined;
  });

  it('answers a caller with the backend answer', async () => {
    backend = await targetServer((req: Received, res: ServerResponse) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(req.body);
    });
    relay = await startRelay({ backend, timeout: 2000, concurrency: 2 });
    const agent = new Agent();
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(`${relay!.base}/x`, { method: 'POST', agent, headers: { 'content-type': 'application/json' } }, (res) => {
        let body = '';
        res.on('data', (c) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode!, body }));
      });
      req.on('error', reject);
      req.end('{"i":1}');
    });
    console.log(answer);
    agent.destroy();
  });
});
