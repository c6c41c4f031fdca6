import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EDDY } from '../helpers/cli';
import { eventually } from '../helpers/runtime';
import type { Status } from '../../src/terminal/client';
import { portRates } from '../../src/terminal/top';
import { serve, startTicker, type Served } from './status-flow';

const TMUX = '/usr/bin/tmux';
// our own tmux server (its own socket, in a directory removed afterwards), so no session of anyone else is touched
let socketDir = '';

function tmux(...args: string[]): Promise<string> {
  const socket = join(socketDir, 'socket');
  return new Promise((resolve, reject) =>
    execFile(TMUX, ['-S', socket, ...args], { timeout: 10_000 }, (err, stdout, stderr) =>
      err ? reject(new Error(`tmux ${args.join(' ')}: ${stderr || err.message}`)) : resolve(stdout),
    ),
  );
}

const screen = (session: string) => tmux('capture-pane', '-p', '-t', session);

/** The row of an instance's port on the screen: its cells, split on runs of spaces. */
function row(text: string, instance: string, port: string): string[] | undefined {
  return text
    .split('\n')
    .map((line) => line.trim().split(/\s+/))
    .find((cells) => cells[0] === instance && cells[1] === port);
}

describe('eddy top, in a tmux terminal', function () {
  this.timeout(30_000);
  let served: Served;

  before(async function () {
    if (!existsSync(TMUX)) {
      const message = `tmux is not installed at ${TMUX}: run scripts/install-peers`;
      if (process.env.CI) throw new Error(message);
      console.warn(`skipped: ${message}`);
      this.skip();
    }
    socketDir = mkdtempSync(join(tmpdir(), 'eddy-tmux-'));
    served = await serve();
    await startTicker(served.runtime);
  });

  after(async () => {
    if (!socketDir) return;
    await tmux('kill-server').catch(() => undefined); // already gone when every session ended
    rmSync(socketDir, { recursive: true, force: true });
    await served?.stop();
  });

  /** `eddy top` in a detached 120x30 session whose pane stays after it exits, showing its exit code. */
  async function startTop(session: string): Promise<void> {
    await tmux(
      'new-session',
      '-d',
      '-s',
      session,
      '-x',
      '120',
      '-y',
      '30',
      `${process.execPath} ${EDDY} top --api ${served.base}; echo "top exited $?"; sleep 60`,
    );
  }

  it("shows a running flow's ports with rates that move and breaker states, and q quits and restores the screen", async () => {
    await startTop('rates');
    let cells: string[] | undefined;
    await eventually(
      async () => {
        cells = row(await screen('rates'), '/pipeline/system::passthrough/main', 'out');
        return cells !== undefined && Number(cells[3]) > 0;
      },
      20_000,
      'a positive events/s on the passthrough output',
    );
    // INSTANCE PORT DIR EVENTS/S ERRORS/S TOTAL BREAKER STATE
    expect(cells!.slice(1, 3)).to.deep.equal(['out', 'out']);
    expect(cells![4]).to.equal('0.0');
    expect(cells!.slice(6)).to.deep.equal(['-', 'running']);
    const total = Number(cells![5]);
    await eventually(async () => Number(row(await screen('rates'), '/pipeline/system::passthrough/main', 'out')?.[5]) > total, 10_000, 'the total to grow');
    const text = await screen('rates');
    expect(row(text, '/onramp/ticker/main', 'out')?.slice(6)).to.deep.equal(['closed', 'running']);
    expect(text).to.match(/^INSTANCE +PORT +DIR +EVENTS\/S +ERRORS\/S +TOTAL +BREAKER +STATE$/m);

    await tmux('send-keys', '-t', 'rates', 'q');
    await eventually(async () => (await screen('rates')).includes('top exited 0'), 10_000, 'top to exit 0');
    // the alternate screen is left: the table is gone from the terminal
    expect(await screen('rates')).not.to.include('EVENTS/S');
  });

  it('Ctrl-C quits too', async () => {
    await startTop('interrupt');
    await eventually(async () => (await screen('interrupt')).includes('/onramp/ticker/main'), 20_000, 'the first frame');
    await tmux('send-keys', '-t', 'interrupt', 'C-c');
    await eventually(async () => (await screen('interrupt')).includes('top exited 0'), 10_000, 'top to exit 0');
  });
});

describe('eddy top rates', () => {
  const status = (events: number, errors = 0): Status => ({
    version: '0.1.0',
    uptime_s: 1,
    artefacts: { onramp: ['in'], offramp: [], pipeline: [], binding: [] },
    instances: [
      {
        kind: 'onramp',
        artefact: 'in',
        instance: 'main',
        url: 'x',
        state: 'running',
        breaker: 'open',
        ports: [{ port: 'out', direction: 'out', events, errors }],
      },
    ],
  });

  it('are the difference of two polls over the seconds between them', () => {
    const [row] = portRates(status(100, 2), status(150, 6), 2);
    expect(row).to.deep.include({ instance: '/onramp/in/main', port: 'out', events: 150, rate: 25, errorRate: 2, breaker: 'open' });
  });

  it('are absent on the first poll and after a restart (a count that went down)', () => {
    expect(portRates(undefined, status(5), 0)[0].rate).to.equal(undefined);
    expect(portRates(status(100), status(3), 1)[0].rate).to.equal(undefined);
  });
});
