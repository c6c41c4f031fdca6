import { expect } from 'chai';
import fc from 'fast-check';
import { DEFAULT_RESTART_POLICY, RestartPolicy } from '../../src/workers/restart-policy';
import { NO_JITTER, upwardJitter } from '../../src/core/jitter';

describe('workers: the restart policy', () => {
  it('restarts with doubling delays and gives up at the fifth death in a row', () => {
    const policy = new RestartPolicy(DEFAULT_RESTART_POLICY, NO_JITTER);
    expect([1, 2, 3, 4].map(() => policy.died(1000))).to.deep.equal([
      { restart: true, delayMs: 250, attempt: 1 },
      { restart: true, delayMs: 500, attempt: 2 },
      { restart: true, delayMs: 1000, attempt: 3 },
      { restart: true, delayMs: 2000, attempt: 4 },
    ]);
    expect(policy.died(undefined)).to.deep.equal({ restart: false, deaths: 5 });
  });

  it('starts the count again after a run of at least stableMs', () => {
    const policy = new RestartPolicy(DEFAULT_RESTART_POLICY, NO_JITTER);
    for (let i = 0; i < 4; i++) policy.died(10);
    expect(policy.died(DEFAULT_RESTART_POLICY.stableMs)).to.deep.equal({ restart: true, delayMs: 250, attempt: 1 });
    expect(policy.died(DEFAULT_RESTART_POLICY.stableMs - 1)).to.deep.equal({ restart: true, delayMs: 500, attempt: 2 });
  });

  it('gives up exactly when maxDeaths short runs follow the last stable one, delays never above maxMs (property)', () => {
    const options = { initialMs: 100, factor: 3, maxMs: 2000, maxDeaths: 6, stableMs: 1000 };
    fc.assert(
      fc.property(fc.array(fc.option(fc.integer({ min: 0, max: 3000 }), { nil: undefined }), { minLength: 1, maxLength: 30 }), (runs) => {
        const policy = new RestartPolicy(options, NO_JITTER);
        let inARow = 0;
        for (const ran of runs) {
          inARow = ran !== undefined && ran >= options.stableMs ? 1 : inARow + 1;
          const decision = policy.died(ran);
          if (inARow >= options.maxDeaths) {
            expect(decision).to.deep.equal({ restart: false, deaths: inARow });
            return;
          }
          expect(decision).to.deep.equal({
            restart: true,
            attempt: inARow,
            delayMs: Math.min(options.maxMs, options.initialMs * options.factor ** (inARow - 1)),
          });
        }
      }),
    );
  });

  it('draws each delay with full jitter, up to the delay it would wait without: workers that died together are not restarted together', () => {
    const delays = Array.from({ length: 40 }, () => new RestartPolicy().died(10)).map((d) => (d as { delayMs: number }).delayMs);
    for (const delay of delays) expect(delay).to.be.within(1, DEFAULT_RESTART_POLICY.initialMs);
    expect(new Set(delays).size, 'not one beat').to.be.above(1);
  });

  it("upwardJitter (the kafka client's counted retries): each delay in [cap, 1.5 cap], so a count covers at least as long an outage", () => {
    const delays = Array.from({ length: 40 }, () => upwardJitter(200));
    for (const delay of delays) expect(delay).to.be.within(200, 300);
    expect(new Set(delays).size, 'not one beat').to.be.above(1);
  });
});
