/**
 * Records held in memory by the hundred thousand carry the same values over and over: empty maps (tags, appData,
 * hosting costs, env and SDK info) and the same few role attribute lists. Sharing one frozen empty object and one
 * array per distinct list keeps such a record a few hundred bytes smaller. Records are never mutated in place (every
 * change replaces the record), so sharing is safe; the freeze turns a mistaken mutation of a map into an error.
 */

const EMPTY: Readonly<Record<string, never>> = Object.freeze({})

/** `o`, or the one shared empty object when `o` has no own keys. */
export function shareEmpty<T extends object | null>(o: T): T {
  if (o === null) return o
  for (const k in o) if (Object.hasOwn(o, k)) return o
  return EMPTY as T
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
    const e = { list: [...list], holders: 1 }
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
