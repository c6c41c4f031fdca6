import { readdirSync, readFileSync } from 'node:fs';
import { constants, monitorEventLoopDelay, PerformanceObserver, type ELDHistogram } from 'node:perf_hooks';
import { getHeapSpaceStatistics } from 'node:v8';
import { Family, Histogram } from './exposition';

/**
 * The process's own metrics on GET /metrics, by the names and types prom-client's
 * default metrics had (eddy wrote them with prom-client before issue 26), so a
 * dashboard built on those keeps working. They describe the process, not a
 * runtime: one collector per process, started at the first scrape (an eddy nobody
 * scrapes runs no event-loop monitor and no GC observer).
 */
let collector: ProcessMetrics | undefined;

/** The exposition text of the process's metrics. */
export function processMetrics(): Promise<string> {
  return (collector ??= new ProcessMetrics()).write();
}

const GC_KINDS: Record<number, string> = {
  [constants.NODE_PERFORMANCE_GC_MAJOR]: 'major',
  [constants.NODE_PERFORMANCE_GC_MINOR]: 'minor',
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weakcb',
};

const LINUX = process.platform === 'linux';

/** Node's undocumented counters of libuv handles and requests (there since Node 0.x; absent: their metrics are left out) */
const legacyProcess = process as { _getActiveHandles?: () => unknown[]; _getActiveRequests?: () => unknown[] };

class ProcessMetrics {
  private readonly startTime = Date.now() / 1000 - process.uptime();
  private readonly maxFds = LINUX ? readMaxFds() : undefined;
  private readonly loopDelay: ELDHistogram = monitorEventLoopDelay({ resolution: 10 });
  private readonly gc = new Histogram(
    'nodejs_gc_duration_seconds',
    'Garbage collection duration by kind, one of major, minor, incremental or weakcb.',
    [0.001, 0.01, 0.1, 1, 2, 5],
  );

  constructor() {
    this.loopDelay.enable();
    new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) {
        const kind = GC_KINDS[(entry as { detail?: { kind?: number } }).detail?.kind ?? -1] ?? 'unknown';
        this.gc.observe({ kind }, entry.duration / 1000);
      }
    }).observe({ entryTypes: ['gc'] });
  }

  async write(): Promise<string> {
    const lag = await loopLag();
    const gauge = (name: string, help: string, value: number) => new Family(name, help, 'gauge').sample({}, value).write();
    const counter = (name: string, help: string, value: number) => new Family(name, help, 'counter').sample({}, value).write();

    const cpu = process.cpuUsage();
    let text =
      counter('process_cpu_user_seconds_total', 'Total user CPU time spent in seconds.', cpu.user / 1e6) +
      counter('process_cpu_system_seconds_total', 'Total system CPU time spent in seconds.', cpu.system / 1e6) +
      counter('process_cpu_seconds_total', 'Total user and system CPU time spent in seconds.', (cpu.user + cpu.system) / 1e6) +
      gauge('process_start_time_seconds', 'Start time of the process since unix epoch in seconds.', this.startTime);

    const memory = process.memoryUsage();
    text += gauge('process_resident_memory_bytes', 'Resident memory size in bytes.', memory.rss);
    if (LINUX) {
      const status = procfs(readStatus);
      if (status?.VmSize !== undefined) text += gauge('process_virtual_memory_bytes', 'Virtual memory size in bytes.', status.VmSize);
      if (status?.VmData !== undefined) text += gauge('process_heap_bytes', 'Process heap size in bytes.', status.VmData);
      // readdir's own descriptor is among those it lists: it is closed again by now
      const fds = procfs(() => readdirSync('/proc/self/fd').length - 1);
      if (fds !== undefined) text += gauge('process_open_fds', 'Number of open file descriptors.', fds);
    }
    if (this.maxFds !== undefined) text += gauge('process_max_fds', 'Maximum number of open file descriptors.', this.maxFds);

    text += gauge('nodejs_eventloop_lag_seconds', 'Lag of event loop in seconds.', lag) + this.loopDelayGauges(gauge);

    const resources = new Family(
      'nodejs_active_resources',
      'Number of active resources that are currently keeping the event loop alive, grouped by async resource type.',
      'gauge',
    );
    const active = process.getActiveResourcesInfo();
    for (const type of active) resources.sample({ type }, 1);
    text += resources.write() + gauge('nodejs_active_resources_total', 'Total number of active resources.', active.length);
    if (legacyProcess._getActiveHandles)
      text += gauge('nodejs_active_handles_total', 'Total number of active handles.', legacyProcess._getActiveHandles().length);
    if (legacyProcess._getActiveRequests)
      text += gauge('nodejs_active_requests_total', 'Total number of active requests.', legacyProcess._getActiveRequests().length);

    text +=
      gauge('nodejs_heap_size_total_bytes', 'Process heap size from Node.js in bytes.', memory.heapTotal) +
      gauge('nodejs_heap_size_used_bytes', 'Process heap size used from Node.js in bytes.', memory.heapUsed) +
      gauge('nodejs_external_memory_bytes', 'Node.js external memory size in bytes.', memory.external) +
      heapSpaces() +
      versionInfo() +
      this.gc.write();
    return text;
  }

  /**
   * The event-loop delay the monitor sampled since the previous scrape (it is reset
   * after each, as prom-client did); NaN while it has no sample yet (the first scrape).
   */
  private loopDelayGauges(gauge: (name: string, help: string, value: number) => string): string {
    const h = this.loopDelay;
    const seconds = (ns: number) => (h.count === 0 ? NaN : ns / 1e9);
    const text =
      gauge('nodejs_eventloop_lag_min_seconds', 'The minimum recorded event loop delay.', seconds(h.min)) +
      gauge('nodejs_eventloop_lag_max_seconds', 'The maximum recorded event loop delay.', seconds(h.max)) +
      gauge('nodejs_eventloop_lag_mean_seconds', 'The mean of the recorded event loop delays.', seconds(h.mean)) +
      gauge('nodejs_eventloop_lag_stddev_seconds', 'The standard deviation of the recorded event loop delays.', seconds(h.stddev)) +
      gauge('nodejs_eventloop_lag_p50_seconds', 'The 50th percentile of the recorded event loop delays.', seconds(h.percentile(50))) +
      gauge('nodejs_eventloop_lag_p90_seconds', 'The 90th percentile of the recorded event loop delays.', seconds(h.percentile(90))) +
      gauge('nodejs_eventloop_lag_p99_seconds', 'The 99th percentile of the recorded event loop delays.', seconds(h.percentile(99)));
    h.reset();
    return text;
  }
}

/** How long a callback queued now waits for the event loop to run it. */
async function loopLag(): Promise<number> {
  const start = process.hrtime.bigint();
  await new Promise<void>((resolve) => setImmediate(resolve));
  return Number(process.hrtime.bigint() - start) / 1e9;
}

function heapSpaces(): string {
  const help = (what: string) => `Process heap space size ${what} from Node.js in bytes.`;
  const total = new Family('nodejs_heap_space_size_total_bytes', help('total'), 'gauge');
  const used = new Family('nodejs_heap_space_size_used_bytes', help('used'), 'gauge');
  const available = new Family('nodejs_heap_space_size_available_bytes', help('available'), 'gauge');
  for (const s of getHeapSpaceStatistics()) {
    const space = { space: s.space_name.replace(/_space$/, '') };
    total.sample(space, s.space_size);
    used.sample(space, s.space_used_size);
    available.sample(space, s.space_available_size);
  }
  return total.write() + used.write() + available.write();
}

function versionInfo(): string {
  const [major, minor, patch] = process.versions.node.split('.');
  return new Family('nodejs_version_info', 'Node.js version info.', 'gauge').sample({ version: process.version, major, minor, patch }, 1).write();
}

/** VmSize (virtual) and VmData (heap) of /proc/self/status, in bytes (the file says kB). */
function readStatus(): { VmSize?: number; VmData?: number } {
  const status = readFileSync('/proc/self/status', 'utf8');
  const kB = (field: string) => {
    const m = new RegExp(`^${field}:\\s*(\\d+) kB$`, 'm').exec(status);
    return m ? Number(m[1]) * 1024 : undefined;
  };
  return { VmSize: kB('VmSize'), VmData: kB('VmData') };
}

/** The soft limit of open files (/proc/self/limits), read once: Node has no way to change it. */
function readMaxFds(): number | undefined {
  const m = procfs(() => /^Max open files\s+(\S+)/m.exec(readFileSync('/proc/self/limits', 'utf8')));
  if (!m) return undefined;
  return m[1] === 'unlimited' ? Infinity : Number(m[1]);
}

/**
 * A read of /proc (never blocks: it is the kernel's tables, not a disk). Without
 * procfs (a sandbox that hides it) the metric is left out rather than the scrape failed.
 */
function procfs<T>(read: () => T): T | undefined {
  try {
    return read();
  } catch {
    return undefined;
  }
}
