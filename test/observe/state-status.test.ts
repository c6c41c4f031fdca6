/**
 * What a stateful node holds, visible to a user: the source partitions it
 * keeps state for and each partition's watermark, in /status (`nodes`), in
 * `eddy status` and in /metrics.
 */
import { expect } from 'chai';
import { Subject } from 'rxjs';
import type { Frame, OnrampType } from '../../src/connectors/connector';
import { createLogger } from '../../src/core/logger';
import { renderStatus } from '../../src/terminal/status';
import { PrometheusExporter } from '../../src/runtime/observe/prometheus';
import { status } from '../../src/runtime/observe/status';
import { Runtime } from '../../src/runtime/runtime';
import { eventually } from '../helpers/runtime';
import { registriesWith, testOfframp } from '../integration/delivery/helpers';

describe('the state of a pipeline node by source partition, in /status, eddy status and /metrics', () => {
  let runtime: Runtime | undefined;
  afterEach(async () => {
    await runtime?.shutdown();
    runtime = undefined;
  });

  it('lists the partitions a window holds and their watermarks', async () => {
    const frames = new Subject<Frame>();
    const onramp: OnrampType<Record<string, never>> = {
      name: 'parts',
      defaultCodec: 'json',
      configSchema: { type: 'object', additionalProperties: false, properties: {} },
      create: () => ({ frames }),
    };
    let delivered = 0;
    runtime = new Runtime({
      registries: registriesWith(
        [onramp],
        [
          testOfframp('collect', () => {
            delivered++;
          }),
        ],
      ),
      logger: createLogger('silent'),
    });
    await runtime.start();
    runtime.publish('onramp', { id: 'src', type: 'parts', config: {} });
    runtime.publish('pipeline', {
      id: 'win',
      interface: { inputs: ['in'], outputs: ['out'] },
      nodes: [{ id: 'count', type: 'window::aggregate', config: { window: { size: 10 }, time: 'event.ts', aggregate: { n: 'count()' } } }],
      links: { in: ['count'], count: ['out'] },
    });
    runtime.publish('offramp', { id: 'dst', type: 'collect', config: {} });
    runtime.publish('binding', {
      id: 'flow',
      links: { '/onramp/src/{instance}/out': ['/pipeline/win/{instance}/in'], '/pipeline/win/{instance}/out': ['/offramp/dst/{instance}/in'] },
    });
    await runtime.activate('binding', 'flow', 'main', {});
    const send = (partition: string, ts: number) => frames.next({ stream: partition, partition, value: { ts }, originUri: `test://${partition}` });
    send('t/0', 1_700_000_000_000);
    send('t/1', 1_700_000_005_000);
    send('t/0', 1_700_000_020_000);
    await eventually(() => delivered === 1, 5000, "t/0's first window");

    const body = status(runtime);
    const node = body.instances.find((i) => i.url === '/pipeline/win/main')!.nodes![0];
    expect(node.partitions).to.deep.equal(['t/0', 't/1']);
    expect(node.watermarks).to.deep.equal({ 't/0': 1_700_000_020_000, 't/1': 1_700_000_005_000 });

    const text = renderStatus(body, 'http://test');
    expect(text).to.match(/STATE BY SOURCE PARTITION\n.*PARTITION\s+WATERMARK/);
    expect(text).to.match(/\/pipeline\/win\/main\s+count\s+t\/1\s+2023-11-14T22:13:25\.000Z/);

    const metrics = await new PrometheusExporter().scrape(runtime.observe());
    expect(metrics).to.include('eddy_pipeline_node_partitions{kind="pipeline",artefact="win",instance="main",node="count"} 2');
    expect(metrics).to.include('eddy_pipeline_node_watermark_ms{kind="pipeline",artefact="win",instance="main",node="count",partition="t/0"} 1700000020000');
  });
});
