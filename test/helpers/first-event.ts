import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runNode } from './cli';

/** The start-up benchmark's flow: its first event reaches stdout 1 ms after activation. */
const FLOW = join(__dirname, '../../../bench/startup.yaml');

/**
 * Preloaded into the child (`node -r`): at the first event line on stdout
 * it prints every loaded module file as one JSON line and exits.
 */
const HOOK = `
const { writeSync } = require('node:fs');
process.stdout.write = (chunk) => {
  if (!String(chunk).trimStart().startsWith('{')) return true;
  writeSync(1, 'LOADED ' + JSON.stringify(Object.keys(require.cache)) + '\\n');
  process.exit(0);
};
`;

/** A scratch directory with the hook; `remove` when done. */
export class FirstEventProbe {
  /** a one-flow config, metronome -> passthrough -> stdout */
  readonly config = FLOW;
  private readonly dir = mkdtempSync(join(tmpdir(), 'eddy-first-event-'));
  private readonly hook = join(this.dir, 'hook.js');

  constructor() {
    writeFileSync(this.hook, HOOK);
  }

  /** Runs `node -r hook ...args` and returns the module files loaded when its first event was written. */
  async modulesAtFirstEvent(args: string[]): Promise<string[]> {
    const run = await runNode(['-r', this.hook, ...args], { timeoutMs: 20_000 });
    const line = run.stdout.split('\n').find((l) => l.startsWith('LOADED '));
    expect(line, `no event line (exit ${run.code}): ${run.stderr}`).to.be.a('string');
    return JSON.parse(line!.slice('LOADED '.length)) as string[];
  }

  remove(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}
