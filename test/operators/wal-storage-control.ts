import type { WalSnapshot, WalStorage } from '../../src/pipeline/operators/wal/storage';

const ignore = () => undefined;

/** One `append` a ControlledWalStorage was asked for, waiting for the test to finish it. */
export interface PendingWrite {
  readonly seqs: number[];
  /** finishes the write: the entries are stored */
  succeed(): Promise<void>;
  /** fails the write with `message`: nothing is stored */
  fail(message: string): Promise<void>;
}

/**
 * A WAL storage whose writes finish only when the test says so, each
 * successfully or with an error. `succeed` and `fail` return once the WAL
 * has seen the outcome (its callbacks on the write's promise were attached
 * first, so they have run when the promise a test awaits settles).
 */
export class ControlledWalStorage implements WalStorage {
  readonly data = new Map<number, string>();
  readonly writes: PendingWrite[] = [];
  private lastSeq = 0;

  load(): WalSnapshot {
    return { entries: [...this.data.entries()].sort((a, b) => a[0] - b[0]), lastSeq: this.lastSeq };
  }

  append(entries: [number, string][], lastSeq: number): Promise<void> {
    let resolve!: () => void;
    let reject!: (err: Error) => void;
    const written = new Promise<void>((res, rej) => ((resolve = res), (reject = rej)));
    // attached when the test settles the write, so after the WAL's own callbacks
    const seen = () => written.then(ignore, ignore);
    this.writes.push({
      seqs: entries.map(([seq]) => seq),
      succeed: () => {
        for (const [seq, text] of entries) this.data.set(seq, text);
        this.lastSeq = lastSeq;
        resolve();
        return seen();
      },
      fail: (message) => {
        reject(new Error(message));
        return seen();
      },
    });
    return written;
  }

  remove(seqs: number[]): void {
    for (const seq of seqs) this.data.delete(seq);
  }

  close(): void {
    // nothing to release: the entries are in memory
  }
}
