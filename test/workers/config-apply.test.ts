import { expect } from 'chai';
import { createServer } from 'node:net';
import { call } from '../helpers/runtime';
import { freePort } from '../connectors/net-helpers';
import { killAll, startWorkers, workersRunning } from './helpers';

/** A tcp onramp into a blackhole, as one config document: the onramp runs on every worker. */
const config = (port: number) => ({
  onramp: [{ id: 'in', type: 'tcp', preprocessors: ['lines'], config: { host: '127.0.0.1', port } }],
  offramp: [{ id: 'hole', type: 'blackhole', config: { warmup_secs: 0, stop_after_secs: 0, significant_figures: 2 } }],
  flow: [{ id: 'f', from: 'in', to: 'hole' }],
});

describe('eddy server run --workers 2: POST /config', function () {
  this.timeout(180000);
  afterEach(() => killAll());

  it('takes back everything of a config the workers cannot start, then applies it on every worker once the port is free, and a third time changes nothing', async () => {
    // the port is taken by this test: every worker fails to listen, after the primary's own checks passed
    const taken = createServer();
    const port = await freePort();
    await new Promise<void>((r) => taken.listen(port, '127.0.0.1', r));
    const server = await startWorkers();
    const before = await call(server.base, 'GET', '/onramp');
    const failed = await call(server.base, 'POST', '/config', { body: config(port) });
    await new Promise<void>((r) => taken.close(() => r()));
    expect(failed.status, failed.text).to.equal(400);
    expect((failed.body as { error: string }).error).to.match(/^mapping '\/binding\/f\/main': onramp 'in' \(tcp\) cannot start: .*EADDRINUSE/);
    expect((await call(server.base, 'GET', '/onramp')).body).to.deep.equal(before.body);
    expect((await call(server.base, 'GET', '/binding')).body).not.to.include('f');
    expect(await workersRunning(server.base, '/offramp/hole/main')).to.deep.equal([]);
    const applied = await call(server.base, 'POST', '/config', { body: config(port) });
    expect(applied.status, applied.text).to.equal(201);
    expect(await workersRunning(server.base, '/onramp/in/main')).to.deep.equal([0, 1]);
    const again = await call(server.base, 'POST', '/config', { body: config(port) });
    expect(again.status, again.text).to.equal(200);
    expect(again.body).to.have.property('running').that.deep.equals(['/binding/f/main']);
  });
});
