import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { walFileKillRun } from './kill-run';

/**
 * qos::wal + file offramp across kill -9, with the sink writing while the
 * process dies: the file offramp acks an event only once its bytes are
 * written (before, it acked when they were buffered, and the WAL let go of
 * up to a flush's worth of events that never reached the file). See
 * kill-run.ts for how the run goes and why every id up to the highest seen
 * must be there; duplicates are allowed (at-least-once) and counted.
 */
describe('delivery: qos::wal -> file offramp loses nothing on kill -9', function () {
  this.timeout(120000);
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'eddy-walfile-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  for (const fsync of [false, true]) {
    it(`every id the WAL stored is in the file once the WAL replayed (fsync: ${fsync})`, async () => {
      const result = await walFileKillRun({ dir, total: 20000, killAfterLines: 4000, fsync });
      expect(result.firstSignal).to.equal('SIGKILL');
      expect(result.secondCode, result.secondStderr).to.equal(0);
      expect(result.linesBeforeKill).to.be.at.least(4000);
      // the WAL still held events the first run had not written: had it dropped acked-but-unwritten ones, they would be missing here
      expect(result.backlog, JSON.stringify(result)).to.be.above(0);
      expect(result.lost, `${result.lost.length} ids lost`).to.deep.equal([]);
    });
  }
});
