import { expect } from 'chai';
import { createLogger } from '../../src/core/logger';
import { Runtime } from '../../src/runtime/runtime';
import { freePort } from '../connectors/net-helpers';
import { call, eventually, startRuntime, type Started } from '../helpers/runtime';

describe('GET /health', () => {
  let rt: Started;
  let restore: () => void;
  let trigger: () => void;
  beforeEach(async () => {
    const runtime = new Runtime({ logger: createLogger('silent') });
    runtime.registerOfframp({
      name: 'flaky',
      defaultCodec: 'json',
      autoAck: true,
      configSchema: { type: 'object', additionalProperties: false, properties: {} },
      create(_config, ctx) {
        trigger = ctx.trigger;
        restore = ctx.restore;
        return { send: () => undefined };
      },
    });
    rt = await startRuntime(runtime);
  });
  afterEach(() => rt.stop());

  it('answers 200 while every instance runs, 503 naming an offramp that is down, and 200 again once it is back', async () => {
    const ok = await call(rt.base, 'GET', '/health');
    expect(ok.status).to.equal(200);
    expect((ok.body as { status: string }).status).to.equal('ok');

    for (const [kind, body] of [
      ['onramp', { id: 'tick', type: 'metronome', config: { interval: 60000 } }],
      ['offramp', { id: 'sink', type: 'flaky' }],
      [
        'binding',
        {
          id: 'flow',
          links: {
            '/onramp/tick/{instance}/out': ['/pipeline/system::passthrough/{instance}/in'],
            '/pipeline/system::passthrough/{instance}/out': ['/offramp/sink/{instance}/in'],
          },
        },
      ],
    ] as const) {
      expect((await call(rt.base, 'POST', `/${kind}`, { body })).status).to.equal(201);
    }
    expect((await call(rt.base, 'POST', '/binding/flow/main')).status).to.equal(201);
    expect((await call(rt.base, 'GET', '/health')).status).to.equal(200);

    trigger();
    const down = await call(rt.base, 'GET', '/health');
    expect(down.status).to.equal(503);
    const instances = (down.body as { instances: { url: string; state: string; reason?: string }[] }).instances;
    expect(instances.find((i) => i.url === '/offramp/sink/main')).to.deep.include({ state: 'down' });
    expect(instances.find((i) => i.url === '/onramp/tick/main')).to.deep.equal({
      url: '/onramp/tick/main',
      state: 'paused',
      reason: 'circuit breaker held by /offramp/sink/main',
    });

    restore();
    expect((await call(rt.base, 'GET', '/health')).status).to.equal(200);
  });
});

describe('GET /health/live and GET /health/ready', () => {
  let rt: Started;
  beforeEach(async () => (rt = await startRuntime()));
  afterEach(() => rt.stop());

  /** A metronome into a real tcp offramp whose peer does not listen: the sink is down. */
  async function flowToClosedPort(): Promise<void> {
    const port = await freePort(); // nothing listens there
    for (const [kind, body] of [
      ['onramp', { id: 'tick', type: 'metronome', config: { interval: 60000 } }],
      ['offramp', { id: 'dst', type: 'tcp', config: { host: '127.0.0.1', port } }],
      [
        'binding',
        {
          id: 'flow',
          links: {
            '/onramp/tick/{instance}/out': ['/pipeline/system::passthrough/{instance}/in'],
            '/pipeline/system::passthrough/{instance}/out': ['/offramp/dst/{instance}/in'],
          },
        },
      ],
    ] as const) {
      expect((await call(rt.base, 'POST', `/${kind}`, { body })).status).to.equal(201);
    }
    expect((await call(rt.base, 'POST', '/binding/flow/main')).status).to.equal(201);
  }

  it('an offramp whose sink is down: live answers 200, ready (and /health) 503 naming it', async () => {
    await flowToClosedPort();
    await eventually(async () => (await call(rt.base, 'GET', '/health/ready')).status === 503, 5000, 'ready to answer 503');
    const ready = await call(rt.base, 'GET', '/health/ready');
    const instances = (ready.body as { instances: { url: string; state: string }[] }).instances;
    expect(instances.find((i) => i.url === '/offramp/dst/main')).to.deep.include({ state: 'down' });
    const health = await call(rt.base, 'GET', '/health');
    expect(health.status).to.equal(503);
    expect(health.body).to.deep.equal(ready.body);

    const live = await call(rt.base, 'GET', '/health/live');
    expect(live.status).to.equal(200);
    expect(live.body).to.deep.equal({ status: 'ok' });
  });

  it('live answers 503 once the runtime asked to exit, saying why', async () => {
    expect((await call(rt.base, 'GET', '/health/live')).status).to.equal(200);
    rt.runtime.requestExit(3, 'the exit offramp was told to');
    const live = await call(rt.base, 'GET', '/health/live');
    expect(live.status).to.equal(503);
    expect(live.body).to.deep.equal({ status: 'unhealthy', reason: 'the runtime asked to exit (status 3): the exit offramp was told to' });
  });

  it("live's reason has the credentials of a URL in it masked (docs/security.md)", async () => {
    rt.runtime.requestExit(1, 'the store at http://eddy:s3cret@127.0.0.1:1 failed');
    const live = await call(rt.base, 'GET', '/health/live');
    expect(live.body).to.deep.equal({ status: 'unhealthy', reason: 'the runtime asked to exit (status 1): the store at http://eddy:***@127.0.0.1:1 failed' });
  });

  it('live answers 503 while (and after) the runtime shuts down', async () => {
    await rt.runtime.shutdown();
    const live = await call(rt.base, 'GET', '/health/live');
    expect(live.status).to.equal(503);
    expect(live.body).to.deep.equal({ status: 'unhealthy', reason: 'the runtime is shutting down' });
    expect((await call(rt.base, 'GET', '/health/ready')).status).to.equal(503);
  });
});
