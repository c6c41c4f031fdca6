/**
 * Helpers for the otel offramp tests: a private OpenTelemetry Collector
 * with the file exporter (built by scripts/services.d/otelcol.sh
 * file-binary, run here with a config of the test's own, on free ports,
 * writing its own file), and flows around the offramp.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Subject } from 'rxjs';
import type { Frame } from '../../../src/connectors/connector';
import type { Meta } from '../../../src/core/event';
import { createLogger, type Logger } from '../../../src/core/logger';
import { Registries } from '../../../src/runtime/registries';
import { Runtime } from '../../../src/runtime/runtime';
import { feedOnramp } from '../../helpers/feed-onramp';
import { eventually } from '../../helpers/runtime';
import { privateServiceLeftOut, SERVICES_SCRIPT, skipWithout } from '../../helpers/services';
import { freePort } from '../net-helpers';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- OTLP JSON read field by field in assertions

/** Long enough for a first build of the collector (Go module downloads and compile). */
const BUILD_TIMEOUT_MS = 600_000;

/** The path of the collector with the file exporter, built once (cached by the script). */
function fileCollectorBinary(dir: string): Promise<string> {
  const script = join(SERVICES_SCRIPT, '../services.d/otelcol.sh');
  // a state directory of the test's own: the script never touches the shared collector's
  return new Promise((resolve, reject) =>
    execFile('bash', [script, 'file-binary'], { env: { ...process.env, EDDY_SERVICES_DIR: dir }, timeout: BUILD_TIMEOUT_MS }, (err, stdout, stderr) =>
      err ? reject(new Error(`otelcol.sh file-binary failed: ${err.message}\n${stderr}`)) : resolve(stdout.trim().split('\n').pop()!),
    ),
  );
}

/**
 * A Collector of the test's own: the otlp receiver (gRPC and HTTP, on free
 * loopback ports) and the file exporter writing every export request it
 * received as one OTLP/JSON line. `stop` and `start` again keep its ports.
 */
export class FileCollector {
  private child: ChildProcess | undefined;
  private exited: Promise<void> = Promise.resolve();
  readonly file: string;
  private readonly config: string;
  private readonly log: string;

  private constructor(
    private readonly dir: string,
    private readonly binary: string,
    readonly grpcPort: number,
    readonly httpPort: number,
    tls?: { cert: string; key: string },
  ) {
    this.file = join(dir, 'out.jsonl');
    this.config = join(dir, 'config.yaml');
    this.log = join(dir, 'collector.log');
    let tlsLines: string[] = [];
    if (tls !== undefined) {
      writeFileSync(join(dir, 'cert.pem'), tls.cert);
      writeFileSync(join(dir, 'key.pem'), tls.key);
      tlsLines = ['        tls:', `          cert_file: ${join(dir, 'cert.pem')}`, `          key_file: ${join(dir, 'key.pem')}`];
    }
    writeFileSync(
      this.config,
      [
        'receivers:',
        '  otlp:',
        '    protocols:',
        '      grpc:',
        `        endpoint: 127.0.0.1:${grpcPort}`,
        ...tlsLines,
        '      http:',
        `        endpoint: 127.0.0.1:${httpPort}`,
        ...tlsLines,
        'exporters:',
        '  file:',
        `    path: ${this.file}`,
        '    flush_interval: 50ms',
        'service:',
        '  telemetry:',
        '    metrics:',
        '      level: none',
        '  pipelines:',
        '    traces: { receivers: [otlp], exporters: [file] }',
        '    logs: { receivers: [otlp], exporters: [file] }',
        '    metrics: { receivers: [otlp], exporters: [file] }',
        '',
      ].join('\n'),
    );
  }

  /**
   * Builds (first time) and starts one; `start: false` only places it (its
   * ports chosen, nothing listening yet); `tls`: its receivers serve TLS
   * with that certificate and key (PEM).
   */
  static async create(ctx: Mocha.Context, options: { start?: boolean; tls?: { cert: string; key: string } } = {}): Promise<FileCollector> {
    const reason = privateServiceLeftOut('otelcol');
    if (reason) skipWithout(ctx, 'otelcol', 'no private collector is started', reason);
    const timeout = ctx.timeout();
    ctx.timeout(Math.max(timeout, BUILD_TIMEOUT_MS + 10_000));
    const dir = mkdtempSync(join(tmpdir(), 'eddy-otelcol-file-'));
    try {
      const binary = await fileCollectorBinary(dir);
      const collector = new FileCollector(dir, binary, await freePort(), await freePort(), options.tls);
      if (options.start !== false) await collector.start();
      return collector;
    } catch (err) {
      rmSync(dir, { recursive: true, force: true });
      throw err;
    } finally {
      ctx.timeout(timeout);
    }
  }

  /** Starts the process and waits until its log says it is ready. */
  async start(): Promise<void> {
    writeFileSync(this.log, '');
    const child = spawn(this.binary, [`--config=${this.config}`], { stdio: ['ignore', 'ignore', 'pipe'] });
    this.child = child;
    let output = '';
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      writeFileSync(this.log, output);
    });
    this.exited = new Promise((resolve) => child.once('exit', () => resolve()));
    await eventually(() => output.includes('Everything is ready') || child.exitCode !== null, 30_000, 'the collector ready');
    if (child.exitCode !== null) throw new Error(`the collector exited (${child.exitCode}):\n${output.slice(-2000)}`);
  }

  /** Stops the process (SIGTERM to this child only) and waits until it is gone. */
  async stop(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (child?.exitCode !== null) return;
    child.kill('SIGTERM');
    await this.exited;
  }

  async dispose(): Promise<void> {
    await this.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }

  /** Every export request the file exporter wrote so far (OTLP/JSON). */
  requests(): Json[] {
    if (!existsSync(this.file)) return [];
    const lines = readFileSync(this.file, 'utf8').split('\n');
    // the last piece is a line still being written (or empty after the final newline)
    return lines
      .slice(0, -1)
      .filter((line) => line.trim() !== '')
      .map((line) => JSON.parse(line) as Json);
  }

  /** Every resource of `list` (resourceSpans, resourceLogs, resourceMetrics) the collector received. */
  resources(list: 'resourceSpans' | 'resourceLogs' | 'resourceMetrics'): Json[] {
    return this.requests().flatMap((r) => (r[list] as Json[] | undefined) ?? []);
  }
}

/**
 * The value as proto3 compares messages: fields holding their default (0,
 * false, "", an empty message or list) left out, recursively. The
 * Collector's JSON writes an empty `scope: {}` and leaves out zeros that the
 * JS SDK encodes explicitly (`droppedAttributesCount: 0`); either way it is
 * the same message.
 */
export function withoutEmpty(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutEmpty);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    const inner = withoutEmpty(v);
    if (inner === 0 || inner === false || inner === '') continue;
    if (inner !== null && typeof inner === 'object' && Object.keys(inner).length === 0) continue;
    out[key] = inner;
  }
  return out;
}

/** A test source: the test pushes each event's data and meta; the acks and fails that come back are kept (by event seq). */
export interface Feed {
  push(value: unknown, meta?: Meta): void;
  acks: number[];
  fails: { seq: number; error: string }[];
}

export interface FeedFlow {
  runtime: Runtime;
  feed: Feed;
  /** the feed onramp's breaker: false while triggered */
  gateOpen(): boolean;
  stop(): Promise<void>;
}

/** A transactional feed onramp -> a pipeline of one `node` (a passthrough) -> the otel offramp `dst` with `config`. */
export async function feedToOfframp(
  config: Record<string, unknown>,
  logger: Logger = createLogger('silent'),
  node = { id: 'pass', type: 'passthrough' } as Record<string, unknown>,
): Promise<FeedFlow> {
  const frames = new Subject<Frame>();
  const feed = {
    frames,
    acks: [] as number[],
    fails: [] as { seq: number; error: string }[],
    push: (value: unknown, meta?: Meta) => frames.next({ stream: 0, value, meta, originUri: 'svc-feed://test' }),
  };
  const registries = Registries.withBuiltins();
  registries.onramps.register(
    'feed',
    feedOnramp(feed.frames, {
      ack: (id) => feed.acks.push(id.seq),
      fail: (id, insight) => feed.fails.push({ seq: id.seq, error: errorText((insight.meta as { error?: unknown } | undefined)?.error) }),
    }),
  );
  const runtime = new Runtime({ registries, logger });
  await runtime.start();
  runtime.publish('onramp', { id: 'src', type: 'feed', config: {} });
  runtime.publish('pipeline', {
    id: 'p',
    interface: { inputs: ['in'], outputs: ['out'] },
    nodes: [node],
    links: { in: [node.id as string], [node.id as string]: ['out'] },
  });
  runtime.publish('offramp', { id: 'dst', type: 'otel', config });
  runtime.publish('binding', {
    id: 'flow',
    links: { '/onramp/src/{instance}/out': ['/pipeline/p/{instance}/in'], '/pipeline/p/{instance}/out': ['/offramp/dst/{instance}/in'] },
  });
  await runtime.activate('binding', 'flow', 'main', {});
  return { runtime, feed, gateOpen: () => runtime.onramp('/onramp/src/main')!.runtime.breaker.isOpen, stop: () => runtime.shutdown() };
}

/** A resource of spans as the otel onramp makes it (OTLP/JSON), with `names` for its spans. */
export function spanResource(service: string, names: string[], attributes: Json[] = []): Json {
  return {
    resource: { attributes: [{ key: 'service.name', value: { stringValue: service } }] },
    scopeSpans: [
      {
        scope: { name: 'eddy-test', version: '1.0.0' },
        spans: names.map((name, i) => ({
          traceId: '5b8efff798038103d269b633813fc60c',
          spanId: `eee19b7ec3c1b17${i}`,
          name,
          kind: 2,
          startTimeUnixNano: '1700000000123456789',
          endTimeUnixNano: '1700000000223456789',
          attributes,
        })),
      },
    ],
  };
}

/** A fail's error as text: a string as it is, anything else as JSON. */
function errorText(error: unknown): string {
  return typeof error === 'string' ? error : error === undefined ? '' : JSON.stringify(error);
}
