import { expect } from 'chai';
import { whileArriving } from './arriving';

describe('whileArriving: a wait bounded by progress', () => {
  it('waits as long as the count grows, however long that takes overall', async () => {
    let n = 0;
    const timer = setInterval(() => n++, 10);
    try {
      // 30 steps of 10 ms each: longer in all than the stall bound of 200 ms
      await whileArriving(
        () => n,
        () => n >= 30,
        'thirty',
        { stallMs: 200 },
      );
    } finally {
      clearInterval(timer);
    }
    expect(n).to.be.at.least(30);
  });

  it('fails when nothing new arrives, saying what it waited for and how things stood', async () => {
    const error = await whileArriving(
      () => 3,
      () => false,
      'ten events',
      { stallMs: 100, state: () => 'the consumer stopped' },
    ).catch((e: unknown) => e);
    expect((error as Error).message).to.equal('waiting for ten events: nothing new for 100 ms (have 3); the consumer stopped');
  });

  it('fails at its overall bound even while things still arrive', async () => {
    let n = 0;
    const timer = setInterval(() => n++, 5);
    try {
      const error = await whileArriving(
        () => n,
        () => false,
        'the end',
        { stallMs: 10_000, maxMs: 100 },
      ).catch((e: unknown) => e);
      expect((error as Error).message).to.match(/^waiting for the end: still arriving after 100 ms \(have \d+\)$/);
    } finally {
      clearInterval(timer);
    }
  });
});
