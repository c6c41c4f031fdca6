import { expect } from 'chai';
import fc from 'fast-check';
import { Settlements, type Outcome } from '../../../src/connectors/_shared/settlement';

/**
 * Message settlement of the broker onramps (src/connectors/_shared/settlement.ts):
 * a message is settled once, after every event made from it is acked, or at
 * the first fail of one of them; later acks and fails are ignored.
 */

const ids = (...seqs: number[]) => seqs.map((seq) => ({ uid: 1, seq }));

/** Settlements of named messages, with a log of what was settled, in order. */
function recorder(limit?: number): { s: Settlements<string>; log: [string, Outcome][] } {
  const log: [string, Outcome][] = [];
  return { s: new Settlements<string>((message, outcome) => log.push([message, outcome]), limit), log };
}

describe('connector machinery: message settlement', () => {
  it('acks a message when the last of its events is acked, not before', () => {
    const { s, log } = recorder();
    s.made('m', { ids: ids(1, 2, 3), errors: [] });
    expect(s.ack({ seq: 2 })).to.equal(undefined);
    expect(s.ack({ seq: 1 })).to.equal(undefined);
    expect(log).to.deep.equal([]);
    expect(s.size).to.equal(1);
    expect(s.ack({ seq: 3 }), 'the ack that settled it names the message').to.equal('m');
    expect(log).to.deep.equal([['m', 'acked']]);
    expect(s.size).to.equal(0);
  });

  it('fails a message at the first fail of its events, and ignores what comes after', () => {
    const { s, log } = recorder();
    s.made('m', { ids: ids(1, 2, 3), errors: [] });
    s.ack({ seq: 1 });
    expect(s.fail({ seq: 2 })).to.equal('m');
    expect(log).to.deep.equal([['m', 'failed']]);
    expect(s.ack({ seq: 3 })).to.equal(undefined);
    expect(s.fail({ seq: 3 })).to.equal(undefined);
    expect(s.fail({ seq: 2 }), 'a second insight for the failed event').to.equal(undefined);
    expect(log).to.have.length(1);
  });

  it('counts an event once: a second ack of it does not stand for another event', () => {
    const { s, log } = recorder();
    s.made('m', { ids: ids(1, 2), errors: [] });
    s.ack({ seq: 1 });
    s.ack({ seq: 1 });
    expect(log).to.deep.equal([]);
    s.ack({ seq: 2 });
    expect(log).to.deep.equal([['m', 'acked']]);
  });

  it('settles at once a message that made no event: undecodable with errors, acked without', () => {
    const { s, log } = recorder();
    s.made('bad', { ids: [], errors: ['json: Unexpected token'] });
    s.made('empty', { ids: [], errors: [] });
    expect(log).to.deep.equal([
      ['bad', 'undecodable'],
      ['empty', 'acked'],
    ]);
    expect(s.size).to.equal(0);
  });

  it('waits for the events of a message that made events and errors', () => {
    const { s, log } = recorder();
    s.made('m', { ids: ids(1), errors: ['one line did not decode'] });
    expect(log).to.deep.equal([]);
    s.ack({ seq: 1 });
    expect(log).to.deep.equal([['m', 'acked']]);
  });

  it('gives a frame a done that opens its message', () => {
    const { s, log } = recorder();
    const done = s.done('m');
    done({ ids: ids(7), errors: [] });
    s.ack({ seq: 7 });
    expect(log).to.deep.equal([['m', 'acked']]);
  });

  it('forgets a message unsettled: its later acks and fails settle nothing', () => {
    const { s, log } = recorder();
    s.made('a', { ids: ids(1, 2), errors: [] });
    s.made('b', { ids: ids(3), errors: [] });
    expect(s.forget('a')).to.equal(true);
    expect(s.forget('a')).to.equal(false);
    s.ack({ seq: 1 });
    s.ack({ seq: 2 });
    s.fail({ seq: 1 });
    expect(log).to.deep.equal([]);
    expect(s.forgetAll(), 'what is still open, oldest first').to.deep.equal(['b']);
    s.ack({ seq: 3 });
    expect(log).to.deep.equal([]);
    expect(s.size).to.equal(0);
  });

  it('holds at most `limit` open messages, forgetting the oldest unsettled', () => {
    const { s, log } = recorder(2);
    s.made('a', { ids: ids(1), errors: [] });
    s.made('b', { ids: ids(2), errors: [] });
    s.made('c', { ids: ids(3), errors: [] });
    expect(s.size).to.equal(2);
    s.ack({ seq: 1 });
    s.ack({ seq: 2 });
    s.ack({ seq: 3 });
    expect(log).to.deep.equal([
      ['b', 'acked'],
      ['c', 'acked'],
    ]);
  });

  it('has its bookkeeping done when settle throws', () => {
    const s = new Settlements<string>(() => {
      throw new Error('the channel is closed');
    });
    s.made('m', { ids: ids(1, 2), errors: [] });
    expect(() => s.fail({ seq: 1 })).to.throw('the channel is closed');
    expect(s.size).to.equal(0);
    expect(s.ack({ seq: 2 })).to.equal(undefined);
  });

  it('settles every message exactly once, acked iff the first insight of each of its events is an ack, whatever the interleaving', () => {
    /** per message: its events, each with the insights the pipelines send for it (a retry may ack or fail one twice) */
    const insight = fc.constantFrom<'ack' | 'fail'>('ack', 'fail');
    const message = fc.record({
      events: fc.array(fc.array(insight, { minLength: 1, maxLength: 3 }), { maxLength: 5 }),
      errors: fc.boolean(),
    });
    const scenario = fc.array(message, { minLength: 1, maxLength: 8 }).chain((messages) => {
      // events are numbered in order, message by message; every insight names its event and message
      const all: { message: number; seq: number; kind: 'ack' | 'fail' }[] = [];
      let seq = 0;
      messages.forEach((m, message) =>
        m.events.forEach((insights) => {
          for (const kind of insights) all.push({ message, seq, kind });
          seq++;
        }),
      );
      return fc.tuple(fc.constant(messages), fc.shuffledSubarray(all, { minLength: all.length, maxLength: all.length }));
    });
    fc.assert(
      fc.property(scenario, ([messages, stream]) => {
        const log: { message: number; outcome: Outcome; at: number }[] = [];
        let at = -1;
        const s = new Settlements<number>((m, outcome) => log.push({ message: m, outcome, at }));
        // the events of each message, numbered as the scenario numbered them
        let seq = 0;
        messages.forEach((m, i) => {
          const made = m.events.map(() => ({ uid: 1, seq: seq++ }));
          s.made(i, { ids: made, errors: m.errors ? ['undecodable'] : [] });
        });
        // the model: the first insight of each event counts
        const first = new Map<number, 'ack' | 'fail'>();
        const expected = new Map<number, { outcome: Outcome; at: number }>();
        messages.forEach((m, i) => {
          if (m.events.length === 0) expected.set(i, { outcome: m.errors ? 'undecodable' : 'acked', at: -1 });
        });
        const left = messages.map((m) => m.events.length);
        stream.forEach((x, i) => {
          at = i;
          const returned = x.kind === 'ack' ? s.ack({ seq: x.seq }) : s.fail({ seq: x.seq });
          const settledNow = log.length > 0 && log[log.length - 1].at === i;
          expect(returned, 'ack/fail name the message exactly when they settle it').to.equal(settledNow ? x.message : undefined);
          if (first.has(x.seq)) return;
          first.set(x.seq, x.kind);
          if (expected.has(x.message)) return;
          if (x.kind === 'fail') expected.set(x.message, { outcome: 'failed', at: i });
          else if (--left[x.message] === 0) expected.set(x.message, { outcome: 'acked', at: i });
        });
        expect(
          log.map((e) => e.message).sort((a, b) => a - b),
          'each message settled exactly once',
        ).to.deep.equal(messages.map((_, i) => i));
        for (const e of log) expect({ outcome: e.outcome, at: e.at }, `message ${e.message}`).to.deep.equal(expected.get(e.message));
        expect(s.size).to.equal(0);
      }),
      { numRuns: 500 },
    );
  });
});
