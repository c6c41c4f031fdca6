import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { expect } from 'chai';
// a real Prometheus text-format parser, not ours
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import type { EddyEvent } from '../../../src/core/event';
import type { OnrampRuntime } from '../../../src/ramps/onramp';
import { UNREAD_REPLIES, UNREAD_REPLIES_CLOSE_CODE, type WsOnrampSource } from '../../../src/connectors/ws/onramp';
import type { Runtime } from '../../../src/runtime/runtime';
import { eventually, startRuntime, type Started } from '../../helpers/runtime';
import { Client, freePort } from './helpers';

const KiB = 1024;
const MiB = 1024 * KiB;
const URL = '/onramp/ws/main';

interface Report {
  event: string;
  sent?: number;
  buffered?: number;
  received?: number;
  code?: number;
  reason?: string;
}

/**
 * The client that sends requests and does not read (unread-client.ts), in a
 * process of its own: what it buffers is not in this process's memory, which
 * is the eddy under test.
 */
class UnreadClient {
  private readonly reports: Report[] = [];
  private readonly exited: Promise<void>;

  private constructor(private readonly child: ChildProcess) {
    createInterface({ input: child.stdout! }).on('line', (line) => this.reports.push(JSON.parse(line) as Report));
    this.exited = new Promise((resolve) => child.once('exit', () => resolve()));
  }

  static async open(url: string): Promise<UnreadClient> {
    const child = spawn(process.execPath, [join(__dirname, 'unread-client.js'), url], { stdio: ['pipe', 'pipe', 'inherit'] });
    const client = new UnreadClient(child);
    await client.next('open');
    return client;
  }

  command(command: Record<string, unknown>): void {
    this.child.stdin!.write(`${JSON.stringify(command)}\n`);
  }

  /** a report of this kind is queued */
  has(event: string): boolean {
    return this.reports.some((r) => r.event === event);
  }

  /** The next report of this kind (taken from the queue). */
  async next(event: string, ms = 60_000): Promise<Report> {
    await eventually(() => this.reports.some((r) => r.event === event || r.event === 'error'), ms, `the client to report ${event}`);
    const at = this.reports.findIndex((r) => r.event === event || r.event === 'error');
    const [report] = this.reports.splice(at, 1);
    if (report.event === 'error') throw new Error(`the client failed: ${JSON.stringify(report)}`);
    return report;
  }

  async stop(): Promise<void> {
    this.child.stdin!.end(); // it terminates its socket and exits
    await this.exited;
  }
}

/** The ws source of a running instance (what the machinery wraps). */
function wsSource(onramp: OnrampRuntime): WsOnrampSource {
  return (onramp as unknown as { parts: { source: WsOnrampSource } }).parts.source;
}

describe('ws onramp, linked: a client that does not read its replies', function () {
  this.timeout(120_000);
  let started: Started;
  let runtime: Runtime;
  let port: number;
  let unread: UnreadClient | undefined;
  const clients: Client[] = [];

  beforeEach(async () => {
    started = await startRuntime();
    runtime = started.runtime;
    port = await freePort();
  });
  afterEach(async () => {
    await unread?.stop();
    unread = undefined;
    await Promise.all(clients.splice(0).map((c) => c.close()));
    await started.stop();
  });

  /** A linked ws onramp; with `echo`, a passthrough pipeline answers every request with itself. */
  async function serve(config: Record<string, unknown>, echo: boolean): Promise<{ onramp: OnrampRuntime; source: WsOnrampSource }> {
    runtime.publish('onramp', { id: 'ws', type: 'ws', linked: true, config: { host: '127.0.0.1', port, ...config } });
    runtime.publish('pipeline', {
      id: 'p',
      interface: { inputs: ['in'], outputs: ['out'] },
      nodes: [{ id: 'pass', type: 'passthrough' }],
      links: { in: ['pass'], pass: ['out'] },
    });
    const links: Record<string, string[]> = { '/onramp/ws/{instance}/out': ['/pipeline/p/{instance}/in'] };
    if (echo) links['/pipeline/p/{instance}/out'] = ['/onramp/ws/{instance}/in'];
    runtime.publish('binding', { id: 'b', links });
    await runtime.activate('binding', 'b', 'main');
    const onramp = runtime.onramp(URL)!.runtime;
    return { onramp, source: wsSource(onramp) };
  }

  async function scrape(): Promise<{ name: string; metrics: { value?: string; labels?: Record<string, string> }[] }[]> {
    const res = await fetch(`${started.base}/metrics`);
    expect(res.status).to.equal(200);
    return parsePrometheusTextFormat(await res.text()) as never;
  }

  async function closedMetric(): Promise<number | undefined> {
    const family = (await scrape()).find((f) => f.name === 'eddy_onramp_connections_closed_total');
    const series = family?.metrics.find((m) => m.labels?.artefact === 'ws' && m.labels?.reason === UNREAD_REPLIES);
    return series?.value === undefined ? undefined : Number(series.value);
  }

  it('stops reading it past reply_pause_bytes (what it sends stays in its own buffer, memory stays flat), and reads it again once it reads', async () => {
    const PAUSE = 256 * KiB;
    const REQUEST = 4 * KiB;
    const { onramp, source } = await serve({ reply_pause_bytes: PAUSE }, true);
    const rssBefore = process.memoryUsage().rss;
    unread = await UnreadClient.open(`ws://127.0.0.1:${port}/`);

    // It writes as a polite client would (only while its own socket takes the data) and does not read. Eddy stops
    // reading it once the replies it cannot send pass the bound; without that eddy reads all 50,000 requests
    // (200 MB) and keeps every reply, and the client stops at its cap instead.
    unread.command({ cmd: 'write', bytes: REQUEST, cap: 50_000 });
    await eventually(() => source.overfull === 1 || unread!.has('stopped'), 60_000, 'eddy to stop reading the client, or the client to reach its cap');
    unread.command({ cmd: 'stop' });
    const wrote = await unread.next('stopped');
    // the mechanism: eddy paused that socket for its unsent replies (not its breaker), and holds about the bound
    expect(source.overfull, `connections paused for unsent replies, after ${wrote.sent} requests`).to.equal(1);
    expect(onramp.inputs(), 'sockets reading').to.deep.equal({ open: 1, reading: 0 });
    expect(onramp.breaker.isOpen, 'the circuit breaker is closed: this is not its pause').to.equal(true);
    expect(source.unsent, 'reply bytes eddy holds unsent')
      .to.be.at.least(PAUSE)
      .and.below(PAUSE + MiB);

    // it keeps sending: the kernel's buffers between the two fill up, then its own unsent bytes grow to 8 MiB
    unread.command({ cmd: 'fill', bytes: REQUEST, until: 8 * MiB, cap: wrote.sent! + 25_000 });
    const filled = await unread.next('filled');
    expect(filled.buffered, `the client's unsent bytes after ${filled.sent} requests`).to.be.at.least(8 * MiB);
    const read = onramp.counters.out;
    expect(read, 'requests read').to.be.below(filled.sent!);

    // 256 more requests: none is read, they stay in the client
    unread.command({ cmd: 'send', count: 256, bytes: REQUEST });
    const more = await unread.next('sent');
    expect(more.buffered! - filled.buffered!, 'of the 1 MiB more it sent, still in the client').to.be.at.least(0.9 * 256 * REQUEST);
    // a later event through the same onramp: another client's request is read and answered meanwhile
    const other = await Client.open(`ws://127.0.0.1:${port}/`);
    clients.push(other);
    await other.send('{"other":1}');
    await eventually(() => other.received.length === 1, 5000, "the other client's reply");
    expect(onramp.counters.out, 'requests read: only the other client’s one more').to.equal(read + 1);
    const grown = process.memoryUsage().rss - rssBefore;
    expect(grown, 'RSS growth (bytes)').to.be.below(100 * MiB);
    expect(source.closedConnections!()).to.deep.equal({ [UNREAD_REPLIES]: 0 });
    expect(await closedMetric(), 'eddy_onramp_connections_closed_total{reason="unread_replies"}').to.equal(0);

    // it reads: eddy's unsent replies fall to half the bound, eddy reads it again, and every request gets its reply
    unread.command({ cmd: 'read' });
    const done = await unread.next('read');
    expect(done.received).to.equal(more.sent);
    expect(onramp.counters.out).to.equal(more.sent! + 1);
    expect(source.overfull).to.equal(0);
    expect(source.closedConnections!()).to.deep.equal({ [UNREAD_REPLIES]: 0 });
  });

  it('closes it with status 1008 past reply_close_bytes, counted as unread_replies in /metrics and /status, and holds no more than that', async () => {
    const CLOSE = MiB;
    const REPLY = 512 * KiB;
    const { onramp, source } = await serve({ reply_pause_bytes: 64 * KiB, reply_close_bytes: CLOSE }, false);
    const requests: EddyEvent[] = [];
    runtime
      .pipeline('/pipeline/p/main')!
      .outputs.get('out')!
      .subscribe((e) => requests.push(e));
    const client = await Client.open(`ws://127.0.0.1:${port}/`);
    clients.push(client);
    client.socket.pause(); // reads nothing
    for (let n = 0; n < 64; n++) await client.send(JSON.stringify({ n }));
    await eventually(() => requests.length === 64 && source.waiting === 64, 5000, '64 requests waiting for their replies');

    // replies that come after the requests were read (a pipeline that asks elsewhere): 32 MiB for a client that reads none
    const pad = 'x'.repeat(REPLY);
    for (const request of requests) onramp.reply({ ...request, data: { ...(request.data as object), pad } });

    expect(source.closedConnections!(), 'connections closed, by reason').to.deep.equal({ [UNREAD_REPLIES]: 1 });
    expect(source.unsent, 'reply bytes eddy holds unsent')
      .to.be.at.least(CLOSE)
      .and.below(CLOSE + REPLY + KiB);
    expect(source.waiting, 'requests still waiting').to.equal(0);
    expect(await closedMetric(), 'eddy_onramp_connections_closed_total{reason="unread_replies"}').to.equal(1);
    const status = (await (await fetch(`${started.base}/status`)).json()) as { instances: { url: string; connections_closed?: Record<string, number> }[] };
    expect(status.instances.find((i) => i.url === URL)?.connections_closed).to.deep.equal({ [UNREAD_REPLIES]: 1 });

    // once it reads, it gets the replies sent before the close, in order, then the close status that says why
    client.socket.resume();
    await eventually(() => client.closed, 10_000, 'the client to see the close');
    expect(client.closedWith).to.deep.equal({ code: UNREAD_REPLIES_CLOSE_CODE, reason: 'replies not read' });
    const got = client.received.map((r) => (JSON.parse(r.text) as { n: number }).n);
    expect(got).to.deep.equal(Array.from({ length: got.length }, (_, i) => i));
    expect(got.length, 'replies sent before the close').to.be.within(1, 63);
    await eventually(() => onramp.inputs()!.open === 0, 5000, 'eddy to see the closing handshake end');
  });

  it('refuses reply_close_bytes not greater than reply_pause_bytes, naming the field', () => {
    expect(() =>
      runtime.publish('onramp', { id: 'bad', type: 'ws', linked: true, config: { port: 0, reply_pause_bytes: 4096, reply_close_bytes: 4096 } }),
    ).to.throw(/config\.reply_close_bytes: must be greater than reply_pause_bytes \(4096 <= 4096\)/);
  });
});
