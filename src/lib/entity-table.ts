/**
 * One kind of entity held by an actor's state (the policy graph's kinds, third-party CAs): records by id, a unique
 * name index (for named kinds), an optional role-attribute index, and the records in id order (cached, rebuilt
 * lazily after inserts and deletes). Readers see it as a ReadTable; only the owning actor calls put and remove.
 */

/** Read access to one kind of entity. */
export interface ReadTable<T extends { id: string }> {
  readonly size: number
  get(id: string): T | undefined
  has(id: string): boolean
  /** Id of the entity holding this name (named kinds only). */
  idByName(name: string): string | undefined
  byName(name: string): T | undefined
  /** Every record in ascending id order. */
  all(): readonly T[]
  values(): IterableIterator<T>
  /** Ids of the entities carrying a role attribute (kinds with role attributes only). */
  idsWithRole(attr: string): ReadonlySet<string>
  /** Role attributes carried by at least one entity, sorted. */
  roleAttributes(): readonly string[]
}

type Named = { id: string; name?: string; roleAttributes?: readonly string[] | null }

export class EntityTable<T extends Named> implements ReadTable<T> {
  private readonly byId = new Map<string, T>()
  private readonly names = new Map<string, string>()
  private readonly roles = new Map<string, Set<string>>()
  private sorted: T[] | null = null
  private sortedIds: string[] | null = null
  private sortedRoles: string[] | null = null

  get size(): number {
    return this.byId.size
  }
  get(id: string): T | undefined {
    return this.byId.get(id)
  }
  has(id: string): boolean {
    return this.byId.has(id)
  }
  idByName(name: string): string | undefined {
    return this.names.get(name)
  }
  byName(name: string): T | undefined {
    const id = this.names.get(name)
    return id === undefined ? undefined : this.byId.get(id)
  }
  all(): readonly T[] {
    if (!this.sortedIds) this.sortedIds = [...this.byId.keys()].sort()
    if (!this.sorted) this.sorted = this.sortedIds.map((id) => this.byId.get(id)!)
    return this.sorted
  }
  values(): IterableIterator<T> {
    return this.byId.values()
  }
  idsWithRole(attr: string): ReadonlySet<string> {
    return this.roles.get(attr) ?? EMPTY
  }
  roleAttributes(): readonly string[] {
    if (!this.sortedRoles) this.sortedRoles = [...this.roles.keys()].sort()
    return this.sortedRoles
  }

  put(next: T): void {
    const prev = this.byId.get(next.id)
    if (prev) {
      if (prev.name !== undefined && this.names.get(prev.name) === prev.id) this.names.delete(prev.name)
      this.unindexRoles(prev)
      // same id set: the id order stays, only the record in its slot changes
      if (this.sorted && this.sortedIds) this.sorted[lowerBound(this.sortedIds, next.id)] = next
    } else {
      this.sorted = null
      this.sortedIds = null
    }
    this.byId.set(next.id, next)
    if (next.name !== undefined) this.names.set(next.name, next.id)
    for (const r of next.roleAttributes ?? []) {
      let set = this.roles.get(r)
      if (!set) {
        this.roles.set(r, (set = new Set()))
        this.sortedRoles = null
      }
      set.add(next.id)
    }
  }

  remove(id: string): T | undefined {
    const prev = this.byId.get(id)
    if (!prev) return undefined
    this.byId.delete(id)
    if (prev.name !== undefined && this.names.get(prev.name) === id) this.names.delete(prev.name)
    this.unindexRoles(prev)
    this.sorted = null
    this.sortedIds = null
    return prev
  }

  private unindexRoles(prev: T): void {
    for (const r of prev.roleAttributes ?? []) {
      const set = this.roles.get(r)
      set?.delete(prev.id)
      if (set && set.size === 0) {
        this.roles.delete(r)
        this.sortedRoles = null
      }
    }
  }
}

/** A many-to-many index: key → ids, for "terminators of a service", "services using a config" and the like. */
export class MultiIndex {
  private readonly map = new Map<string, Set<string>>()

  get(key: string): ReadonlySet<string> {
    return this.map.get(key) ?? EMPTY
  }
  add(key: string, id: string): void {
    let set = this.map.get(key)
    if (!set) this.map.set(key, (set = new Set()))
    set.add(id)
  }
  delete(key: string, id: string): void {
    const set = this.map.get(key)
    if (!set) return
    set.delete(id)
    if (set.size === 0) this.map.delete(key)
  }
}

const EMPTY: ReadonlySet<string> = new Set()

/** Index of the first element not less than `key` in an ascending array. */
function lowerBound(sorted: readonly string[], key: string): number {
  let lo = 0
  let hi = sorted.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (sorted[mid] < key) lo = mid + 1
    else hi = mid
  }
  return lo
}
