import { ApiClient, ApiUnreachable, instancePath, KINDS, type ClientOptions, type InstanceStatus, type Status } from './client';
import { table } from './table';

/** What `eddy status` shows (its flags: src/cli/status.ts). */
export interface StatusOptions extends ClientOptions {
  /** the API's status document itself instead of tables */
  json: boolean;
}

/** `eddy status`: the runtime's artefacts, instances and circuit breakers, once. Exit 1 when the API cannot be reached. */
export async function showStatus(options: StatusOptions, out: (text: string) => void, err: (text: string) => void): Promise<number> {
  let status: Status;
  try {
    status = await new ApiClient(options).status();
  } catch (e) {
    if (!(e instanceof ApiUnreachable)) throw e;
    err(`error: ${e.message}\n`);
    return 1;
  }
  out(options.json ? `${JSON.stringify(status, null, 2)}\n` : renderStatus(status, options.api));
  return 0;
}

export function renderStatus(status: Status, api: string): string {
  const parts = [`eddy ${status.version} at ${api}, up ${formatDuration(status.uptime_s)}\n`];
  parts.push(
    '\nARTEFACTS\n' +
      table(
        ['KIND', 'COUNT', 'IDS'],
        KINDS.map((kind) => [kind, String(status.artefacts[kind]?.length ?? 0), (status.artefacts[kind] ?? []).join(', ') || '-']),
      ),
  );
  if (status.instances.length === 0) parts.push('\nINSTANCES\n(none running)\n');
  else
    parts.push(
      '\nINSTANCES\n' +
        table(
          ['INSTANCE', 'STATE', 'BREAKER', 'PORTS (events/errors)'],
          [...status.instances].sort((a, b) => instancePath(a).localeCompare(instancePath(b))).map(instanceRow),
        ),
    );
  const nodes = pipelineNodeRows(status.instances);
  if (nodes.length > 0) parts.push('\nPIPELINE NODES\n' + table(['PIPELINE', 'NODE', 'IN', 'OUT (port events)', 'DROPPED (reason events)'], nodes));
  const stateful = statefulRows(status.instances);
  if (stateful.length > 0) parts.push('\nSTATE BY SOURCE PARTITION\n' + table(['PIPELINE', 'NODE', 'PARTITION', 'WATERMARK'], stateful));
  return parts.join('');
}

/** One row per partition a stateful node holds state for, with its watermark (event time) as UTC. */
function statefulRows(instances: InstanceStatus[]): string[][] {
  const rows: string[][] = [];
  for (const instance of [...instances].sort((a, b) => instancePath(a).localeCompare(instancePath(b)))) {
    for (const n of instance.nodes ?? []) {
      for (const partition of [...(n.partitions ?? [])].sort()) {
        const watermark = n.watermarks?.[partition];
        rows.push([instancePath(instance), n.node, partition === '' ? '(one)' : partition, watermark === undefined ? '-' : iso(watermark)]);
      }
    }
  }
  return rows;
}

/**
 * One row per pipeline node: what reached it, what left on each linked
 * port, and what it dropped and acked (a filter, a port no link takes), so
 * every event is accounted for; an interface output no binding links is
 * the row of node `-`.
 */
function pipelineNodeRows(instances: InstanceStatus[]): string[][] {
  const counts = (c: Record<string, number>) =>
    Object.entries(c)
      .map(([k, n]) => `${k} ${n}`)
      .join(', ') || '-';
  const rows: string[][] = [];
  for (const instance of [...instances].sort((a, b) => instancePath(a).localeCompare(instancePath(b)))) {
    for (const n of instance.nodes ?? []) rows.push([instancePath(instance), n.node, String(n.in), counts(n.out), counts(n.dropped)]);
    if (instance.dropped && Object.keys(instance.dropped).length > 0) rows.push([instancePath(instance), '-', '-', '-', counts(instance.dropped)]);
  }
  return rows;
}

function instanceRow(instance: InstanceStatus): string[] {
  const state = instance.reason ? `${instance.state}: ${instance.reason}` : instance.state;
  const counts = instance.ports.map((p) => `${p.port}(${p.direction}) ${p.events}/${p.errors}`);
  // what the kernel dropped never reached a port: beside the port counts, or a flood looks like a quiet sender
  if (instance.kernel_drops !== undefined) counts.push(`kernel drops ${instance.kernel_drops}`);
  return [instancePath(instance), state, instance.breaker ?? '-', counts.join(', ') || '-'];
}

export function formatDuration(seconds: number): string {
  const s = Math.floor(seconds);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

/** A watermark as UTC, or its number when it is no date (event time need not be wall-clock time). */
function iso(ms: number): string {
  const date = new Date(ms);
  return Number.isNaN(date.getTime()) ? String(ms) : date.toISOString();
}
