import { request as httpRequest, type ClientRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { performance } from 'node:perf_hooks';
import type * as Elastic from '@elastic/elasticsearch';
import { requirePackage } from '../../core/packages';
import type { EddyEvent, Meta } from '../../core/event';
import { batchValue } from '../../core/event';
import { LazyEvent, unreadMemberFrame } from '../../core/lazy-event';
import type { OfframpContext, OfframpType, Sink } from '../connector';
import { Slots } from '../_shared/slots';
import { Backoff } from '../_shared/backoff';
import { PeerWatch, type Probe } from '../_shared/peer-watch';
import { s } from '../../schema/typed';
import type { Static } from '../../schema/typed';

const { Client, errors } = requirePackage<typeof Elastic>('@elastic/elasticsearch', 'the elastic offramp');

const configSchema = s.object(
  {
    nodes: s.array(s.string({ minLength: 1, description: 'an http:// or https:// URL of a node' }), {
      minItems: 1,
      description: 'the cluster nodes requests go to (the client spreads them and skips a dead one)',
    }),
    concurrency: s.integer({
      minimum: 1,
      default: 4,
      description: 'bulk requests in flight at most; as many more wait ready, and at twice this many sent the breaker is triggered',
    }),
  },
  { description: 'Indexes events into Elasticsearch with the bulk API.', required: ['nodes'] },
);

type ElasticConfig = Static<typeof configSchema>;

/** One document of a bulk request: a plain event, or one member of a batch. */
class Doc {
  constructor(
    /** the plain event, or the batch entry of the member */
    private readonly source: { event: EddyEvent } | { entry: unknown },
    readonly meta: Meta,
    /** the JSON text of `value`, encoded by the machinery, or the frame it came in as */
    readonly payload: Buffer,
    /**
     * The payload is the frame the event came in as, its value unread:
     * compact JSON the json codec vouched for, so it is a record exactly when
     * it starts with `{`, and nothing needs decoding to send it.
     */
    readonly unread: boolean,
  ) {}

  /** the document's data: read (so decoded) only when a check or a reply needs it */
  get value(): unknown {
    return 'event' in this.source ? this.source.event.data : batchValue(this.source.entry);
  }
}

/** Where one document goes, from its meta. */
interface Target {
  index: string;
  docType?: string;
  docId?: string;
  pipeline?: string;
}

/** An error object in the cluster's own shape (`type`, `reason`), for failures that are not the cluster's. */
interface ErrorObject {
  type: string;
  reason: string;
  [more: string]: unknown;
}

/** One outcome of a bulk action, as the cluster reports it. */
interface BulkItem {
  _index?: string;
  _id?: string | null;
  _type?: string;
  _version?: number;
  status?: number;
  error?: unknown;
}

/** The activation's probe and the reconnect probe: how long one GET /_cluster/health may take. */
const PROBE_TIMEOUT_MS = 5000;
/** One bulk request, however large. */
const REQUEST_TIMEOUT_MS = 30_000;

/** Client errors that mean no node can be reached (rather than one bad request): they trigger the breaker. */
const UNREACHABLE = [errors.ConnectionError, errors.TimeoutError, errors.NoLivingConnectionsError];

/**
 * elastic: writes each event to a search cluster as one bulk request of
 * `index` actions (a batch event: one action per member), through the
 * official client. The document is the event's data as JSON; `$index`
 * (required), `$doc_type` (deprecated), `$doc_id` and `$pipeline` say where
 * it goes. At most `concurrency` bulk requests are in flight; more wait their
 * turn, and the machinery triggers the breaker at that limit.
 *
 * Delivery: the event is acked (meta `time`, ms) when every item of its bulk
 * succeeded, and failed when any did not, or the request failed, or it was
 * malformed (no `$index`, data not a record), in which case nothing is sent.
 * When no node can be reached the breaker is triggered and sends fail at once
 * until a probe (GET /_cluster/health, back-off 100 ms doubling to 5 s) gets
 * an answer. Linked, every document gets exactly one reply: on `out` for an
 * indexed one, on `err` for one the cluster rejected or that was never sent.
 */
export const elasticOfframp: OfframpType<ElasticConfig> = {
  name: 'elastic',
  // the wire format is always JSON: `codecFor` asks for json whatever the artefact's codec
  defaultCodec: 'json',
  placement: 'every-worker', // bulk requests in parallel (docs/workers.md)
  autoAck: false,
  // a bulk ready behind each one in flight: a finishing request's slot takes the next at once instead of
  // idling while the sources, restored at half, make it
  maxInFlight: (config) => 2 * config.concurrency,
  linkable: true,
  ignoresPostprocessors: true,
  example: { nodes: ['http://127.0.0.1:9200'], concurrency: 4 },
  configSchema,
  validate(config) {
    config.nodes.forEach((node, i) => nodeUrl(node, `nodes[${i}]`));
  },
  async create(config, ctx) {
    const nodes = config.nodes.map((node, i) => nodeUrl(node, `nodes[${i}]`));
    // an unreachable cluster fails the activation (a 400 naming the offramp), within the probe timeout
    await probeNodes(nodes).done;
    // a connection error (or a 502/503/504) is retried once on each other node; a timeout never is
    // (the client's default): the cluster may have applied that bulk
    // redaction `remove`: an error drops its headers and connection (where credentials are) as it is; the default
    // `replace` deep-copies the error's diagnostics instead, walking the request body, which here is the bulk's
    // Buffer, byte by byte: ~0.1 s of CPU for each failed bulk of 100 documents (a cluster answering 429 under load)
    const client = new Client({ nodes, maxRetries: nodes.length - 1, requestTimeout: REQUEST_TIMEOUT_MS, redaction: { type: 'remove' } });
    return new ElasticSink(config, ctx, client, nodes);
  },
};

/**
 * Connection loss: the breaker is triggered until the cluster answers a
 * probe (GET /_cluster/health on every node) again, with back-off. The watch
 * holds why the cluster could not be reached.
 */
function clusterWatch(ctx: OfframpContext, nodes: string[]): PeerWatch<string> {
  return new PeerWatch<string>(ctx, {
    backoff: new Backoff(100, 5000),
    probe: () => probeNodes(nodes),
    paused: (why) => `the cluster cannot be reached (${why}); paused, probing`,
    resumed: () => 'the cluster answers again; resumed',
  });
}

/**
 * The sink of one elastic offramp: an event's documents are checked
 * (`targets`), sent as one bulk request in their turn (`bulk`), and each
 * item's outcome settles the event and, linked, answers its document
 * (`settle`).
 */
class ElasticSink implements Sink {
  /** at most `concurrency` bulk requests in flight, the rest wait in order */
  private readonly slots: Slots;
  /** down: why the cluster cannot be reached */
  private readonly watch: PeerWatch<string>;

  constructor(
    config: ElasticConfig,
    private readonly ctx: OfframpContext,
    private readonly client: Elastic.Client,
    nodes: string[],
  ) {
    this.slots = new Slots(config.concurrency);
    this.watch = clusterWatch(ctx, nodes);
  }

  /** The wire format is always JSON, whatever the artefact's codec. */
  codecFor(): string {
    return 'json';
  }

  async send(payloads: Buffer[], event: EddyEvent): Promise<void> {
    const docs = documents(event, payloads);
    const targets = this.targets(event, docs);
    const { down } = this.watch;
    if (down !== undefined)
      throw this.failAll(event, docs, targets, { type: 'cluster_unreachable', reason: `not sent: the cluster cannot be reached (${down})` });
    const body = bulkBody(docs, targets);
    const turn = this.slots.acquire();
    if (turn !== true && !(await turn)) throw this.failAll(event, docs, targets, { type: 'offramp_closed', reason: 'not sent: the offramp closed' });
    const started = performance.now();
    const items = await this.bulk(event, docs, targets, body);
    if (items.length !== docs.length) {
      throw this.failAll(event, docs, targets, { type: 'bulk_mismatch', reason: `the cluster answered ${items.length} items for ${docs.length} documents` });
    }
    const failed = this.settle(event, docs, targets, items);
    // the event is delivered only when all of it is: a partial success fails it, and a resend repeats every document
    if (failed > 0) {
      // the first rejection's reason, so a dead letter (or the log) says why, not only how many
      const first = items.find((item) => item.error !== undefined || item.status === undefined || item.status >= 300);
      const error = first?.error as { type?: string; reason?: string } | null | undefined;
      const why = error ? `${error.type ?? 'error'}: ${error.reason ?? JSON.stringify(error)}` : `status ${first?.status}`;
      throw Object.assign(
        new Error(`${failed} of ${items.length} documents were rejected by the cluster (first: ${why})`),
        first?.status === undefined ? {} : { status: first.status },
      );
    }
    if (event.transactional) this.ctx.insight('ack', event, { time: performance.now() - started });
  }

  async close(): Promise<void> {
    this.watch.close();
    this.slots.close();
    await this.client.close();
  }

  /** Where each document goes; nothing of a malformed event is sent: it fails whole, and a retry resends it whole. */
  private targets(event: EddyEvent, docs: Doc[]): Target[] {
    const targets: Target[] = [];
    for (const [i, doc] of docs.entries()) {
      const where = event.isBatch ? `batch member ${i}: ` : '';
      try {
        if (
          doc.unread
            ? doc.payload[0] !== 0x7b
            : doc.value === null || typeof doc.value !== 'object' || Array.isArray(doc.value) || ArrayBuffer.isView(doc.value)
        ) {
          throw new Error('the document (the event data) must be a record');
        }
        targets.push(target(doc.meta));
      } catch (err) {
        throw this.failAll(event, docs, targets, { type: 'malformed_event', reason: `${where}${(err as Error).message}` });
      }
    }
    return targets;
  }

  /** The bulk request, in the slot the caller holds (freed here); its items, one per document. */
  private async bulk(event: EddyEvent, docs: Doc[], targets: Target[], body: Buffer): Promise<BulkItem[]> {
    try {
      // the body is already NDJSON (the machinery encoded each document): the transport sends it as is
      const response = await this.client.transport.request<{ items?: Record<string, BulkItem>[] }>(
        { method: 'POST', path: '/_bulk', bulkBody: body },
        { meta: true },
      );
      return (response.body.items ?? []).map((item) => Object.values(item)[0] ?? {});
    } catch (err) {
      if (UNREACHABLE.some((kind) => err instanceof kind)) this.watch.lost(describe(err));
      throw this.failAll(event, docs, targets, clusterError(err));
    } finally {
      this.slots.release();
    }
  }

  /** Counts the documents the cluster rejected; linked, each document is answered on `out` or `err`. */
  private settle(event: EddyEvent, docs: Doc[], targets: Target[], items: BulkItem[]): number {
    let failed = 0;
    items.forEach((item, i) => {
      const ok = item.error === undefined && item.status !== undefined && item.status < 300;
      if (!ok) failed++;
      if (!this.ctx.linked) return;
      const t = targets[i];
      const type = item._type ?? t.docType ?? null;
      const id = item._id ?? t.docId ?? null;
      const index = item._index ?? t.index;
      if (ok) {
        this.reply(
          'out',
          event,
          docs[i],
          { success: true, source: source(event), payload: docs[i].value },
          { id, type, index, version: item._version ?? null },
        );
      } else {
        const error = item.error ?? { type: 'bulk_item_failed', reason: `status ${item.status}` };
        this.reply('err', event, docs[i], { success: false, source: source(event), error, payload: docs[i].value }, { id, type, index });
      }
    });
    return failed;
  }

  /** Every document of the event on `err` (linked), then the error that fails the event. */
  private failAll(event: EddyEvent, docs: Doc[], targets: (Target | undefined)[], error: unknown): Error {
    if (this.ctx.linked) {
      docs.forEach((doc, i) => {
        const t = targets[i];
        const data = { success: false, source: source(event), error, payload: doc.value };
        this.reply('err', event, doc, data, { id: t?.docId ?? null, type: t?.docType ?? null, index: t?.index ?? null });
      });
    }
    const reason = (error as { reason?: unknown } | null | undefined)?.reason;
    return new Error(typeof reason === 'string' ? reason : JSON.stringify(error));
  }

  private reply(port: 'out' | 'err', event: EddyEvent, doc: Doc, data: Record<string, unknown>, elastic: Meta): void {
    // each document answers with its own correlation: a batch member is its own request
    const request: EddyEvent = event.isBatch ? { ...event, isBatch: false, data: doc.value, meta: doc.meta } : event;
    this.ctx.reply(port, request, data, { elastic });
  }
}

/** The event as a reply's `source`. */
function source(event: EddyEvent): { event_id: string; origin: string | null } {
  return { event_id: `${event.id.uid}:${event.id.seq}`, origin: event.originUri || null };
}

/**
 * The documents of an event with their JSON payloads (one per batch member,
 * in order). A document whose event (or batch member) is still the frame it
 * came in as is sent as those bytes and not decoded at all, unless a reply
 * reads its value (linked).
 */
function documents(event: EddyEvent, payloads: Buffer[]): Doc[] {
  if (!event.isBatch) {
    const frame = event instanceof LazyEvent ? event.unreadFrame('json') : undefined;
    return [new Doc({ event }, event.meta, payloads[0], frame !== undefined && frame === payloads[0])];
  }
  const members: unknown[] = Array.isArray(event.data) ? event.data : [];
  // the members as the machinery encoded them (`batchValue`): `{data: {value, meta}}`, else the entry itself
  return members.map((entry, i) => {
    const inner = (entry as { data?: { meta?: Meta | null } | null } | null)?.data;
    const meta = inner !== null && typeof inner === 'object' && 'value' in inner ? inner.meta : undefined;
    const frame = unreadMemberFrame(entry, 'json');
    return new Doc({ entry }, meta !== null && typeof meta === 'object' ? meta : {}, payloads[i], frame !== undefined && frame === payloads[i]);
  });
}

/** `$index`, `$doc_type`, `$doc_id`, `$pipeline`; throws naming the bad one. */
function target(meta: Meta): Target {
  const { index, doc_type: docType, doc_id: docId, pipeline } = meta;
  if (typeof index !== 'string' || index === '') throw new Error('$index is required: the name of the index (a string)');
  const t: Target = { index };
  if (docType !== undefined && docType !== null) {
    if (typeof docType !== 'string' || docType === '') throw new Error('$doc_type must be a string');
    t.docType = docType;
  }
  if (docId !== undefined && docId !== null) {
    if (typeof docId === 'string' && docId !== '') t.docId = docId;
    else if ((typeof docId === 'number' && Number.isInteger(docId)) || typeof docId === 'bigint') t.docId = String(docId);
    else throw new Error('$doc_id must be a string or an integer');
  }
  if (pipeline !== undefined && pipeline !== null) {
    if (typeof pipeline !== 'string' || pipeline === '') throw new Error('$pipeline must be a string');
    t.pipeline = pipeline;
  }
  return t;
}

/** The bulk body: an index action line, then the document's JSON line, for each document. */
function bulkBody(docs: Doc[], targets: Target[]): Buffer {
  // the action lines as text, one per document, repeated as is when the target is the previous one's (one index, no ids)
  const actions: string[] = [];
  let length = 0;
  let previous: Target | undefined;
  let line = '';
  let lineBytes = 0;
  docs.forEach((doc, i) => {
    const t = targets[i];
    if (previous === undefined || !sameTarget(t, previous)) {
      line = actionLine(t);
      lineBytes = Buffer.byteLength(line);
    }
    previous = t;
    actions.push(line);
    length += lineBytes + doc.payload.length + 1;
  });
  // one buffer written in place, instead of three small ones per document concatenated
  const body = Buffer.allocUnsafe(length);
  let at = 0;
  docs.forEach((doc, i) => {
    at += body.write(actions[i], at);
    at += doc.payload.copy(body, at);
    body[at++] = 0x0a;
  });
  return body;
}

/** `{"index":{…}}` and its newline. */
function actionLine(t: Target): string {
  const action: Record<string, string> = { _index: t.index };
  if (t.docType !== undefined) action._type = t.docType;
  if (t.docId !== undefined) action._id = t.docId;
  if (t.pipeline !== undefined) action.pipeline = t.pipeline;
  return `${JSON.stringify({ index: action })}\n`;
}

function sameTarget(a: Target, b: Target): boolean {
  return a.index === b.index && a.docType === b.docType && a.docId === b.docId && a.pipeline === b.pipeline;
}

/** What a failed request reports: the cluster's error object when it answered one, else `{type, reason}`. */
function clusterError(err: unknown): unknown {
  if (err instanceof errors.ResponseError) {
    const body = err.meta.body as { error?: unknown } | undefined;
    if (body && typeof body === 'object' && body.error !== undefined) return body.error;
    return { type: 'http_error', reason: `the cluster answered ${err.meta.statusCode}`, status: err.meta.statusCode };
  }
  const reason = describe(err);
  const type = UNREACHABLE.some((kind) => err instanceof kind) ? 'cluster_unreachable' : 'request_failed';
  return { type, reason } satisfies ErrorObject;
}

function describe(err: unknown): string {
  if (err instanceof errors.ResponseError) return `answered ${err.meta.statusCode}: ${err.message}`;
  return err instanceof Error ? `${err.name}: ${err.message}` : String(err);
}

/**
 * GET /_cluster/health on every node at once, each on a connection of its
 * own that is closed afterwards: the cluster is usable when one of them
 * answers 2xx within the probe timeout. (The client's own retries would not
 * move on from a node that accepts connections but never answers.) It
 * rejects naming what each node did.
 */
function probeNodes(nodes: string[]): Probe {
  const pending = new Set<ClientRequest>();
  const cancel = () => {
    for (const req of pending) req.destroy();
    pending.clear();
  };
  const done = new Promise<void>((resolve, reject) => {
    const failures: string[] = [];
    const failed = (node: string, why: string) => {
      failures.push(`${node}: ${why}`);
      if (failures.length === nodes.length) reject(new Error(`no node answers GET /_cluster/health (${failures.join('; ')})`));
    };
    for (const node of nodes) {
      // below the node's own path, if it has one (a node behind a proxy); credentials in the URL are sent as basic auth
      const url = new URL(node);
      url.pathname = url.pathname.replace(/\/?$/, '/_cluster/health');
      const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
      const req = send(url, { method: 'GET', agent: false, timeout: PROBE_TIMEOUT_MS }, (res) => {
        res.resume();
        pending.delete(req);
        const status = res.statusCode ?? 0;
        if (status >= 200 && status < 300) {
          cancel();
          resolve();
        } else failed(node, `answered ${status}`);
      });
      pending.add(req);
      req.once('timeout', () => req.destroy(new Error(`no answer within ${PROBE_TIMEOUT_MS} ms`)));
      req.on('error', (err) => {
        if (pending.delete(req)) failed(node, err.message); // else: cancelled, or already answered
      });
      req.end();
    }
  });
  return { done, cancel };
}

/** A node URL as the client wants it; throws naming `where`. */
function nodeUrl(node: string, where: string): string {
  let url: URL;
  try {
    url = new URL(node);
  } catch {
    throw new Error(`${where}: not a URL: ${JSON.stringify(node)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`${where}: the scheme must be http or https, not ${url.protocol.slice(0, -1)}`);
  return node;
}
