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

/** What the sink records for the second life's one new event (the probe numbers it 1, as the first replayed one). */
const SENTINEL = 0;

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

    // second life: one new event, held back as a sentinel, and a sink that opens only once the WAL, if it has
    // started already, has loaded its log and sent its replay: a pipeline started before its sink is connected loses the replay
    const second: ProbeLog = { read: 0, acks: [], fails: [], hold: 0 };
    const registries = registriesWith([probeOnramp(second)], []);
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
        return { send: (_payloads, event) => void delivered.push((event.data as { sentinel?: boolean }).sentinel ? SENTINEL : idOf(event)) };
      },
    };
    registries.offramps.register(slowToOpen.name, slowToOpen);
    const two = await startFlow({
      registries,
      onramp: { type: 'probe', config: { count: 1, data: { sentinel: true } } },
      nodes: [{ ...wal[0], type: 'watched_wal' }],
      offramp: { type: 'slow_open' },
    });
    try {
      await eventually(() => delivered.length >= 20, 5000, 'the 20 stored events to be replayed');
      // no late duplicates: the WAL sends in log order, so a second replay of 1..20 would come before the sentinel, stored after them
      second.hold = undefined;
      await eventually(() => delivered.includes(SENTINEL), 5000, 'the sentinel');
      expect(delivered[delivered.length - 1], 'the sentinel is the last event').to.equal(SENTINEL);
      expect(delivered.slice(0, -1).sort((a, b) => a - b)).to.deep.equal(range(1, 20));
    } finally {
      await two.stop();
    }
  });
});
