import { expect } from 'chai';
import { firstValueFrom, filter, take, toArray } from 'rxjs';
import { createLogger } from '../../src/core/logger';
import { Runtime } from '../../src/runtime/runtime';

describe('system::metrics', () => {
  let runtime: Runtime;
  beforeEach(async () => (runtime = await new Runtime({ logger: createLogger('silent') }).start()));
  afterEach(() => runtime.shutdown());

  it('reports ramp_events of ramps and events of pipelines every metrics_interval_s, also while idle', async () => {
    runtime.publish('onramp', { id: 'idle', type: 'metronome', metrics_interval_s: 1, config: { interval: 60000 } });
    runtime.publish('offramp', {
      id: 'nowhere',
      type: 'blackhole',
      metrics_interval_s: 1,
      config: { warmup_secs: 0, stop_after_secs: 0, significant_figures: 2 },
    });
    runtime.publish('pipeline', {
      id: 'counted',
      metrics_interval_s: 1,
      interface: { inputs: ['in'], outputs: ['out'] },
      nodes: [{ id: 'pass', type: 'passthrough' }],
      links: { in: ['pass'], pass: ['out'] },
    });
    runtime.publish('binding', {
      id: 'quiet',
      links: {
        '/onramp/idle/{instance}/out': ['/pipeline/counted/{instance}/in'],
        '/pipeline/counted/{instance}/out': ['/offramp/nowhere/{instance}/in'],
      },
    });
    const metrics = runtime.pipeline('/pipeline/system::metrics/system')!.output('out');
    const ramp = firstValueFrom(
      metrics.pipe(
        filter((e) => (e.data as { measurement: string }).measurement === 'ramp_events'),
        take(6),
        toArray(),
      ),
    );
    const pipeline = firstValueFrom(
      metrics.pipe(
        filter((e) => (e.data as { measurement: string }).measurement === 'events'),
        take(1),
      ),
    );
    await runtime.activate('binding', 'quiet', 'one');
    const rampEvents = (await ramp).map((e) => e.data as { tags: { ramp: string; port: string }; fields: { count: number }; timestamp: bigint });
    expect(rampEvents.map((m) => `${m.tags.ramp} ${m.tags.port} ${m.fields.count}`)).to.have.members([
      '/onramp/idle/one in 0',
      '/onramp/idle/one out 0',
      '/onramp/idle/one error 0',
      '/offramp/nowhere/one in 0',
      '/offramp/nowhere/one out 0',
      '/offramp/nowhere/one error 0',
    ]);
    expect(typeof rampEvents[0].timestamp).to.equal('bigint');
    const event = (await pipeline).data as { tags: Record<string, string>; fields: { count: number } };
    expect(event.tags.pipeline).to.equal('/pipeline/counted/one');
    expect(event.tags).to.have.keys(['pipeline', 'node', 'direction', 'port']);
    expect(event.fields.count).to.equal(0);
  });
});
