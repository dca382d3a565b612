/**
 * A bounded top-K collector: keeps the K smallest elements under a comparator in a binary max-heap,
 * so selecting a page out of n matches costs O(n log K) instead of sorting all n.
 */

/** Keeps the `capacity` smallest elements offered, by `compare` (negative: a before b). */
export class TopK<E> {
  private readonly heap: E[] = []

  constructor(
    private readonly capacity: number,
    private readonly compare: (a: E, b: E) => number,
  ) {
    if (!(capacity >= 0)) throw new TypeError(`TopK capacity must be >= 0, got ${capacity}`)
  }

  get size(): number {
    return this.heap.length
  }

  /** Offers one element; it is kept only if it is among the `capacity` smallest seen so far. */
  offer(e: E): void {
    const heap = this.heap
    if (heap.length < this.capacity) {
      heap.push(e)
      this.siftUp(heap.length - 1)
    } else if (heap.length > 0 && this.compare(e, heap[0]) < 0) {
      heap[0] = e
      this.siftDown(0)
    }
  }

  /** The kept elements, smallest first. The collector is empty afterwards. */
  drainSorted(): E[] {
    const out = this.heap.splice(0, this.heap.length)
    return out.sort(this.compare)
  }

  // The heap is a max-heap: the largest kept element sits at index 0, ready to be evicted.
  private siftUp(i: number): void {
    const heap = this.heap
    const e = heap[i]
    while (i > 0) {
      const parent = (i - 1) >> 1
      if (this.compare(heap[parent], e) >= 0) break
      heap[i] = heap[parent]
      i = parent
    }
    heap[i] = e
  }

  private siftDown(i: number): void {
    const heap = this.heap
    const n = heap.length
    const e = heap[i]
    for (;;) {
      const left = 2 * i + 1
      if (left >= n) break
      const right = left + 1
      const larger = right < n && this.compare(heap[right], heap[left]) > 0 ? right : left
      if (this.compare(heap[larger], e) <= 0) break
      heap[i] = heap[larger]
      i = larger
    }
    heap[i] = e
  }
}
