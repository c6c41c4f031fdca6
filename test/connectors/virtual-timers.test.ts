import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { VirtualTimeScheduler } from 'rxjs';
import type { OfframpContext, OnrampContext, Frame } from '../../src/connectors/connector';
import { exit } from '../../src/connectors/exit/offramp';
import { fileOnramp } from '../../src/connectors/file/onramp';
import { event } from '../../src/core/event';

/**
 * The exit offramp's `delay` and the file onramp's `sleep_on_done` wait on
 * the runtime's scheduler, so a runtime in virtual time (an application's
 * marble test) waits in virtual time, not in wall-clock time.
 */
describe('timers on the runtime scheduler: exit delay, file sleep_on_done', () => {
  it('exit: asks to exit once `delay` ms of the scheduler have passed, not before; close cancels', () => {
    const run = (maxFrames: number, close: boolean): number[] => {
      const scheduler = new VirtualTimeScheduler(undefined, maxFrames);
      const exits: number[] = [];
      const ctx = { scheduler, url: '/offramp/stop/main', requestExit: (code: number) => exits.push(code) } as unknown as OfframpContext;
      const sink = exit.create({}, ctx) as { send(p: Buffer[], e: ReturnType<typeof event>): void; close(): void };
      sink.send([], event({ exit: 3, delay: 5000 }));
      if (close) sink.close();
      scheduler.flush();
      return exits;
    };
    expect(run(4999, false), 'before the delay').to.deep.equal([]);
    expect(run(5000, false), 'at the delay').to.deep.equal([3]);
    expect(run(Infinity, true), 'closed first').to.deep.equal([]);
  });

  it('file: after the end of the file, completes once sleep_on_done ms of the scheduler have passed', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'eddy-vt-'));
    try {
      const source = join(dir, 'in.json');
      writeFileSync(source, '{"a":1}\n');
      const scheduler = new VirtualTimeScheduler();
      const ctx = { scheduler, url: '/onramp/in/main', hostname: 'test', requestExit: () => undefined } as unknown as OnrampContext;
      const onramp = (await fileOnramp.create({ source, close_on_done: false, sleep_on_done: 60_000 }, ctx)) as { frames: import('rxjs').Observable<Frame> };
      let completed = false;
      let sawEnd!: () => void;
      const ended = new Promise<void>((resolve) => (sawEnd = resolve));
      const subscription = onramp.frames.subscribe({ next: (f) => f.end === true && sawEnd(), complete: () => (completed = true) });
      // the file is read for real, so wait for its end frame however long the
      // disk takes (no turn count: a loaded CI machine needs more turns); after
      // that only virtual time is left to pass
      await ended;
      expect(completed, 'before sleep_on_done has passed').to.equal(false);
      scheduler.flush();
      expect(completed, 'after 60 s of virtual time').to.equal(true);
      subscription.unsubscribe();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
