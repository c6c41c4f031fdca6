import { ApiClient, ApiUnreachable, instancePath, type ClientOptions, type Status } from './client';
import { formatDuration } from './status';
import { table } from './table';

const REFRESH_MS = 1000;
// ANSI: the alternate screen keeps the user's scrollback; the cursor is hidden while drawing
const ENTER = '\x1b[?1049h\x1b[?25l';
const LEAVE = '\x1b[?25h\x1b[?1049l';
const HOME = '\x1b[H';
const CLEAR_LINE = '\x1b[K';
const CLEAR_BELOW = '\x1b[J';

/** One row of `eddy top`: a port of an instance with its rates over the last refresh. */
export interface PortRate {
  /** `/kind/artefact/instance` */
  instance: string;
  port: string;
  direction: 'in' | 'out';
  events: number;
  /** events/s since the previous poll; undefined on the first */
  rate?: number;
  errorRate?: number;
  breaker: 'open' | 'closed' | null;
  state: string;
}

/** Per-port rates: the difference of the cumulative counts of two polls over the seconds between them. */
export function portRates(previous: Status | undefined, current: Status, seconds: number): PortRate[] {
  const before = new Map<string, { events: number; errors: number }>();
  for (const instance of previous?.instances ?? []) {
    for (const p of instance.ports) before.set(`${instancePath(instance)}#${p.direction}#${p.port}`, p);
  }
  const rows: PortRate[] = [];
  for (const instance of current.instances) {
    for (const p of instance.ports) {
      const old = before.get(`${instancePath(instance)}#${p.direction}#${p.port}`);
      // a restarted instance starts counting again: no rate for a count that went down
      const usable = old !== undefined && seconds > 0 && p.events >= old.events;
      rows.push({
        instance: instancePath(instance),
        port: p.port,
        direction: p.direction,
        events: p.events,
        rate: usable ? (p.events - old.events) / seconds : undefined,
        errorRate: usable ? Math.max(0, p.errors - old.errors) / seconds : undefined,
        breaker: instance.breaker,
        state: instance.state,
      });
    }
  }
  // by instance; within one, the ports in the API's order (stable sort)
  return rows.sort((a, b) => a.instance.localeCompare(b.instance));
}

export function renderTop(api: string, status: Status | undefined, rows: PortRate[], error: string | undefined, now: Date): string {
  const head = status ? `eddy ${status.version} at ${api}, up ${formatDuration(status.uptime_s)}` : `eddy at ${api}`;
  const lines = [`${head} · ${now.toISOString().slice(11, 19)} UTC · q or Ctrl-C quits`, ''];
  if (error) lines.push(`error: ${error} (retrying every second)`, '');
  if (status) {
    const rate = (r?: number) => (r === undefined ? '-' : r.toFixed(1));
    const body = table(
      ['INSTANCE', 'PORT', 'DIR', 'EVENTS/S', 'ERRORS/S', 'TOTAL', 'BREAKER', 'STATE'],
      rows.map((r) => [r.instance, r.port, r.direction, rate(r.rate), rate(r.errorRate), String(r.events), r.breaker ?? '-', r.state]),
    );
    lines.push(...body.trimEnd().split('\n'));
    if (rows.length === 0) lines.push('(no instance has ports: nothing runs)');
  }
  return lines.join('\n');
}

/** `eddy top` (its flags: src/cli/top.ts): a full-screen view of per-port rates, refreshed every second, until q or Ctrl-C. */
export async function runTop(options: ClientOptions): Promise<number> {
  const client = new ApiClient(options);
  const out = process.stdout;
  const input = process.stdin;
  let previous: { status: Status; at: number } | undefined;
  let timer: NodeJS.Timeout | undefined;
  let polling = false;

  const draw = (text: string) => {
    const width = out.columns || 120;
    const height = out.rows || 40;
    // cut to the screen, so a long table never scrolls the frame away
    const fitted = text
      .split('\n')
      .slice(0, height)
      .map((l) => l.slice(0, width) + CLEAR_LINE);
    out.write(HOME + fitted.join('\r\n') + CLEAR_BELOW);
  };
  const poll = async () => {
    if (polling) return; // a slow API: skip a tick rather than pile requests up
    polling = true;
    try {
      const status = await client.status();
      const at = Date.now();
      const rows = portRates(previous?.status, status, previous ? (at - previous.at) / 1000 : 0);
      previous = { status, at };
      draw(renderTop(options.api, status, rows, undefined, new Date()));
    } catch (e) {
      if (!(e instanceof ApiUnreachable)) throw e;
      draw(renderTop(options.api, previous?.status, [], e.message, new Date()));
    } finally {
      polling = false;
    }
  };

  return new Promise<number>((resolve) => {
    let done = false;
    const quit = () => {
      if (done) return;
      done = true;
      clearInterval(timer);
      if (input.isTTY) input.setRawMode(false);
      input.pause();
      out.write(LEAVE);
      resolve(0);
    };
    out.write(ENTER);
    // raw mode: keys arrive one by one, and Ctrl-C arrives as a byte instead of a signal
    if (input.isTTY) input.setRawMode(true);
    input.on('data', (key: Buffer) => {
      const k = key.toString();
      if (k === 'q' || k === 'Q' || k === '\x03') quit();
    });
    input.on('end', quit);
    process.once('SIGINT', quit);
    process.once('SIGTERM', quit);
    void poll();
    timer = setInterval(() => void poll(), REFRESH_MS);
  });
}
