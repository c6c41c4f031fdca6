/**
 * Soak: a paced blaster replays the repository's sample events
 * (bench/data/data.json.xz) through a realistic pipeline (`runtime::cel`
 * classifies each event and adds fields, `generic::batch` groups them) to a
 * tcp offramp. Its peer is a TCP server run by this script that counts the
 * lines it receives and drops every connection at a fixed period; the
 * offramp has to reconnect each time. Every few seconds the eddy child's
 * RSS is read from /proc/<pid>/status (VmRSS) and its CPU time from
 * /proc/<pid>/stat.
 *
 * The blaster sends rate x duration events (`iters`) and stops; once the
 * server has received nothing for a while the child gets SIGTERM. Events
 * are not transactional here (a blaster ignores acks and fails), so an
 * event the offramp fails while its peer is away is gone: sent minus
 * received measures what each disconnect costs.
 */
import { writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { cpuSeconds, freePort } from '../child';
import { MetricsReader, REPO, envNumber, exitWithin, fill, rssBytes, sleep, startEddy, tempDir } from './common';

export interface RssSample {
  /** seconds since the child started */
  t: number;
  rssBytes: number;
  /** lines the sink had received by then */
  received: number;
}

export interface SoakResult {
  minutes: number;
  rate: number;
  disconnectEverySecs: number;
  sampleEverySecs: number;
  events: number;
  batch: { count: number; timeoutMs: number };
  samples: RssSample[];
  /** seconds (since the child started) at which the sink dropped its connections */
  disconnects: number[];
  connections: number;
  received: number;
  receivedBytes: number;
  /** the blaster's `out` count: events it emitted */
  sent?: number;
  /** the tcp offramp's counters, in batches */
  offramp: { in?: number; out?: number; error?: number };
  cpuSeconds?: number;
  wallSeconds: number;
  exitMs: number;
  exitCode: number | null;
  /** the source had not sent everything when the deadline came */
  cutShort: boolean;
}

const CONFIG = `onramp:
  - id: source
    type: blaster
    codec: json
    metrics_interval_s: \${METRICS}
    config: { source: "\${DATA}", interval: \${INTERVAL}, iters: \${ITERS} }
pipeline:
  - id: classify
    interface: { inputs: [in], outputs: [out] }
    nodes:
      - id: classify
        type: "runtime::cel"
        config:
          meta:
            class: 'event.short_message.lowerAscii() == "error" ? "error" : event.application'
            dimensions: "event.logger_name"
          set:
            severity: 'event.short_message.lowerAscii() == "error" ? "error" : "info"'
            source_host: "event.syslog_hostname"
          remove: ["array"]
      - { id: batch, type: "generic::batch", config: { count: \${BATCH}, timeout: \${TIMEOUT} } }
    links: { in: [classify], classify: [batch], batch: [out] }
offramp:
  - id: sink
    type: tcp
    codec: json
    postprocessors: [lines]
    metrics_interval_s: \${METRICS}
    config: { host: 127.0.0.1, port: \${PORT} }
binding:
  - id: soak
    links:
      "/onramp/source/{instance}/out": ["/pipeline/classify/{instance}/in"]
      "/pipeline/classify/{instance}/out": ["/offramp/sink/{instance}/in"]
      "/pipeline/system::metrics/system/out": ["/offramp/system::stdout/system/in"]
mapping:
  /binding/soak/main: { instance: main }
`;

/** The peer of the tcp offramp: counts received lines and bytes, and can drop every open connection. */
class LineSink {
  lines = 0;
  bytes = 0;
  connections = 0;
  private readonly sockets = new Set<Socket>();
  private server?: Server;

  async listen(port: number): Promise<void> {
    this.server = createServer((socket) => {
      this.connections++;
      this.sockets.add(socket);
      socket.on('data', (chunk: Buffer) => {
        this.bytes += chunk.length;
        for (const b of chunk) if (b === 0x0a) this.lines++;
      });
      socket.on('error', () => undefined); // a reset by our own destroy, or by the child's exit
      socket.on('close', () => this.sockets.delete(socket));
    });
    await new Promise<void>((resolve, reject) => {
      this.server!.once('error', reject);
      this.server!.listen(port, '127.0.0.1', () => resolve());
    });
  }

  /** Drops every connection at once (a reset, as when the peer's process dies); the server keeps listening. */
  dropAll(): void {
    for (const s of this.sockets) s.destroy();
  }

  async close(): Promise<void> {
    this.dropAll();
    await new Promise((r) => this.server?.close(r));
  }
}

export async function runSoak(log: (line: string) => void): Promise<SoakResult> {
  const minutes = envNumber('RELIABILITY_SOAK_MIN', 30, 0.1);
  const rate = envNumber('RELIABILITY_SOAK_RATE', 3000, 1);
  const disconnectEverySecs = envNumber('RELIABILITY_SOAK_DISCONNECT_S', 180, 1);
  const sampleEverySecs = envNumber('RELIABILITY_SOAK_SAMPLE_S', 5, 0.5);
  const metricsSecs = 5;
  const quietMs = 3 * metricsSecs * 1000;
  const batch = { count: 50, timeoutMs: 100 };
  const events = Math.round(rate * minutes * 60);
  const tmp = tempDir('soak');
  const sink = new LineSink();
  try {
    const port = await freePort();
    await sink.listen(port);
    const config = join(tmp.path, 'soak.yaml');
    writeFileSync(
      config,
      fill(CONFIG, {
        DATA: join(REPO, 'bench', 'data', 'data.json.xz'),
        INTERVAL: Math.round(1e9 / rate),
        ITERS: events,
        METRICS: metricsSecs,
        PORT: port,
        BATCH: batch.count,
        TIMEOUT: batch.timeoutMs,
      }),
    );
    const metrics = new MetricsReader();
    const started = performance.now();
    const elapsed = () => (performance.now() - started) / 1000;
    const proc = startEddy(['server', 'run', '-f', config, '--api-port', '0'], metrics.line);
    const samples: RssSample[] = [];
    const disconnects: number[] = [];
    let cpu: number | undefined;
    const sample = () => {
      const rss = rssBytes(proc.pid);
      if (rss !== undefined) samples.push({ t: elapsed(), rssBytes: rss, received: sink.lines });
      cpu = cpuSeconds(proc.pid) ?? cpu;
    };
    const sampler = setInterval(sample, sampleEverySecs * 1000);
    const dropper = setInterval(() => {
      disconnects.push(elapsed());
      sink.dropAll();
      log(
        `soak: ${elapsed().toFixed(0)} s, dropped the offramp's connection (${sink.lines} lines so far, RSS ${((samples.at(-1)?.rssBytes ?? 0) / 1048576).toFixed(1)} MB)`,
      );
    }, disconnectEverySecs * 1000);
    let exitMs = 0;
    let exitCode: number | null = null;
    let cutShort = false;
    try {
      // the source stops by itself after `events`; the deadline only bounds a stall
      const deadline = Date.now() + minutes * 60000 + Math.max(120000, minutes * 60000 * 0.2);
      let lastCount = -1;
      let lastGrowth = Date.now();
      for (;;) {
        await sleep(1000);
        if (proc.exit) throw new Error(`eddy exited during the soak (${proc.exit.signal ?? proc.exit.code}): ${proc.stderrTail().slice(-1000)}`);
        if (sink.lines !== lastCount) {
          lastCount = sink.lines;
          lastGrowth = Date.now();
        }
        const sentAll = (metrics.get('/onramp/source/main|out') ?? 0) >= events;
        if (sentAll && Date.now() - lastGrowth > quietMs) break;
        if (Date.now() > deadline) {
          cutShort = !sentAll;
          break;
        }
      }
      clearInterval(sampler);
      clearInterval(dropper);
      sample();
      const signalled = performance.now();
      proc.child.kill('SIGTERM');
      exitCode = (await exitWithin(proc, 60000, 'the soak flow after SIGTERM')).code;
      exitMs = performance.now() - signalled;
    } finally {
      clearInterval(sampler);
      clearInterval(dropper);
      await proc.kill();
    }
    return {
      minutes,
      rate,
      disconnectEverySecs,
      sampleEverySecs,
      events,
      batch,
      samples,
      disconnects,
      connections: sink.connections,
      received: sink.lines,
      receivedBytes: sink.bytes,
      sent: metrics.get('/onramp/source/main|out'),
      offramp: { in: metrics.get('/offramp/sink/main|in'), out: metrics.get('/offramp/sink/main|out'), error: metrics.get('/offramp/sink/main|error') },
      cpuSeconds: cpu,
      wallSeconds: elapsed(),
      exitMs,
      exitCode,
      cutShort,
    };
  } finally {
    await sink.close();
    tmp.remove();
  }
}

/** Least-squares slope of RSS over time, in MB per hour, over the samples from `fromT` seconds on. */
export function rssSlopeMbPerHour(samples: RssSample[], fromT: number): number | undefined {
  const s = samples.filter((x) => x.t >= fromT);
  if (s.length < 3) return undefined;
  const n = s.length;
  const mt = s.reduce((a, x) => a + x.t, 0) / n;
  const mr = s.reduce((a, x) => a + x.rssBytes, 0) / n;
  let num = 0;
  let den = 0;
  for (const x of s) {
    num += (x.t - mt) * (x.rssBytes - mr);
    den += (x.t - mt) ** 2;
  }
  return den === 0 ? undefined : ((num / den) * 3600) / 1048576;
}
