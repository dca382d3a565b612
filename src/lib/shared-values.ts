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
