import { expect } from 'chai';
import { drawMarbles, testPipeline } from '../../src/testing';
import { parseDiagram } from '../../src/testing/marbles';
import type { Frame } from '../../src/testing/run';
import { mulberry32 } from '../helpers/random';

/** Frames as the comparison sees them, from parsed messages: the letter is the value. */
function framesOf(marbles: string): Frame[] {
  return parseDiagram(marbles).map((m) => {
    const n = m.notification as { kind: 'N' | 'C' | 'E'; value?: unknown };
    return n.kind === 'N' ? { frame: m.frame, kind: 'N', value: n.value } : { frame: m.frame, kind: n.kind };
  });
}

const draw = (frames: Frame[]) => drawMarbles(frames, (v) => v as string);

/** Steps between notifications: often none (a group), short ones (inside a group's width or not), and gaps drawn as time. */
const STEPS = [0, 0, 0, 1, 1, 2, 3, 4, 5, 31, 600_000];

/** A random notification sequence: letters at non-decreasing frames, ended (or not) by a completion or an error. */
function randomFrames(next: () => number): Frame[] {
  const frames: Frame[] = [];
  let frame = STEPS[next() % STEPS.length];
  for (let n = next() % 12; n > 0; n--) {
    frames.push({ frame, kind: 'N', value: 'abcdef'[next() % 6] });
    frame += STEPS[next() % STEPS.length];
  }
  const end = next() % 3;
  if (end === 1) frames.push({ frame, kind: 'C' });
  if (end === 2) frames.push({ frame, kind: 'E' });
  return frames;
}

describe('marble diagrams: what eddy test draws it reads back', () => {
  it('draws events inside the width of a group after a frame marker, and parses that back', () => {
    const frames: Frame[] = [
      { frame: 6, kind: 'N', value: 'x' },
      { frame: 6, kind: 'N', value: 'y' },
      { frame: 7, kind: 'N', value: 'z' },
      { frame: 7, kind: 'C' },
    ];
    expect(draw(frames)).to.equal('------(xy)‹7›(z|)');
    expect(framesOf('------(xy)‹7›(z|)')).to.deep.equal(frames);
    // after a marker the frames count from it: z at 7 takes one frame, so w at 10 is two dashes on
    expect(framesOf('(xy)‹1›z--w')).to.deep.equal([
      { frame: 0, kind: 'N', value: 'x' },
      { frame: 0, kind: 'N', value: 'y' },
      { frame: 1, kind: 'N', value: 'z' },
      { frame: 4, kind: 'N', value: 'w' },
    ]);
  });

  it('round trip: draw then parse gives the same notifications, for 2000 random sequences', () => {
    const next = mulberry32(36);
    for (let i = 0; i < 2000; i++) {
      const frames = randomFrames(next);
      const drawn = draw(frames);
      expect(framesOf(drawn), `${JSON.stringify(frames)} drawn as ${drawn}`).to.deep.equal(frames);
    }
  });

  it('refuses a frame marker inside a group, or one without a number, naming the diagram', () => {
    expect(() => parseDiagram('(a‹3›b)')).to.throw("'(a‹3›b)': a frame marker ‹n› cannot stand inside a group (…)");
    expect(() => parseDiagram('a‹x›b')).to.throw("'a‹x›b': a frame marker is written ‹n›, n a frame number");
  });

  it("a failing case's actual diagram, pasted as the expected one, passes", () => {
    // two inputs: a and b together on one, c a frame later on the other, so c falls inside the group (ab)
    const merge = {
      id: 'merge',
      interface: { inputs: ['left', 'right'], outputs: ['out'] },
      nodes: [{ id: 'p', type: 'passthrough' }],
      links: { left: ['p'], right: ['p'], p: ['out'] },
    };
    const base = { name: 'merge', pipeline: merge, values: { a: 1, b: 2, c: 3 }, in: { left: '(ab)|', right: '-c|' } };
    const failing = testPipeline({ ...base, out: { out: '-' } });
    expect(failing.passed).to.equal(false);
    const actual = drawMarbles(failing.ports[0].actual, (v) => ({ 1: 'a', 2: 'b', 3: 'c' })[(v as { data: number }).data] ?? '?');
    expect(actual).to.equal('(ab)‹1›c--|');
    expect(testPipeline({ ...base, out: { out: actual } })).to.include({ passed: true });
  });
});
