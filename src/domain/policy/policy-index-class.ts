/**
 * Entity classes: the unit the policy index links. Entities of one kind with the same role attributes match exactly
 * the same policies, unless a policy names one of them by `@id`; so every entity belongs to the class of its attribute
 * set, or to a class of its own while some policy names it. Policies link classes, and the reference counts between
 * classes (how many policies join them) are the counts between every pair of their members. 100,000 identities with
 * a few dozen attribute combinations are a few dozen classes: a policy change costs O(classes), not O(entities).
 */
import type { EntityKind } from './policy-types.ts'

/** The four denormalised relations: identity↔service per type, identity↔router, service↔router. */
export type Relation = 'dial' | 'bind' | 'erp' | 'serp'

export class EntityClass {
  /** The member ids; shared with the class of the same key in the index a copy was made from until one changes. */
  private memberSet = new Set<string>()
  private ownsMembers = true
  /** Policies (ids) whose side for this kind selects the class. */
  readonly policies = new Set<string>()
  /** Per relation: partner class → number of policies joining the two. */
  readonly links = new Map<Relation, Map<EntityClass, number>>()
  /** Identity classes: when the service list of every member last changed. */
  changedAt: number | undefined
  /** Order-independent digests of the member ids (sums of two 32-bit hashes), for comparing views cheaply. */
  h1 = 0
  h2 = 0
  private sorted: string[] | null = null
  /** Derived id lists, dropped when a member or a link they depend on changes. */
  readonly cache = new Map<string, readonly string[]>()
  /** Identity classes: the service policies linking it to a service class, per type (PolicyIndex.policiesLinking). */
  readonly linking = { dial: new Map<EntityClass, readonly string[]>(), bind: new Map<EntityClass, readonly string[]>() }

  constructor(
    readonly kind: EntityKind,
    readonly key: string,
    readonly attrs: ReadonlySet<string>,
    /** Set when the class holds exactly the one entity some policy names by `@id`. */
    readonly ownId: string | null,
  ) {}

  get members(): ReadonlySet<string> {
    return this.memberSet
  }

  sortedMembers(): readonly string[] {
    if (!this.sorted) this.sorted = [...this.members].sort()
    return this.sorted
  }

  add(id: string): void {
    if (this.memberSet.has(id)) return
    this.writableMembers().add(id)
    this.h1 = (this.h1 + hash(id, 0x811c9dc5)) >>> 0
    this.h2 = (this.h2 + hash(id, 0x01000193)) >>> 0
    this.sorted = null
  }

  remove(id: string): void {
    if (!this.memberSet.has(id)) return
    this.writableMembers().delete(id)
    this.h1 = (this.h1 - hash(id, 0x811c9dc5)) >>> 0
    this.h2 = (this.h2 - hash(id, 0x01000193)) >>> 0
    this.sorted = null
  }

  /**
   * Takes the members (and their digests) of the class of the same key in another index, sharing them until one
   * changes here (copy on write). The other class must not change while this one is in use.
   */
  shareMembersOf(c: EntityClass): void {
    this.memberSet = c.memberSet
    this.ownsMembers = false
    this.sorted = c.sorted
    this.h1 = c.h1
    this.h2 = c.h2
  }

  private writableMembers(): Set<string> {
    if (!this.ownsMembers) {
      this.memberSet = new Set(this.memberSet)
      this.ownsMembers = true
    }
    return this.memberSet
  }

  /** Drops every derived list. */
  dropCaches(): void {
    this.cache.clear()
    this.linking.dial.clear()
    this.linking.bind.clear()
  }

  partners(rel: Relation): Map<EntityClass, number> {
    let m = this.links.get(rel)
    if (!m) this.links.set(rel, (m = new Map()))
    return m
  }

  count(rel: Relation, partner: EntityClass): number {
    return this.links.get(rel)?.get(partner) ?? 0
  }
}

/**
 * Entity id → class, per kind. A copy of an index reads through to the map it was copied from, translated to its own
 * class of the same key, until an entry changes here (copy on write): copying 100,000 entries would cost more than
 * what a preview does with them. The map copied from must not change while the copy is in use.
 */
export class ClassOfMap {
  /** Entries set here; null: deleted here though the base has it. */
  private readonly own = new Map<string, EntityClass | null>()
  private count: number

  constructor(private readonly base?: { map: ClassOfMap; translate: (c: EntityClass) => EntityClass | undefined }) {
    this.count = base?.map.size ?? 0
  }

  get size(): number {
    return this.count
  }

  get(id: string): EntityClass | undefined {
    const o = this.own.get(id)
    if (o !== undefined) return o ?? undefined
    if (!this.base) return undefined
    const b = this.base.map.get(id)
    return b && this.base.translate(b)
  }

  has(id: string): boolean {
    return this.get(id) !== undefined
  }

  set(id: string, c: EntityClass): void {
    if (!this.has(id)) this.count++
    this.own.set(id, c)
  }

  delete(id: string): void {
    if (!this.has(id)) return
    this.count--
    if (this.base) this.own.set(id, null)
    else this.own.delete(id)
  }
}

/** FNV-1a over the UTF-16 units of a string, from a seed. */
function hash(s: string, seed: number): number {
  let h = seed
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193)
  return h >>> 0
}

/** The class key of an attribute set (sorted, deduplicated) and an optional own id. */
export function classKey(attrs: readonly string[], ownId: string | null): string {
  const base = attrs.join('\u0001')
  return ownId === null ? base : `${base}\u0002${ownId}`
}

/** Normalises role attributes: sorted, without duplicates. */
export function normaliseAttrs(attrs: readonly string[] | null | undefined): string[] {
  if (!attrs || attrs.length === 0) return []
  return [...new Set(attrs)].sort()
}

/** Sorted union of the members of some classes. */
export function unionMembers(classes: Iterable<EntityClass>): string[] {
  const out: string[] = []
  let n = 0
  for (const c of classes) {
    for (const id of c.sortedMembers()) out.push(id)
    n++
  }
  // classes partition the entities, so there are no duplicates; one class is already sorted
  return n <= 1 ? out : out.sort()
}

/** Intersection of two sorted id lists. */
export function intersectSorted(a: readonly string[], b: readonly string[]): string[] {
  const out: string[] = []
  let i = 0
  let j = 0
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) {
      out.push(a[i]!)
      i++
      j++
    } else if (a[i]! < b[j]!) i++
    else j++
  }
  return out
}
