import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runNode } from './cli';

/** A one-flow config whose first event reaches stdout 1 ms after activation (as bench/startup.yaml). */
const FLOW = `onramp: [{ id: tick, type: metronome, config: { interval: 1 } }]
binding:
  - id: b
    links:
      "/onramp/tick/{i}/out": ["/pipeline/system::passthrough/{i}/in"]
      "/pipeline/system::passthrough/{i}/out": ["/offramp/system::stdout/system/in"]
mapping: { /binding/b/main: { i: main } }
`;

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

/** A scratch directory with the flow config (flow.yaml) and the hook; `remove` when done. */
export class FirstEventProbe {
  readonly dir = mkdtempSync(join(tmpdir(), 'eddy-first-event-'));
  readonly config = join(this.dir, 'flow.yaml');
  private readonly hook = join(this.dir, 'hook.js');

  constructor() {
    writeFileSync(this.config, FLOW);
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
