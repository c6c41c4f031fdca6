import { present } from './errors';

/**
 * A bounded map that evicts the least recently used key: a hash map for the
 * lookup and a doubly linked list for the order.
 *
 * Why not the shorter Map-only LRU (a hit deletes the key and sets it again,
 * so the Map's insertion order is the use order)? Every hit then leaves a
 * deleted entry in V8's hash table, and the table is rebuilt every few hits.
 * Once the table has lived long enough to be in the old space, V8 allocates
 * each rebuilt table there too: a stream of hits on a few keys filled the
 * old space with ~3 MB/s of garbage until the next major GC (grouper::bucket
 * in bench/real-workflow.yaml, see bench/README.md). Here a hit only
 * relinks two list nodes and allocates nothing; the Map changes only when a
 * key is added or evicted.
 *
 * The order is also what a stateful operator saves (generic::dedupe,
 * generic::reduce): `entries()` walks it oldest first, `newestFirst()` from
 * the other end, and `set` says which key it evicted, so the node can write
 * that key's removal to its changelog.
 */
export class Lru<K, V> {
  private readonly nodes = new Map<K, LruNode<K, V>>();
  /** the least recently used node; `newest` the most recently used */
  private oldest: LruNode<K, V> | undefined;
  private newest: LruNode<K, V> | undefined;

  constructor(readonly capacity: number) {
    if (!(capacity >= 1)) throw new RangeError(`an LRU needs a capacity of at least 1, got ${capacity}`);
  }

  /** The value of `key`, which becomes the most recently used; undefined when absent. */
  get(key: K): V | undefined {
    const node = this.nodes.get(key);
    if (node === undefined) return undefined;
    this.moveToNewest(node);
    return node.value;
  }

  /** The value of `key` without making it the most recently used; undefined when absent. */
  peek(key: K): V | undefined {
    return this.nodes.get(key)?.value;
  }

  has(key: K): boolean {
    return this.nodes.has(key);
  }

  /** The value of the least recently used key (undefined when empty), which stays where it is. */
  peekOldest(): V | undefined {
    return this.oldest?.value;
  }

  /**
   * Sets `key` as the most recently used; evicts the least recently used key
   * beyond the capacity and returns it (undefined when nothing was evicted).
   */
  set(key: K, value: V): K | undefined {
    const existing = this.nodes.get(key);
    if (existing !== undefined) {
      existing.value = value;
      this.moveToNewest(existing);
      return undefined;
    }
    const node: LruNode<K, V> = { key, value, older: this.newest, newer: undefined };
    if (this.newest !== undefined) this.newest.newer = node;
    this.newest = node;
    this.oldest ??= node;
    this.nodes.set(key, node);
    return this.nodes.size > this.capacity ? this.evictOldest() : undefined;
  }

  /** Removes `key`; true when it was there. */
  delete(key: K): boolean {
    const node = this.nodes.get(key);
    if (node === undefined) return false;
    this.unlink(node);
    this.nodes.delete(key);
    return true;
  }

  get size(): number {
    return this.nodes.size;
  }

  /** The keys, least recently used first. */
  *keys(): IterableIterator<K> {
    for (let node = this.oldest; node !== undefined; node = node.newer) yield node.key;
  }

  /** The keys and values, least recently used first. */
  *entries(): IterableIterator<[K, V]> {
    for (let node = this.oldest; node !== undefined; node = node.newer) yield [node.key, node.value];
  }

  /** The keys and values, most recently used first. */
  *newestFirst(): IterableIterator<[K, V]> {
    for (let node = this.newest; node !== undefined; node = node.older) yield [node.key, node.value];
  }

  private moveToNewest(node: LruNode<K, V>): void {
    if (node === this.newest) return;
    this.unlink(node);
    // link after the newest (there is one: the list was not just this node, since it is not the newest)
    node.older = this.newest;
    node.newer = undefined;
    present(this.newest, 'the newest LRU node').newer = node;
    this.newest = node;
  }

  private unlink(node: LruNode<K, V>): void {
    if (node.newer !== undefined) node.newer.older = node.older;
    else this.newest = node.older;
    if (node.older !== undefined) node.older.newer = node.newer;
    else this.oldest = node.newer;
  }

  private evictOldest(): K {
    const node = present(this.oldest, 'the oldest LRU node');
    this.unlink(node);
    this.nodes.delete(node.key);
    return node.key;
  }
}

interface LruNode<K, V> {
  readonly key: K;
  value: V;
  older: LruNode<K, V> | undefined;
  newer: LruNode<K, V> | undefined;
}
