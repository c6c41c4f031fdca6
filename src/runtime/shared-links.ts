/**
 * The links the runtime has wired, one connection per distinct link.
 *
 * Two bindings may declare the same link: the README's quick start binds
 * `/pipeline/system::passthrough/main/out` to `/offramp/system::stdout/system/in`
 * while the default example already does. Wiring that link twice would put a
 * second subscription beside the first and deliver every event on that port
 * twice. So a link is wired once and counted: each binding that declares it
 * holds one use, and the connection is undone when the last use is released.
 */
export class SharedLinks {
  private readonly links = new Map<string, { uses: number; undo: () => void }>();

  /**
   * Holds one use of the link named `key`, wiring it with `wire` if nobody
   * holds it yet. Returns the release of that one use (calling it twice
   * releases once): the link is undone when its last use is released.
   */
  hold(key: string, wire: () => () => void): () => void {
    let link = this.links.get(key);
    if (!link) {
      link = { uses: 0, undo: wire() };
      this.links.set(key, link);
    }
    link.uses += 1;
    const held = link;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      held.uses -= 1;
      if (held.uses > 0) return;
      this.links.delete(key);
      held.undo();
    };
  }

  /**
   * Wires the held link `key` anew with `wire`, then undoes its old wiring;
   * its uses stay as they were, and so do the releases handed out for them.
   * The new connection is made before the old one goes: a shared source
   * (an onramp's stream) never sees its last subscriber leave, so it does
   * not stop (a pipeline swapped in place: swap.ts).
   */
  rewire(key: string, wire: () => () => void): void {
    const link = this.links.get(key);
    if (!link) throw new Error(`${key}: not wired, nothing to rewire`);
    const old = link.undo;
    link.undo = wire();
    old();
  }

  /** How many uses hold the link `key` (0 when it is not wired). */
  uses(key: string): number {
    return this.links.get(key)?.uses ?? 0;
  }
}
