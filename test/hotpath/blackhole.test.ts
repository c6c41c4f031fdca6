import { expect } from 'chai';
import { blackhole, type BlackholeReport } from '../../src/connectors/blackhole/offramp';
import type { OfframpContext } from '../../src/connectors/connector';
import type { EddyEvent } from '../../src/core/event';
import { event } from '../../src/core/event';
import { nowNs } from '../../src/core/clock';
import { eventually } from '../helpers/runtime';

/** The blackhole records per turn (one clock reading, one histogram entry per ingest time) yet counts every event. */
describe('hot path: the blackhole records every event, per turn', function () {
  this.timeout(10000);

  it('counts events and bytes of several turns and ingest times; no latency below the events’ age', async () => {
    let exited = false;
    const ctx = { url: '/offramp/bh/main', requestExit: () => void (exited = true) } as unknown as OfframpContext;
    const written: string[] = [];
    const write = process.stdout.write;
    process.stdout.write = ((chunk: string) => (written.push(String(chunk)), true)) as typeof process.stdout.write;
    try {
      const sink = await blackhole.create({ warmup_secs: 0, stop_after_secs: 0.2, significant_figures: 2, structured: true }, ctx);
      const aged = (ms: number): EddyEvent => event({}, {}, { ingestNs: nowNs() - BigInt(ms * 1e6) });
      const payload = [Buffer.from('0123456789')];
      // first turn: three events read together (one ingest time) and one read alone
      const together = aged(50);
      for (let i = 0; i < 3; i++) sink.send(payload, { ...together });
      sink.send(payload, aged(20));
      await Promise.resolve();
      // a later turn: two more
      await new Promise((r) => setImmediate(r));
      sink.send(payload, aged(30));
      sink.send(payload, aged(30));
      await eventually(() => exited, 5000, 'the report');
      const report = JSON.parse(written.join('')) as BlackholeReport;
      expect(report.events).to.equal(6);
      expect(report.bytes).to.equal(60);
      expect(report.latency_ns.max).to.be.at.least(50e6);
      expect(report.latency_ns.p50).to.be.at.least(20e6);
      await sink.close?.();
    } finally {
      process.stdout.write = write;
    }
  });
});
