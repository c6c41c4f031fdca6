import type { Subscription } from 'rxjs';
import type { EddyEvent, Insight, Meta } from '../../../src/core/event';
import type { OfframpRuntime } from '../../../src/ramps/offramp';
import type { Runtime } from '../../../src/runtime/runtime';
import { eventually } from '../../helpers/runtime';

export interface KvReply {
  port: 'out' | 'err';
  data: unknown;
  meta: Meta;
}

/**
 * A kv offramp instance `/offramp/kv/main` in an in-process runtime, fed
 * directly through its input (so commands can hold binary keys and any
 * meta), with every reply on `out` and `err` recorded in order, and the
 * acks and fails it sends back.
 */
export class KvProbe {
  readonly replies: KvReply[] = [];
  readonly insights: Insight['kind'][] = [];
  private readonly subs: Subscription[] = [];
  private seq = 0;
  readonly offramp: OfframpRuntime;
  private readonly from = { url: '/pipeline/test/main', contraflow: (insight: Insight) => void this.insights.push(insight.kind) };

  private constructor(offramp: OfframpRuntime) {
    this.offramp = offramp;
    for (const port of ['out', 'err'] as const) {
      this.subs.push(offramp.output(port).subscribe((e) => this.replies.push({ port, data: e.data, meta: e.meta })));
    }
  }

  /** Publishes and activates a linked kv offramp on `dir`. */
  static async open(runtime: Runtime, dir: string, codec = 'json'): Promise<KvProbe> {
    runtime.publish('offramp', { id: 'kv', type: 'kv', linked: true, codec, config: { dir } });
    runtime.publish('binding', { id: 'kvb', links: { '/offramp/kv/{instance}/out': ['/pipeline/system::passthrough/{instance}/in'] } });
    await runtime.activate('binding', 'kvb', 'main', {});
    return new KvProbe(runtime.offramp('/offramp/kv/main')!);
  }

  /** Sends one event; its data is the command (or, with `isBatch`, the batch entries). */
  send(data: unknown, meta: Meta = {}, extra: Partial<EddyEvent> = {}): void {
    this.offramp.handle(
      { id: { uid: 9, seq: ++this.seq }, data, meta, ingestNs: 1n, originUri: 'svc-test://here', isBatch: false, transactional: false, ...extra },
      this.from,
    );
  }

  /** Sends the commands one event each and resolves with their replies, in order. */
  async run(...commands: unknown[]): Promise<KvReply[]> {
    const before = this.replies.length;
    for (const command of commands) this.send(command);
    await eventually(() => this.replies.length >= before + commands.length, 5000, `${commands.length} replies`);
    return this.replies.slice(before);
  }

  /** The data of the single reply to one command. */
  async ask(command: unknown): Promise<unknown> {
    const [reply] = await this.run(command);
    return reply.data;
  }

  close(): void {
    for (const sub of this.subs) sub.unsubscribe();
  }
}

/** A batch event's data: entries as the batch operator makes them. */
export function batchOf(members: { value: unknown; meta?: Meta }[]): unknown[] {
  return members.map(({ value, meta }) => ({ data: { value, meta: meta ?? {}, ingest_ns: 1 } }));
}
