/**
 * Records held in memory by the hundred thousand carry the same values over and over: empty maps (tags, appData,
 * hosting costs, env and SDK info) and the same few role attribute names. Sharing one frozen empty object and one
 * string per distinct name keeps such a record a few hundred bytes smaller. Records are never mutated in place
 * (every change replaces the record), so sharing is safe; the freeze turns a mistaken mutation into an error.
 */

const EMPTY: Readonly<Record<string, never>> = Object.freeze({})

/** `o`, or the one shared empty object when `o` has no own keys. */
export function shareEmpty<T extends object | null>(o: T): T {
  if (o === null) return o
  for (const k in o) if (Object.hasOwn(o, k)) return o
  return EMPTY as T
}

/** One string per distinct value, for small vocabularies (role attribute names); the owner forgets unused ones. */
export class StringPool {
  private readonly pool = new Map<string, string>()

  share(s: string): string {
    const known = this.pool.get(s)
    if (known !== undefined) return known
    this.pool.set(s, s)
    return s
  }

  /** The same list with shared strings (a new array only when something changed). */
  shareAll(list: readonly string[] | null): readonly string[] | null {
    if (list === null) return null
    let out: string[] | null = null
    for (let i = 0; i < list.length; i++) {
      const s = this.share(list[i]!)
      if (s !== list[i]) (out ??= [...list])[i] = s
    }
    return out ?? list
  }

  forget(s: string): void {
    this.pool.delete(s)
  }

  get size(): number {
    return this.pool.size
  }
}

/**
 * One array per distinct list of strings (the role attribute lists of records: 100,000 identities hold a few dozen
 * distinct ones), counted: the owner releases a record's list when the record is replaced or removed, and the pool
 * forgets a list nobody holds. Readers may also use the shared array as a key (the policy index does). The arrays are
 * not frozen (JSC iterates frozen arrays on a slower path, and every load walks them): they are read only by type,
 * as the records holding them.
 */
export class ListPool {
  /** By the list's elements joined with NUL; a bucket holds the lists that join alike (equal, or holding NULs). */
  private readonly buckets = new Map<string, { list: readonly string[]; holders: number }[]>()
  private count = 0

  /** `names`: where the strings of a new shared list come from (so that lists share their strings too). */
  constructor(private readonly names?: StringPool) {}

  /** The shared list equal to `list` (null stays null), counted as held once more. */
  share(list: readonly string[] | null): readonly string[] | null {
    if (list === null) return null
    const key = list.join('\u0000')
    let bucket = this.buckets.get(key)
    if (!bucket) this.buckets.set(key, (bucket = []))
    for (const e of bucket) {
      if (!sameList(e.list, list)) continue
      e.holders++
      return e.list
    }
    const e = { list: list.map((s) => this.names?.share(s) ?? s), holders: 1 }
    bucket.push(e)
    this.count++
    return e.list
  }

  /** A holder of a list that `share` answered let it go. */
  release(list: readonly string[] | null): void {
    if (list === null) return
    const key = list.join('\u0000')
    const bucket = this.buckets.get(key)
    const at = bucket?.findIndex((x) => x.list === list) ?? -1
    if (at < 0 || --bucket![at]!.holders > 0) return
    bucket!.splice(at, 1)
    this.count--
    if (bucket!.length === 0) this.buckets.delete(key)
  }

  get size(): number {
    return this.count
  }
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false
  return true
}
