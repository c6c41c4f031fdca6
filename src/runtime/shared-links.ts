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

  /** How many uses hold the link `key` (0 when it is not wired). */
  uses(key: string): number {
    return this.links.get(key)?.uses ?? 0;
  }
}
