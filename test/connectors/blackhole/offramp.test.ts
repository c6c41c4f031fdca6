import { expect } from 'chai';
import type { Histogram } from 'hdr-histogram-js';
import { createLogger } from '../../../src/core/logger';
import { event } from '../../../src/core/event';
import type { OfframpContext } from '../../../src/connectors/connector';
import { blackhole, type BlackholeReport } from '../../../src/connectors/blackhole/offramp';
import type { ExitRequest } from '../../../src/runtime/runtime';
import { eventually } from '../../helpers/runtime';
import { type Flow, type ProbeLog, probeOnramp, range, registriesWith, startFlow } from '../../integration/delivery/helpers';

/** What a blackhole asked of its context: exits and the measurements it handed over. */
interface Asked {
  exits: number[];
  measurements: object[];
}

function context(asked: Asked): OfframpContext {
  return {
    url: '/offramp/sink/test',
    uid: 1,
    hostname: 'test',
    logger: createLogger('silent'),
    requestExit: (code: number) => void asked.exits.push(code),
    publishMeasurement: (report: object, _histogram: Histogram) => void asked.measurements.push(report),
  } as unknown as OfframpContext;
}

/** How many timers the process holds: read right before and after a synchronous `create`, nothing else runs between. */
const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;

describe('blackhole offramp', () => {
  describe('with no config: a plain sink', () => {
    let flow: Flow | undefined;
    afterEach(async () => {
      await flow?.stop();
      flow = undefined;
    });

    it('acks every transactional event, counts it, and never asks the process to exit', async () => {
      const log: ProbeLog = { read: 0, acks: [], fails: [] };
      flow = await startFlow({
        registries: registriesWith([probeOnramp(log)], []),
        onramp: { type: 'probe', config: { count: 40 } },
        offramp: { type: 'blackhole' }, // published with `config: {}`
      });
      const exits: ExitRequest[] = [];
      flow.runtime.exitRequests.subscribe((e) => exits.push(e));
      await eventually(() => log.acks.length >= 40, 5000, 'acks from the blackhole');
      expect(log.acks).to.deep.equal(range(1, 40));
      expect(log.fails).to.deep.equal([]);
      const sink = flow.runtime.observe().find((o) => o.url === '/offramp/dst/main')!;
      expect(sink.state).to.equal('running');
      expect(sink.ports).to.deep.include({ port: 'in', direction: 'in', events: 40, errors: 0 });
      expect(sink.errors).to.equal(0);
      expect(exits).to.deep.equal([]);
    });

    it('holds no timer and asks for nothing: only a measurement ends the run', async () => {
      const asked: Asked = { exits: [], measurements: [] };
      const before = timers();
      const created = blackhole.create({}, context(asked));
      expect(timers()).to.equal(before);
      const sink = await created;
      for (let i = 0; i < 10; i++) await sink.send([Buffer.from('{}')], event({ i }));
      await sink.close?.();
      expect(asked).to.deep.equal({ exits: [], measurements: [] });
    });
  });

  describe('with the benchmark keys: measures as before', () => {
    it('measures, prints the report, hands it over and asks to exit 0', async () => {
      const asked: Asked = { exits: [], measurements: [] };
      const printed: string[] = [];
      // eslint-disable-next-line @typescript-eslint/unbound-method -- kept only to be put back below
      const write = process.stdout.write;
      process.stdout.write = (chunk: string | Uint8Array) => (printed.push(String(chunk)), true);
      try {
        const before = timers();
        const created = blackhole.create({ warmup_secs: 0, stop_after_secs: 0.05, significant_figures: 2, structured: true }, context(asked));
        expect(timers()).to.equal(before + 1); // the end of the measurement
        const sink = await created;
        for (let i = 0; i < 7; i++) await sink.send([Buffer.from('{"a":1}')], event({ a: 1 }));
        await eventually(() => asked.exits.length > 0, 5000, 'the end of the measurement');
        await sink.close?.();
      } finally {
        process.stdout.write = write;
      }
      expect(asked.exits).to.deep.equal([0]);
      const report = JSON.parse(printed.join('')) as BlackholeReport;
      expect(report).to.include({ events: 7, bytes: 49 });
      expect(report.latency_ns).to.have.keys('p50', 'p90', 'p99', 'p999', 'max', 'mean');
      expect(asked.measurements).to.deep.equal([report]);
    });
  });

  describe('config', () => {
    let flow: Flow | undefined;
    before(async () => {
      const log: ProbeLog = { read: 0, acks: [], fails: [] };
      flow = await startFlow({
        registries: registriesWith([probeOnramp(log)], []),
        onramp: { type: 'probe', config: { count: 0 } },
        offramp: { type: 'blackhole' },
      });
    });
    after(() => flow?.stop());
    let ids = 0;
    const publish = (config: Record<string, unknown>) => () => flow!.runtime.publish('offramp', { id: `sink_${'abcdefgh'[ids++]}`, type: 'blackhole', config });

    it('needs no config: none, or an empty one', () => {
      expect(() => flow!.runtime.publish('offramp', { id: 'bare', type: 'blackhole' })).to.not.throw();
      expect(publish({})).to.not.throw();
    });

    it('takes the three benchmark keys only together, naming the missing one', () => {
      expect(publish({ stop_after_secs: 10 })).to.throw("config: missing field 'warmup_secs', required with 'stop_after_secs'");
      expect(publish({ warmup_secs: 1, stop_after_secs: 10 })).to.throw("config: missing field 'significant_figures', required with 'warmup_secs'");
      expect(publish({ warmup_secs: 1, stop_after_secs: 10, significant_figures: 2 })).to.not.throw();
    });

    it('refuses the report options without a measurement', () => {
      expect(publish({ structured: true })).to.throw("config: missing field 'warmup_secs', required with 'structured'");
      expect(publish({ count_field: 'n' })).to.throw("config: missing field 'warmup_secs', required with 'count_field'");
    });
  });
});
