/**
 * Rendered answers kept as bytes, for reads that clients repeat unchanged (an SDK listing its services every few
 * seconds). An answer is kept under a key (who asked what) with a stamp: the values its rendering depended on —
 * version numbers of the state it read, records that are replaced on every change. It is answered again only while a
 * fresh stamp equals the kept one element by element (`===`); otherwise it is dropped and the caller renders anew.
 * Bounded by a byte budget, the least recently used answer leaving first; an answer larger than a quarter of the
 * budget is not kept. Kept bytes are never pooled or changed: they are written as they are.
 */

export type AnswerStamp = readonly unknown[]

interface Kept {
  stamp: AnswerStamp
  bytes: Uint8Array
}

export class AnswerCache {
  /** In use order: the least recently used first. */
  private readonly kept = new Map<string, Kept>()
  private size = 0

  constructor(readonly budgetBytes: number) {}

  /** The kept answer of `key` when it was rendered under an equal stamp. */
  get(key: string, stamp: AnswerStamp): Uint8Array | undefined {
    const k = this.kept.get(key)
    if (!k) return undefined
    this.drop(key, k)
    if (!sameStamp(k.stamp, stamp)) return undefined
    this.kept.set(key, k)
    this.size += k.bytes.length
    return k.bytes
  }

  /** Keeps an answer (replacing the key's earlier one), then drops the least recently used beyond the budget. */
  put(key: string, stamp: AnswerStamp, bytes: Uint8Array): void {
    const old = this.kept.get(key)
    if (old) this.drop(key, old)
    if (bytes.length > this.budgetBytes / 4) return
    this.kept.set(key, { stamp, bytes })
    this.size += bytes.length
    for (const [k, v] of this.kept) {
      if (this.size <= this.budgetBytes) break
      this.drop(k, v)
    }
  }

  /** Answers and bytes kept (diagnostics and tests). */
  stats(): { answers: number; bytes: number } {
    return { answers: this.kept.size, bytes: this.size }
  }

  private drop(key: string, k: Kept): void {
    this.kept.delete(key)
    this.size -= k.bytes.length
  }
}

function sameStamp(a: AnswerStamp, b: AnswerStamp): boolean {
  if (a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false
  return true
}
