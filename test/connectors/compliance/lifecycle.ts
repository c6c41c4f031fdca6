import { requireService, serviceRunning } from '../../helpers/services';
import { expect } from 'chai';
import { availableParallelism } from 'node:os';
import { Registries } from '../../../src/runtime/registries';
import { harnesses, notDrivable, type OfframpHarness, type OnrampHarness } from './harness';
import type { Side } from './protocol';
import { EXIT_DEADLINE_MS, runInChild, type RunReport } from './run-child';

/** Children at a time: each mostly waits on its events and its shutdown, but loading the runtime costs CPU. */
const PARALLEL = Math.min(6, availableParallelism() + 1);

function harnessFor(side: Side, type: string): OnrampHarness | OfframpHarness | undefined {
  return harnesses[type]?.[side];
}

/** The child's output, for a failure message. */
function output(report: RunReport): string {
  const cut = (s: string) => (s.length > 2000 ? `…${s.slice(-2000)}` : s);
  return `\n--- child stdout ---\n${cut(report.stdout)}\n--- child stderr ---\n${cut(report.stderr)}`;
}

/** Runs `jobs` with at most `limit` at a time; each result is available as soon as its job is done. */
function pool<T>(jobs: (() => Promise<T>)[], limit: number): Promise<T>[] {
  let next = 0;
  const results = jobs.map(() => {
    let resolve!: (value: T) => void;
    let reject!: (err: unknown) => void;
    const promise = new Promise<T>((res, rej) => ((resolve = res), (reject = rej)));
    return { promise, resolve, reject };
  });
  const worker = async () => {
    while (next < jobs.length) {
      const i = next++;
      await jobs[i]().then(results[i].resolve, results[i].reject);
    }
  };
  for (let w = 0; w < Math.min(limit, jobs.length); w++) void worker();
  return results.map((r) => r.promise);
}

/**
 * The lifecycle half of the compliance suite, for every builtin type of one
 * side (`Registries.withBuiltins()`), each in its own child process with its
 * harness: it starts with the harness config, the events pass and are
 * counted (in, out, bytes; a bad event as an error), and after
 * `runtime.shutdown()` nothing is left (no handle, timer, socket or file
 * descriptor) and the child exits by itself. A type without a harness fails.
 */
export function describeLifecycle(side: Side): void {
  const registries = Registries.withBuiltins();
  const types = side === 'onramp' ? registries.onramps.names() : registries.offramps.names();

  describe(`connector compliance: every builtin ${side} runs, counts and releases everything (one child process each)`, function () {
    this.timeout(EXIT_DEADLINE_MS + 60_000);
    const runs = new Map<string, Promise<RunReport>>();

    before(() => {
      const driven = types.filter((type) => harnessFor(side, type) && !notDrivable[`${side}:${type}`]);
      const jobs = driven.map((type) => async (): Promise<RunReport> => {
        const harness = harnessFor(side, type)!;
        // a type whose server is down is skipped (or, under CI, failed) by its own suite below; running it
        // anyway would only wait out its client's retries (pubsub's: 60 s) and hold up the whole suite
        const service = harnesses[type]?.service;
        if (service && !(await serviceRunning(service))) {
          return { startError: `${service} is not running`, exitedByItself: false, exitCode: null, stdout: '', stderr: '' };
        }
        const error = side === 'offramp' || !(harness as OnrampHarness).noBadInput;
        return runInChild(side, type, harness, { error }).catch((err: unknown): RunReport => ({
          startError: `the run itself failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`,
          exitedByItself: false,
          exitCode: null,
          stdout: '',
          stderr: '',
        }));
      });
      pool(jobs, PARALLEL).forEach((run, i) => runs.set(driven[i], run));
    });
    after(() => Promise.all(runs.values()));

    for (const type of types) {
      describe(`${side} ${type}`, () => {
        const reason = notDrivable[`${side}:${type}`];
        if (reason) {
          it(`is not driven by the suite: ${reason}`);
          return;
        }
        const harness = harnessFor(side, type);
        if (!harness) {
          it('has a compliance harness', () => {
            throw new Error(`no compliance harness for ${type} (${side}): add one to test/connectors/compliance/harness.ts`);
          });
          return;
        }
        const report = () => runs.get(type)!;
        const onramp = side === 'onramp' ? (harness as OnrampHarness) : undefined;
        const offramp = side === 'offramp' ? harness : undefined;
        const service = harnesses[type]?.service;
        if (service) {
          before(async function () {
            await requireService(this, service);
          });
        }

        it('starts with the harness config, also right after an instance of it was created and deactivated', async () => {
          const r = await report();
          expect(r.startError, `${r.startError}${output(r)}`).to.equal(undefined);
        });

        if (harness.unopenable) {
          it(`refuses to activate when it cannot open ${harness.unopenable.what}: a 400 naming the artefact`, async () => {
            const r = await report();
            expect(r.refusalError, `${r.refusalError}${output(r)}`).to.equal(undefined);
            expect(r.refusal?.activated, 'activated although it could not open what it needs').to.equal(false);
            expect(r.refusal?.code, r.refusal?.message).to.equal('invalid');
            expect(r.refusal?.message).to.contain("'broken'");
          });
        }

        const noBytes = onramp?.noBytes ?? offramp?.noBytes;
        const bytesNote = noBytes ? ` (not bytes: ${noBytes})` : ' and bytes';
        it(`passes the events and counts them: in, out${bytesNote}`, async () => {
          const r = await report();
          expect(r.eventsError, `${r.eventsError ?? r.startError}${output(r)}`).to.equal(undefined);
          const c = r.status!.counters;
          expect(c.in, 'in').to.be.greaterThan(0);
          expect(c.out, 'out').to.be.greaterThan(0);
          if (!noBytes) expect(c.bytes, 'bytes').to.be.greaterThan(0);
          // an offramp took the bad event in too, and sent out only the good one
          if (side === 'offramp') expect(c.in, 'in: the bad and the good event').to.be.at.least(2);
        });

        if (onramp?.noBadInput) {
          it(`counts no errors (no bad input: ${onramp.noBadInput})`, async () => {
            const r = await report();
            expect(r.status?.counters.error, `${r.eventsError ?? r.startError ?? ''}${output(r)}`).to.equal(0);
          });
        } else {
          it('counts a bad event as an error, and the good one after it still passes', async () => {
            const r = await report();
            expect(r.status?.counters.error, `${r.eventsError ?? r.startError ?? ''}${output(r)}`).to.be.greaterThan(0);
          });
        }

        it('releases every resource on shutdown: no handle, timer, socket or file is left', async () => {
          const r = await report();
          expect(r.leftovers, `the child printed no report${output(r)}`).to.not.equal(undefined);
          const { resources, fds, turns } = r.leftovers!;
          expect({ resources, fds }, `left after shutdown and ${turns} polling turns`).to.deep.equal({ resources: [], fds: [] });
        });

        it('exits by itself once shut down', async () => {
          const r = await report();
          const left = r.leftovers ? JSON.stringify(r.leftovers) : 'no report';
          expect(r.exitedByItself, `killed after ${EXIT_DEADLINE_MS} ms; left: ${left}${output(r)}`).to.equal(true);
          expect(r.exitCode, `exit status; left: ${left}${output(r)}`).to.equal(0);
        });
      });
    }
  });
}
