import { version } from '../../version';
import type { JsonSchema } from '../../schema/json-schema';
import type { NodeStats, ObservedInstance } from './observe';
import type { Runtime } from '../runtime';
import { KINDS, type Kind } from '../urls';

/** GET /status: what runs and how much has flowed, for `eddy status`, `eddy top` and the console. */
export interface Status {
  version: string;
  uptime_s: number;
  artefacts: Record<Kind, string[]>;
  instances: StatusInstance[];
}

export interface StatusInstance {
  kind: Kind;
  artefact: string;
  instance: string;
  /** `/kind/artefact/instance`: the instance's path in this API, as GET /health and the tap name it */
  url: string;
  state: ObservedInstance['state'];
  reason: string | null;
  breaker: 'open' | 'closed' | null;
  ports: { port: string; direction: 'in' | 'out'; events: number; errors: number }[];
  errors?: number;
  bytes?: { direction: 'in' | 'out'; count: number };
  in_flight?: number;
  connections_closed?: Record<string, number>;
  kernel_drops?: number;
  nodes?: NodeStats[];
  dropped?: Record<string, number>;
}

/** The status of a runtime, from one snapshot of its instances (`observed`, which a caller may have gathered from elsewhere too). */
export function status(runtime: Runtime, observed: ObservedInstance[] = runtime.observe()): Status {
  return {
    version,
    uptime_s: Math.round(process.uptime() * 10) / 10,
    artefacts: Object.fromEntries(KINDS.map((kind) => [kind, runtime.list(kind)])) as Record<Kind, string[]>,
    instances: observed.map((o) => ({
      kind: o.kind,
      artefact: o.artefact,
      instance: o.instance,
      url: o.url,
      state: o.state,
      reason: o.reason,
      breaker: o.breaker,
      ports: o.ports,
      ...(o.errors !== undefined ? { errors: o.errors } : {}),
      ...(o.bytes !== undefined ? { bytes: o.bytes } : {}),
      ...(o.inFlight !== undefined ? { in_flight: o.inFlight } : {}),
      ...(o.closedConnections !== undefined ? { connections_closed: o.closedConnections } : {}),
      ...(o.kernelDrops !== undefined ? { kernel_drops: o.kernelDrops } : {}),
      ...(o.nodes !== undefined ? { nodes: o.nodes } : {}),
      ...(o.dropped !== undefined ? { dropped: o.dropped } : {}),
    })),
  };
}

const KIND_ENUM = { enum: [...KINDS] };
const count = { type: 'number', minimum: 0 };

/** The JSON schema of GET /status (in the OpenAPI document). */
export const STATUS_SCHEMA: JsonSchema = {
  type: 'object',
  required: ['version', 'uptime_s', 'artefacts', 'instances'],
  properties: {
    version: { type: 'string', description: 'the eddy version' },
    uptime_s: { type: 'number', description: 'seconds since the process started' },
    artefacts: {
      type: 'object',
      description: 'the artefact ids of each kind, system ones included',
      required: [...KINDS],
      properties: Object.fromEntries(KINDS.map((k) => [k, { type: 'array', items: { type: 'string' } }])),
    },
    instances: {
      type: 'array',
      items: {
        type: 'object',
        required: ['kind', 'artefact', 'instance', 'url', 'state', 'reason', 'breaker', 'ports'],
        properties: {
          kind: KIND_ENUM,
          artefact: { type: 'string' },
          instance: { type: 'string' },
          url: {
            type: 'string',
            pattern: '^/(onramp|offramp|pipeline|binding)/[^/]+/[^/]+$',
            description: 'the instance as GET /health names it, its path in this API: `/kind/artefact/instance`',
          },
          state: { enum: ['running', 'paused', 'down', 'failed'], description: 'as in GET /health' },
          reason: { type: ['string', 'null'], description: 'why it is not running; null when it runs' },
          breaker: {
            enum: ['open', 'closed', null],
            description:
              'onramps: open = paused by a circuit breaker; offramps: open = holding its sources back (sink down or too many sends in flight); null for pipelines and bindings',
          },
          ports: {
            type: 'array',
            description: 'cumulative counts per port (rates: the difference of two polls)',
            items: {
              type: 'object',
              required: ['port', 'direction', 'events', 'errors'],
              properties: {
                port: { type: 'string' },
                direction: { enum: ['in', 'out'], description: 'in: events entering the instance at this port; out: events leaving it' },
                events: count,
                errors: count,
              },
            },
          },
          errors: { ...count, description: 'ramps: undecodable input (onramp), failed encodes and sends (offramp)' },
          bytes: {
            type: 'object',
            required: ['direction', 'count'],
            description: 'ramps: bytes read (onramp, in) or encoded for sending (offramp, out)',
            properties: { direction: { enum: ['in', 'out'] }, count },
          },
          in_flight: { ...count, description: 'offramps: sends not settled yet' },
          connections_closed: {
            type: 'object',
            additionalProperties: count,
            description:
              'onramps that close connections themselves: how many they closed, by reason (unread_replies: a linked ws client that did not read its replies)',
          },
          kernel_drops: {
            ...count,
            description: 'udp onramps on Linux: datagrams the kernel dropped from the full socket receive buffer before eddy read them',
          },
          nodes: {
            type: 'array',
            description:
              'pipelines: what each node did with the events that reached it; for a node that emits one event per event it takes, in = the sum of out + the sum of dropped',
            items: {
              type: 'object',
              required: ['node', 'type', 'in', 'out', 'dropped'],
              properties: {
                node: { type: 'string' },
                type: { type: 'string', description: "the node's operator type" },
                in: { ...count, description: 'events that reached the node' },
                out: { type: 'object', additionalProperties: count, description: 'events emitted on each port a link takes' },
                dropped: {
                  type: 'object',
                  additionalProperties: count,
                  description: 'events dropped and acked to their sources, by reason: filter (a runtime::cel filter), unlinked:<port> (a port no link takes)',
                },
                partitions: {
                  type: 'array',
                  items: { type: 'string' },
                  description: "stateful nodes: the source partitions whose state the node holds (kafka: topic/partition; '' an unpartitioned source)",
                },
                watermarks: {
                  type: 'object',
                  additionalProperties: { type: 'number' },
                  description: 'event-time nodes: the watermark of each partition, ms since the epoch',
                },
              },
            },
          },
          dropped: {
            type: 'object',
            additionalProperties: count,
            description: 'pipelines: events dropped (and acked) at an interface output no binding links, by unlinked:<output>',
          },
        },
      },
    },
  },
};
