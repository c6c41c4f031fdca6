import { expect } from 'chai';
import { Lru } from '../../src/core/lru';

describe('Lru: a bounded map evicting the least recently used key', () => {
  it('evicts the least recently inserted key when nothing was read', () => {
    const lru = new Lru<string, number>(2);
    lru.set('a', 1);
    lru.set('b', 2);
    lru.set('c', 3);
    expect([...lru.keys()]).to.deep.equal(['b', 'c']);
    expect(lru.get('a')).to.equal(undefined);
    expect(lru.size).to.equal(2);
  });

  it('a get makes its key the most recently used, so another key is evicted', () => {
    const lru = new Lru<string, number>(3);
    for (const [k, v] of [
      ['a', 1],
      ['b', 2],
      ['c', 3],
    ] as const)
      lru.set(k, v);
    expect(lru.get('a')).to.equal(1); // oldest -> newest
    expect(lru.get('b')).to.equal(2); // oldest -> newest
    expect([...lru.keys()]).to.deep.equal(['c', 'a', 'b']);
    lru.set('d', 4);
    expect([...lru.keys()]).to.deep.equal(['a', 'b', 'd']);
    expect(lru.get('c')).to.equal(undefined);
  });

  it('a get of a middle key and of the newest key keeps the list whole', () => {
    const lru = new Lru<number, string>(4);
    for (let i = 1; i <= 4; i++) lru.set(i, String(i));
    lru.get(3); // middle
    lru.get(3); // already the newest
    lru.get(1); // the oldest
    expect([...lru.keys()]).to.deep.equal([2, 4, 3, 1]);
    for (let i = 5; i <= 7; i++) lru.set(i, String(i));
    expect([...lru.keys()]).to.deep.equal([1, 5, 6, 7]);
    expect(lru.size).to.equal(4);
  });

  it('setting a present key replaces its value and refreshes it, without growing', () => {
    const lru = new Lru<string, number>(2);
    lru.set('a', 1);
    lru.set('b', 2);
    lru.set('a', 10);
    expect(lru.size).to.equal(2);
    lru.set('c', 3); // evicts b, the least recently used
    expect([...lru.keys()]).to.deep.equal(['a', 'c']);
    expect(lru.get('a')).to.equal(10);
  });

  it('works with a capacity of one', () => {
    const lru = new Lru<string, number>(1);
    lru.set('a', 1);
    lru.set('b', 2);
    expect([...lru.keys()]).to.deep.equal(['b']);
    expect(lru.get('b')).to.equal(2);
    lru.set('a', 3);
    expect([...lru.keys()]).to.deep.equal(['a']);
  });

  it('stays consistent with a model under a seeded random mix of gets and sets', () => {
    // model: an array of keys, least recently used first
    let seed = 7;
    const random = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
    const lru = new Lru<number, number>(5);
    const model: number[] = [];
    const values = new Map<number, number>();
    for (let step = 0; step < 5000; step++) {
      const key = random(9);
      if (random(2) === 0) {
        const got = lru.get(key);
        const at = model.indexOf(key);
        expect(got, `get ${key} at step ${step}`).to.equal(at < 0 ? undefined : values.get(key));
        if (at >= 0) model.push(...model.splice(at, 1));
      } else {
        lru.set(key, step);
        values.set(key, step);
        const at = model.indexOf(key);
        if (at >= 0) model.splice(at, 1);
        model.push(key);
        if (model.length > 5) model.shift();
      }
      expect([...lru.keys()], `order at step ${step}`).to.deep.equal(model);
    }
  });

  it('deletes, peeks and walks both ways under a seeded random mix, and set names the key it evicted', () => {
    let seed = 11;
    const random = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
    const lru = new Lru<number, number>(4);
    // model: [key, value] pairs, least recently used first
    const model: [number, number][] = [];
    for (let step = 0; step < 5000; step++) {
      const key = random(7);
      const at = model.findIndex(([k]) => k === key);
      switch (random(4)) {
        case 0: {
          expect(lru.delete(key), `delete ${key} at step ${step}`).to.equal(at >= 0);
          if (at >= 0) model.splice(at, 1);
          break;
        }
        case 1:
          expect(lru.peek(key), `peek ${key} at step ${step}`).to.equal(at < 0 ? undefined : model[at][1]);
          expect(lru.has(key)).to.equal(at >= 0);
          break;
        default: {
          const evicted = lru.set(key, step);
          if (at >= 0) model.splice(at, 1);
          model.push([key, step]);
          const expected = model.length > 4 ? model.shift()![0] : undefined;
          expect(evicted, `set ${key} at step ${step}`).to.equal(expected);
        }
      }
      expect([...lru.entries()], `order at step ${step}`).to.deep.equal(model);
      expect([...lru.newestFirst()]).to.deep.equal([...model].reverse());
      expect(lru.peekOldest()).to.equal(model[0]?.[1]);
      expect(lru.size).to.equal(model.length);
    }
  });

  it('refuses a capacity below one', () => {
    expect(() => new Lru(0)).to.throw(RangeError, /capacity of at least 1, got 0/);
  });
});
