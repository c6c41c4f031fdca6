import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { Subject, VirtualTimeScheduler, firstValueFrom, toArray, type SchedulerLike } from 'rxjs';
import { createLogger } from '../../src/core/logger';
import { Registries } from '../../src/runtime/registries';
import { Runtime } from '../../src/runtime/runtime';
import { CircuitBreaker } from '../../src/contraflow/circuit-breaker';
import { blaster } from '../../src/connectors/blaster/onramp';
import type { Frame, OnrampContext } from '../../src/connectors/connector';
import { FastSubject } from '../../src/core/fast-subject';
import { onrampContext } from '../../src/ramps/onramp';
import { BENCHES, missingTypes, template } from '../../bench/run';

const REPO = join(__dirname, '../..', '..');
const DATA = join(REPO, 'bench', 'data', 'data.json.xz');

describe('benchmark configs', () => {
  const vars = { DATA, DATA_MSGPACK: DATA, DATA_GROUPS: DATA, DATA_KEYS: DATA, WARMUP: '1', SECS: '1', INTERVAL: '1000' };

  for (const bench of BENCHES.filter((b) => b.file)) {
    it(`${bench.name}: fills every placeholder and publishes, or names what this build lacks`, async () => {
      const text = template(readFileSync(join(REPO, 'bench', bench.file!), 'utf8'), vars);
      const registries = Registries.withBuiltins();
      const missing = missingTypes(text, registries);
      if (missing.length > 0) {
        expect(missing.join(', ')).to.match(/^(codec|operator|onramp type|offramp type) /);
        return;
      }
      const runtime = new Runtime({ registries, logger: createLogger('silent') });
      const doc = parseYaml(text) as Record<string, unknown[]>;
      for (const kind of ['pipeline', 'offramp', 'onramp', 'binding'] as const) for (const a of doc[kind] ?? []) runtime.publish(kind, a);
    });
  }

  it('rejects a config with a placeholder the runner does not know', () => {
    expect(() => template('source: ${NOPE}', vars)).to.throw(/unknown placeholder \$\{NOPE\}/);
  });

  it('names a missing codec the way the runner reports a skip', () => {
    const text = 'onramp:\n  - { id: a, type: blaster, codec: nosuchcodec }\n';
    expect(missingTypes(text, Registries.withBuiltins())).to.deep.equal(['codec nosuchcodec']);
  });
});

describe('FastSubject', () => {
  it('delivers like a Subject: in subscription order, changes to the observers apply from the next value', () => {
    const subject = new FastSubject<number>();
    const seen: string[] = [];
    const a = subject.subscribe((v) => {
      seen.push(`a${v}`);
      if (v === 1) a.unsubscribe();
      if (v === 1) subject.subscribe((w) => seen.push(`c${w}`));
    });
    subject.subscribe((v) => seen.push(`b${v}`));
    subject.next(1);
    subject.next(2);
    subject.complete();
    subject.next(3);
    expect(seen).to.deep.equal(['a1', 'b1', 'b2', 'c2']);
  });

  it('throws when used after unsubscribe, as a Subject does', () => {
    const subject = new FastSubject<number>();
    subject.unsubscribe();
    expect(() => subject.next(1)).to.throw(/object unsubscribed/);
  });
});

describe('blaster at full speed', () => {
  const ctx = (breaker: CircuitBreaker, scheduler?: SchedulerLike): OnrampContext =>
    onrampContext({ url: '/onramp/blaster/test', uid: 1, hostname: 'test', logger: createLogger('silent'), requestExit: () => undefined }, breaker, {
      scheduler,
    });

  it('sends exactly `iters` events, a chunk sharing one ingest time', async () => {
    const source = await blaster.create({ source: DATA, iters: 150, base64: false }, ctx(new CircuitBreaker()));
    const frames = await firstValueFrom(source.frames.pipe(toArray()));
    expect(frames).to.have.length(150);
    expect(frames[1].ingestNs).to.equal(frames[0].ingestNs);
    expect(new Set(frames.map((f) => f.ingestNs)).size).to.be.greaterThan(1);
  });

  it('stops between two events of a chunk when the breaker triggers, and goes on after restore', async () => {
    const breaker = new CircuitBreaker();
    // virtual time: flush() runs every step the pull loop schedules, until it has nothing left to do
    const scheduler = new VirtualTimeScheduler();
    const source = await blaster.create({ source: DATA, iters: 20, base64: false }, ctx(breaker, scheduler));
    const got: Frame[] = [];
    const done = new Subject<void>();
    source.frames.subscribe({
      next: (f) => {
        got.push(f);
        if (got.length === 3) breaker.trigger('/offramp/slow/test');
      },
      complete: () => done.next(),
    });
    scheduler.flush();
    // the loop is idle, waiting for the breaker: it sent nothing after the event that triggered it
    expect(got).to.have.length(3);
    const finished = firstValueFrom(done);
    breaker.restore('/offramp/slow/test');
    scheduler.flush();
    await finished;
    expect(got).to.have.length(20);
  });
});
