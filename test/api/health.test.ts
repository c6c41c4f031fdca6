import { expect } from 'chai';
import { createLogger } from '../../src/core/logger';
import { Runtime } from '../../src/runtime/runtime';
import { call, startRuntime, type Started } from '../helpers/runtime';

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
