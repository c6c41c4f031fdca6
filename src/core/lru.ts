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

  /** Sets `key` as the most recently used; evicts the least recently used key beyond the capacity. */
  set(key: K, value: V): void {
    const existing = this.nodes.get(key);
    if (existing !== undefined) {
      existing.value = value;
      this.moveToNewest(existing);
      return;
    }
    const node: LruNode<K, V> = { key, value, older: this.newest, newer: undefined };
    if (this.newest !== undefined) this.newest.newer = node;
    this.newest = node;
    this.oldest ??= node;
    this.nodes.set(key, node);
    if (this.nodes.size > this.capacity) this.evictOldest();
  }

  get size(): number {
    return this.nodes.size;
  }

  /** The keys, least recently used first. */
  *keys(): IterableIterator<K> {
    for (let node = this.oldest; node !== undefined; node = node.newer) yield node.key;
  }

  private moveToNewest(node: LruNode<K, V>): void {
    if (node === this.newest) return;
    // unlink (it has a newer node, since it is not the newest)
    node.newer!.older = node.older;
    if (node.older !== undefined) node.older.newer = node.newer;
    else this.oldest = node.newer;
    // link after the newest
    node.older = this.newest;
    node.newer = undefined;
    this.newest!.newer = node;
    this.newest = node;
  }

  private evictOldest(): void {
    const node = this.oldest!;
    this.oldest = node.newer;
    if (this.oldest !== undefined) this.oldest.older = undefined;
    else this.newest = undefined;
    this.nodes.delete(node.key);
  }
}

interface LruNode<K, V> {
  readonly key: K;
  value: V;
  older: LruNode<K, V> | undefined;
  newer: LruNode<K, V> | undefined;
}
