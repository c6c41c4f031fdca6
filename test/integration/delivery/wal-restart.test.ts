import { expect } from 'chai';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defer } from 'rxjs';
import type { OfframpType } from '../../../src/connectors/connector';
import type { OperatorType } from '../../../src/pipeline/operator';
import type { WalNode } from '../../../src/pipeline/operators/wal';
import { eventually } from '../../helpers/runtime';
import { idOf, probeOnramp, range, registriesWith, startFlow, testOfframp, type ProbeLog } from './helpers';

describe('delivery: qos::wal replays after a restart even when the sink is slow to open', () => {
  it('the pipeline starts only once its offramp is connected, so a replay at start reaches the sink', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'eddy-wal-restart-'));
    const wal = [{ id: 'wal', type: 'qos::wal', config: { dir, read_count: 8, max_elements: 1000 } }];

    // first life: the sink fails everything, so the WAL keeps all 20 events
    const first: ProbeLog = { read: 0, acks: [], fails: [] };
    const failing = testOfframp('failing', () => {
      throw new Error('down');
    });
    const one = await startFlow({
      registries: registriesWith([probeOnramp(first)], [failing]),
      onramp: { type: 'probe', config: { count: 20 } },
      nodes: wal,
      offramp: { type: 'failing' },
    });
    await eventually(() => first.acks.length === 20, 5000, 'the WAL to ack all 20 events upstream');
    await one.stop();

    // second life: no new events, and a sink that opens only once the WAL, if it has started already, has
    // loaded its log and sent its replay: a pipeline started before its sink is connected loses the replay
    const registries = registriesWith([probeOnramp({ read: 0, acks: [], fails: [] })], []);
    const walType = registries.operators.get('qos::wal') as OperatorType<unknown>;
    let walNode: WalNode | undefined;
    let walStarted = false;
    registries.operators.register('watched_wal', {
      ...walType,
      name: 'watched_wal',
      create(config, ctx) {
        const node = (walNode = walType.create(config, ctx) as WalNode);
        return { ...node, apply: (input) => defer(() => ((walStarted = true), node.apply(input))) };
      },
    });
    const delivered: number[] = [];
    const slowToOpen: OfframpType<Record<string, never>> = {
      name: 'slow_open',
      defaultCodec: 'json',
      autoAck: true,
      configSchema: { type: 'object', additionalProperties: false, properties: {} },
      create: async () => {
        // the pipelines are built before the offramps, so the WAL node exists by now
        expect(walNode, 'the WAL node built before the sink').to.not.equal(undefined);
        if (walStarted) await walNode!.loaded;
        return { send: (_payloads, event) => void delivered.push(idOf(event)) };
      },
    };
    registries.offramps.register(slowToOpen.name, slowToOpen);
    const two = await startFlow({
      registries,
      onramp: { type: 'probe', config: { count: 0 } },
      nodes: [{ ...wal[0], type: 'watched_wal' }],
      offramp: { type: 'slow_open' },
    });
    try {
      await eventually(() => delivered.length >= 20, 5000, 'the 20 stored events to be replayed');
      expect([...delivered].sort((a, b) => a - b)).to.deep.equal(range(1, 20));
    } finally {
      await two.stop();
    }
  });
});
