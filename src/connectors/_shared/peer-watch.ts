import type { Socket } from 'node:net';
import type { Subscription } from '../../core/rx';
import type { OfframpContext } from '../connector';
import type { Backoff } from './backoff';

/** One probe of a lost peer, in flight. */
export interface Probe {
  /** resolves when the peer answered; rejects when it did not (and may never settle once cancelled) */
  readonly done: Promise<void>;
  /** stops the probe: its outcome no longer counts */
  cancel(): void;
}

/** What an offramp's peer watch uses of the offramp's context: the breaker, the scheduler its back-off waits on, and the log. */
export type PeerWatchContext = Pick<OfframpContext, 'url' | 'logger' | 'scheduler' | 'trigger' | 'restore'>;

/** What is the offramp's own: what a probe is, and how the log lines name the peer. `P` says which peer is down, and why. */
export interface PeerWatchOptions<P> {
  /** waits between probes; reset when an outage starts */
  readonly backoff: Backoff;
  /** one probe of the lost peer */
  probe(peer: P): Probe;
  /** the warning when sends are paused, after `Offramp <url>: ` */
  paused(peer: P): string;
  /** the info line when they go on, after `Offramp <url>: ` */
  resumed(peer: P): string;
}

/**
 * The breaker of an offramp whose peer can be lost: the first connection
 * error of an outage triggers it (however many sends fail with one), a probe
 * tries the peer on the back-off until it answers, and the first answer
 * restores it, once. Every wait is on the context's scheduler, so a test
 * runs it in virtual time. `close` cancels the wait and the probe in flight:
 * no probe after it, and no restore.
 */
export class PeerWatch<P> {
  /** the lost peer; undefined while sends go out */
  private lostPeer: P | undefined;
  private timer: Subscription | undefined;
  private probe: Probe | undefined;
  private closed = false;

  constructor(
    private readonly ctx: PeerWatchContext,
    private readonly options: PeerWatchOptions<P>,
  ) {}

  /** the peer that is down, and why; undefined while sends go out */
  get down(): P | undefined {
    return this.lostPeer;
  }

  /** A send found `peer` unreachable: paused until a probe reaches it. Nothing when already paused: the first cause holds. */
  lost(peer: P): void {
    if (!this.pause(peer)) return;
    this.options.backoff.reset();
    this.scheduleProbe();
  }

  /** Paused for `ms` (the peer asked to wait, e.g. a 429's Retry-After), without probing. Nothing when already paused. */
  holdFor(peer: P, ms: number): void {
    if (!this.pause(peer)) return;
    this.timer = this.ctx.scheduler.schedule(() => {
      this.timer = undefined;
      this.reached();
    }, ms);
  }

  /** The peer answered (a probe, or a send that got through): the sends go on. */
  reached(): void {
    if (this.closed || this.lostPeer === undefined) return;
    this.ctx.logger.info(`Offramp ${this.ctx.url}: ${this.options.resumed(this.lostPeer)}`);
    this.lostPeer = undefined;
    this.stopProbing();
    this.ctx.restore();
  }

  close(): void {
    this.closed = true;
    this.stopProbing();
  }

  /** false when already paused (or closed) */
  private pause(peer: P): boolean {
    if (this.closed || this.lostPeer !== undefined) return false;
    this.lostPeer = peer;
    this.ctx.logger.warn(`Offramp ${this.ctx.url}: ${this.options.paused(peer)}`);
    this.ctx.trigger();
    return true;
  }

  private stopProbing(): void {
    this.timer?.unsubscribe();
    this.timer = undefined;
    this.probe?.cancel();
    this.probe = undefined;
  }

  private scheduleProbe(): void {
    this.timer = this.ctx.scheduler.schedule(() => {
      this.timer = undefined;
      if (this.closed || this.lostPeer === undefined) return;
      const probe = (this.probe = this.options.probe(this.lostPeer));
      // only the probe in flight counts: one cancelled by `reached` or `close` is over
      probe.done.then(
        () => {
          if (this.probe === probe) this.reached();
        },
        () => {
          if (this.probe !== probe) return;
          this.probe = undefined;
          this.scheduleProbe();
        },
      );
    }, this.options.backoff.next());
  }
}

/**
 * A probe that opens a connection (`open`: a TCP or TLS connect) and closes it
 * at once: `ready` (`connect`, or `secureConnect` for TLS) means the peer is
 * reachable; an error, or nothing within `timeoutMs`, means it is not.
 */
export function connectProbe(open: () => Socket, ready: 'connect' | 'secureConnect', timeoutMs: number): Probe {
  const socket = open();
  const done = new Promise<void>((resolve, reject) => {
    socket.setTimeout(timeoutMs, () => socket.destroy(new Error(`no connection within ${timeoutMs} ms`)));
    socket.once(ready, () => {
      socket.destroy();
      resolve();
    });
    socket.once('error', reject);
  });
  return { done, cancel: () => socket.destroy() };
}
