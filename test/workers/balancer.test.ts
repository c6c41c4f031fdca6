/**
 * The primary's connection listeners (src/workers/balancer.ts) with a fake
 * send in place of the workers: each connection goes to the worker holding
 * the fewest, ties go round, a closed connection and a dead worker count
 * down, a port in use is refused naming the address, and the socket is
 * closed once no worker listens.
 */
import { expect } from 'chai';
import { connect, createServer, type Socket } from 'node:net';
import { ConnectionBalancer } from '../../src/workers/balancer';
import { createLogger } from '../../src/core/logger';
import { eventually } from '../helpers/runtime';

const URL = '/onramp/in/main';

describe('workers: the connection balancer', () => {
  let balancer: ConnectionBalancer;
  /** the worker each connection was handed to, in order */
  let handed: number[];
  const sockets: Socket[] = [];
  beforeEach(() => {
    handed = [];
    balancer = new ConnectionBalancer((worker, _message, socket) => {
      handed.push(worker);
      sockets.push(socket!);
      return true;
    }, createLogger('silent'));
  });
  afterEach(() => {
    balancer.close();
    for (const s of sockets.splice(0)) s.destroy();
  });

  const connectTo = async (port: number, count: number) => {
    for (let i = 0; i < count; i++) {
      const before = handed.length;
      sockets.push(connect(port, '127.0.0.1'));
      await eventually(() => handed.length === before + 1, 5000, 'the connection handed over');
    }
  };

  it('hands each connection to the worker holding the fewest, ties going round, and counts closed connections and dead workers down', async () => {
    const port = await balancer.listen(0, URL, '127.0.0.1', 0);
    expect(await balancer.listen(1, URL, '127.0.0.1', 0), 'the second worker shares the port picked for port 0').to.equal(port);
    await connectTo(port, 4);
    expect(handed).to.deep.equal([0, 1, 0, 1]);
    // worker 0 lets two go: it takes the next two
    balancer.closed(0, URL);
    balancer.closed(0, URL);
    await connectTo(port, 2);
    expect(handed.slice(4)).to.deep.equal([0, 0]);
    expect(balancer.holding()).to.deep.equal({ [URL]: { 0: 2, 1: 2 } });
    // worker 1 dies and comes back: it holds nothing, so it takes the next two
    balancer.gone(1);
    expect(balancer.holding()).to.deep.equal({ [URL]: { 0: 2 } });
    expect(await balancer.listen(1, URL, '127.0.0.1', 0)).to.equal(port);
    await connectTo(port, 3);
    expect(handed.slice(6)).to.deep.equal([1, 1, 0]);
  });

  it('refuses a port in use naming the address, and frees the port once no worker listens', async () => {
    const taken = createServer();
    await new Promise<void>((r) => taken.listen(0, '127.0.0.1', r));
    const busy = (taken.address() as { port: number }).port;
    let refusal: Error | undefined;
    await balancer.listen(0, URL, '127.0.0.1', busy).catch((e: unknown) => (refusal = e as Error));
    expect(refusal?.message).to.match(new RegExp(`^cannot listen on 127\\.0\\.0\\.1:${busy}: .*EADDRINUSE`));
    await new Promise<void>((r) => taken.close(() => r()));
    const port = await balancer.listen(0, URL, '127.0.0.1', busy);
    expect(port).to.equal(busy);
    balancer.unlisten(0, URL);
    // the primary no longer holds it: another server can bind it
    const again = createServer();
    await new Promise<void>((resolve, reject) => {
      again.once('error', reject);
      again.listen(busy, '127.0.0.1', resolve);
    });
    await new Promise<void>((r) => again.close(() => r()));
  });
});
