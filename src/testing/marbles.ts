import { TestScheduler } from 'rxjs/testing';
import { invalid } from '../core/errors';

/** One parsed notification: its frame and RxJS notification, as `TestScheduler.parseMarbles` returns them. */
export type MarbleMessage = ReturnType<typeof TestScheduler.parseMarbles>[number];

/** A frame marker: what follows `‹n›` starts at frame n. */
const MARKER = /‹(\d+)›/g;

/**
 * Parses an expected diagram in virtual time (one character is one frame):
 * RxJS marble syntax, plus the frame marker `‹n›` that `drawMarbles` writes
 * where marble syntax cannot place a notification (inside the width of a
 * group before it, `(xy)‹7›z`): what follows the marker starts at frame n.
 * Each stretch between markers is parsed by RxJS itself, so everything else
 * means what it means in RxJS. `values` maps letters to values (the letters
 * themselves when absent).
 */
export function parseDiagram<T>(marbles: string, values?: Record<string, T>): MarbleMessage[] {
  const parse = (): MarbleMessage[] => {
    const messages: MarbleMessage[] = [];
    let offset = 0;
    let from = 0;
    const stretch = (end: number) => {
      const text = marbles.slice(from, end);
      if (/[‹›]/.test(text)) throw invalid(`'${marbles}': a frame marker is written ‹n›, n a frame number`);
      for (const m of TestScheduler.parseMarbles(text, values, undefined, undefined, true)) messages.push({ ...m, frame: m.frame + offset });
    };
    for (const marker of marbles.matchAll(MARKER)) {
      stretch(marker.index);
      // a marker inside a group would cut it in two: RxJS would read both halves as groups of their own
      const before = marbles.slice(0, marker.index);
      if (before.split('(').length !== before.split(')').length) throw invalid(`'${marbles}': a frame marker ‹n› cannot stand inside a group (…)`);
      offset = Number(marker[1]);
      from = marker.index + marker[0].length;
    }
    stretch(marbles.length);
    return messages;
  };
  // a character is one frame only inside TestScheduler.run (outside it is ten): parse inside one unless already there
  // (a run inside a run would undo the outer one's virtual time when it ends)
  return oneFramePerCharacter() ? parse() : new TestScheduler(() => undefined).run(parse);
}

/**
 * Whether a diagram character is one frame here, asked of RxJS's parser
 * (where the next event after one dash lands) rather than read from
 * `TestScheduler.frameTimeFactor`, a deprecated static RxJS 8 removes.
 */
function oneFramePerCharacter(): boolean {
  return TestScheduler.parseMarbles('-a', undefined, undefined, undefined, true)[0].frame === 1;
}
