import type { FrameResult } from '../connector';

/**
 * How a broker message ends: `acked` when every event made from it was
 * acked (or it made no event and no error: it held no value), `failed` at
 * the first fail of one of its events, `undecodable` when it made no event
 * because the machinery could not decode it (its error went to `err`).
 */
export type Outcome = 'acked' | 'failed' | 'undecodable';

/** A message whose events are not all acked yet. */
interface Delivery<M> {
  readonly message: M;
  /** the sequence numbers of the events made from it */
  readonly seqs: readonly number[];
  /** its events not acked yet */
  open: number;
}

/**
 * Message settlement for a transactional broker onramp (amqp, pubsub, nats
 * JetStream, kafka): each message handed to the machinery as a frame is
 * settled once. Its frame's `done` opens a delivery in which every event
 * made from it holds a share; each ack gives one back and the last settles
 * the message as `acked`; the first fail settles it as `failed` at once
 * (the broker redelivers the message with all its events, so waiting for
 * the others would only delay that). Later acks and fails of its events,
 * and a second insight for one event, are ignored. A frame that made no
 * event is settled by its `done`: `undecodable` when the machinery met
 * errors, else `acked`. A frame that made events and also errors waits for
 * its events (the errors went to `err` and are counted there).
 *
 * `settle` is called once per message, after the bookkeeping, so a settle
 * that throws leaves nothing half done. Events are keyed by their sequence
 * number: the acks and fails an onramp receives are of its own events.
 */
export class Settlements<M> {
  /** the open delivery of each event not acked yet */
  private readonly bySeq = new Map<number, Delivery<M>>();
  /** open deliveries by message, oldest first */
  private readonly open = new Map<M, Delivery<M>>();

  /**
   * @param settle answers the broker for a message
   * @param limit open messages at most: beyond it the oldest are forgotten
   *   unsettled (the broker redelivers them when its ack deadline passes),
   *   so that events a pipeline never acks cannot grow this without bound
   */
  constructor(
    private readonly settle: (message: M, outcome: Outcome) => void,
    private readonly limit = Infinity,
  ) {}

  /** messages opened and not settled (nor forgotten) yet */
  get size(): number {
    return this.open.size;
  }

  /** A frame's `done` for this message. */
  done(message: M): (result: FrameResult) => void {
    return (result) => this.made(message, result);
  }

  /** The machinery made these events (or these errors) from the message. */
  made(message: M, result: { readonly ids: readonly { seq: number }[]; readonly errors: readonly unknown[] }): void {
    const { ids } = result;
    if (ids.length === 0) return this.settle(message, result.errors.length > 0 ? 'undecodable' : 'acked');
    const delivery: Delivery<M> = { message, seqs: ids.map((id) => id.seq), open: ids.length };
    this.open.set(message, delivery);
    for (const seq of delivery.seqs) this.bySeq.set(seq, delivery);
    while (this.open.size > this.limit) this.forget(this.open.keys().next().value as M);
  }

  /** An event was acked; returns its message when this ack settled it. */
  ack(id: { seq: number }): M | undefined {
    const delivery = this.bySeq.get(id.seq);
    if (delivery === undefined) return undefined;
    this.bySeq.delete(id.seq);
    if (--delivery.open > 0) return undefined;
    return this.end(delivery, 'acked');
  }

  /** An event failed; returns its message when this fail settled it (the first fail of its events). */
  fail(id: { seq: number }): M | undefined {
    const delivery = this.bySeq.get(id.seq);
    return delivery === undefined ? undefined : this.end(delivery, 'failed');
  }

  /** Forgets a message unsettled: what becomes of its events no longer counts. True when it was open. */
  forget(message: M): boolean {
    const delivery = this.open.get(message);
    if (delivery === undefined) return false;
    this.drop(delivery);
    return true;
  }

  /** Forgets every open message unsettled (a lost connection, a close); returns them, oldest first. */
  forgetAll(): M[] {
    const messages = [...this.open.keys()];
    this.open.clear();
    this.bySeq.clear();
    return messages;
  }

  private end(delivery: Delivery<M>, outcome: Outcome): M {
    this.drop(delivery);
    this.settle(delivery.message, outcome);
    return delivery.message;
  }

  private drop(delivery: Delivery<M>): void {
    this.open.delete(delivery.message);
    for (const seq of delivery.seqs) this.bySeq.delete(seq);
  }
}
