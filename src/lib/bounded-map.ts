/**
 * A Map that holds at most `maxEntries` entries: setting one more drops the least recently set or touched entry.
 * Memory stays bounded whatever keys callers invent (source addresses, usernames).
 */
export class BoundedMap<K, V> {
  private readonly map = new Map<K, V>()
  constructor(readonly maxEntries: number) {
    if (!(maxEntries >= 1)) throw new TypeError('maxEntries must be at least 1')
  }
  get size(): number {
    return this.map.size
  }
  get(key: K): V | undefined {
    return this.map.get(key)
  }
  /** Sets `key` as the most recent entry, dropping the oldest one when over the bound. */
  set(key: K, value: V): void {
    this.map.delete(key)
    this.map.set(key, value)
    if (this.map.size > this.maxEntries) this.map.delete(this.map.keys().next().value as K)
  }
  values(): IterableIterator<V> {
    return this.map.values()
  }
  delete(key: K): void {
    this.map.delete(key)
  }
}
