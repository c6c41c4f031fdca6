import { expect } from 'chai';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { OfframpType } from '../../../src/connectors/connector';
import { eventually } from '../../helpers/runtime';
import { idOf, probeOnramp, range, registriesWith, sleep, startFlow, testOfframp, type ProbeLog } from './helpers';

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

    // second life: no new events, and a sink that takes 300 ms to open
    const delivered: number[] = [];
    const slowToOpen: OfframpType<Record<string, never>> = {
      name: 'slow_open',
      defaultCodec: 'json',
      autoAck: true,
      configSchema: { type: 'object', additionalProperties: false, properties: {} },
      create: async () => {
        await sleep(300);
        return { send: (_payloads, event) => void delivered.push(idOf(event)) };
      },
    };
    const two = await startFlow({
      registries: registriesWith([probeOnramp({ read: 0, acks: [], fails: [] })], [slowToOpen]),
      onramp: { type: 'probe', config: { count: 0 } },
      nodes: wal,
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
