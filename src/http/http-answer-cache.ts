/**
 * Rendered answers kept as bytes, for reads that clients repeat unchanged (an SDK listing its services every few
 * seconds). An answer is kept under a key (who asked what) with a stamp: the values its rendering depended on —
 * version numbers of the state it read, records that are replaced on every change. It is answered again only while a
 * fresh stamp equals the kept one element by element (`===`); otherwise it is dropped and the caller renders anew.
 *
 * Keeping costs a fresh buffer the size of the answer (pooled ones go back to their pool), so an answer is kept only
 * when it is asked for a second time under the same stamp (`repeated`): a client that never repeats a question costs
 * a small note per key, not a buffer per answer. Bounded by a byte budget and a number of keys, the least recently
 * used leaving first; an answer larger than a quarter of the budget is not kept. Kept bytes are never changed.
 */

export type AnswerStamp = readonly unknown[]

interface Entry {
  stamp: AnswerStamp
  /** Null while the key was asked only once under this stamp. */
  bytes: Uint8Array | null
}

export class AnswerCache {
  /** In use order: the least recently used first. */
  private readonly entries = new Map<string, Entry>()
  private size = 0

  constructor(
    readonly budgetBytes: number,
    readonly maxKeys = 4096,
  ) {}

  /** The kept answer of `key` when it was rendered under an equal stamp. */
  get(key: string, stamp: AnswerStamp): Uint8Array | undefined {
    const e = this.entries.get(key)
    if (!e?.bytes) return undefined
    this.drop(key, e)
    if (!sameStamp(e.stamp, stamp)) return undefined
    this.add(key, e)
    return e.bytes
  }

  /** True when `key` was asked before under an equal stamp (its answer is worth keeping); else notes this ask. */
  repeated(key: string, stamp: AnswerStamp): boolean {
    const e = this.entries.get(key)
    if (e) {
      this.drop(key, e)
      if (sameStamp(e.stamp, stamp)) return true
    }
    this.add(key, { stamp, bytes: null })
    this.trim()
    return false
  }

  /** Keeps an answer (replacing the key's earlier one), then drops the least recently used beyond the bounds. */
  put(key: string, stamp: AnswerStamp, bytes: Uint8Array): void {
    const old = this.entries.get(key)
    if (old) this.drop(key, old)
    if (bytes.length > this.budgetBytes / 4) return
    this.add(key, { stamp, bytes })
    this.trim()
  }

  /** Keys noted and bytes kept (diagnostics and tests). */
  stats(): { keys: number; answers: number; bytes: number } {
    let answers = 0
    for (const e of this.entries.values()) if (e.bytes) answers++
    return { keys: this.entries.size, answers, bytes: this.size }
  }

  private add(key: string, e: Entry): void {
    this.entries.set(key, e)
    this.size += e.bytes?.length ?? 0
  }

  private drop(key: string, e: Entry): void {
    this.entries.delete(key)
    this.size -= e.bytes?.length ?? 0
  }

  private trim(): void {
    for (const [k, e] of this.entries) {
      if (this.size <= this.budgetBytes && this.entries.size <= this.maxKeys) break
      this.drop(k, e)
    }
  }
}

function sameStamp(a: AnswerStamp, b: AnswerStamp): boolean {
  if (a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false
  return true
}
