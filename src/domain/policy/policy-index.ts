/**
 * The precomputed policy index: which identities may Dial/Bind which services, which edge routers identities and
 * services may use, and which policies select which entities. Maintained incrementally on every change; reads are
 * lookups and never evaluate a policy.
 *
 * Entities are grouped into classes (see policy-index-class.ts). Policies link classes; between classes of two kinds
 * the index keeps reference counts per relation (the number of policies joining them), as the real controller keeps
 * them per entity pair. An entity's answers are its class's answers.
 *
 * Change marks: every mutation takes `now` (null while loading). An identity's service list changes when its
 * class's Dial/Bind partners change, when a service it sees changes, or when it moves class with a different view;
 * `lastChangeAt` reports the latest such mark, strictly increasing.
 */
import type { Permission, PolicyReads } from './policy-reads.ts'
import type { EntityKind, IndexPolicy, PolicyKind, PolicyType, Semantic } from './policy-types.ts'
import { splitRoles, type ParsedRoles } from './policy-roles.ts'
import {
  classKey,
  ClassOfMap,
  EntityClass,
  intersectSorted,
  normaliseAttrs,
  unionMembers,
  type Relation,
} from './policy-index-class.ts'

const KINDS: readonly EntityKind[] = ['identity', 'service', 'router', 'posture-check']

interface Side {
  kind: EntityKind
  roles: ParsedRoles
  classes: Set<EntityClass>
}

interface Entry {
  policy: IndexPolicy
  semantic: Semantic
  sides: Side[]
  /** The two sides the relation joins, when the policy kind has one. */
  pair: { rel: Relation; a: Side; b: Side }
  /** The posture checks it selects, as of `stamp` (service policies; see membersOf). */
  checks?: { stamp: number; ids: readonly string[] }
}

type PerKind<T> = Record<EntityKind, T>
const perKind = <T>(make: () => T): PerKind<T> =>
  ({ identity: make(), service: make(), router: make(), 'posture-check': make() }) as PerKind<T>

export class PolicyIndex implements PolicyReads {
  private readonly classes = perKind(() => new Map<string, EntityClass>())
  private classOf = perKind(() => new ClassOfMap())
  /** Entity id → number of `@id` mentions in policy roles. */
  private readonly refs = perKind(() => new Map<string, number>())
  private readonly attrUse = perKind(() => new Map<string, number>())
  private readonly attrSorted = perKind<string[] | null>(() => null)
  private readonly entries = new Map<string, Entry>()
  private readonly bySideKind = perKind(() => new Set<Entry>())
  /** Identities that changed on their own (created, moved class, overrides): own mark and when they joined their class. */
  private readonly personal = new Map<string, { own: number | undefined; joinedAt: number }>()
  private lastStamp = 0
  /** Grows with every operation (see version()). */
  private changes = 0
  /** Grows whenever a posture check joins, leaves or changes class, or a policy changes: cached check lists are stale. */
  private postureStamp = 0
  private opStamp: number | null = null
  /** Identity classes whose Dial/Bind partners were touched in the current operation → their view before it. */
  private touched: Map<EntityClass, string> | null = null
  /** Identities that changed class in the current operation → their view and mark before it. */
  private moved: Map<string, { view: string; mark: number | undefined }> | null = null

  // ---- writes ----

  /** Adds an entity or changes its role attributes. */
  putEntity(kind: EntityKind, id: string, roleAttributes: readonly string[] | null | undefined, now: number | null): void {
    this.op(now, () => {
      // a service's record is part of what clients list: whoever sees it before or after gets a mark
      const before = kind === 'service' ? this.classOf.service.get(id) : undefined
      if (before) this.markViewers(before)
      this.place(kind, id, normaliseAttrs(roleAttributes))
      if (kind === 'service') this.markViewers(this.classOf.service.get(id)!)
    })
  }

  /**
   * Adds entities while loading (no change marks): the same index as `putEntity(kind, id, roleAttributes, null)` for
   * each, with each distinct attribute list (by array, so lists shared by their owner are normalised once) placed in
   * its class once. An entity already present or named by a policy (`@id`) takes the one-by-one path.
   */
  loadEntities(entities: Iterable<{ kind: EntityKind; id: string; roleAttributes: readonly string[] | null | undefined }>): void {
    const classByList = perKind(() => new Map<readonly string[] | null | undefined, EntityClass>())
    const added = new Map<EntityClass, number>()
    // the attribute counts and caches of the classes that grew, then forget them (a one-by-one put may drop a class)
    const settle = () => {
      for (const [c, n] of added) {
        if (c.kind === 'posture-check') this.postureStamp++
        this.dropPartnerCaches(c)
        for (const a of c.attrs) this.useAttr(c.kind, a, n)
      }
      added.clear()
      for (const kind of KINDS) classByList[kind].clear()
    }
    for (const { kind, id, roleAttributes } of entities) {
      if (this.classOf[kind].has(id) || (this.refs[kind].get(id) ?? 0) > 0) {
        settle()
        this.putEntity(kind, id, roleAttributes, null)
        continue
      }
      let c = classByList[kind].get(roleAttributes)
      if (!c) {
        const attrs = normaliseAttrs(roleAttributes)
        const key = classKey(attrs, null)
        c = this.classes[kind].get(key) ?? this.createClass(kind, key, attrs, null)
        classByList[kind].set(roleAttributes, c)
      }
      this.changes++
      c.add(id)
      this.classOf[kind].set(id, c)
      added.set(c, (added.get(c) ?? 0) + 1)
    }
    settle()
  }

  removeEntity(kind: EntityKind, id: string, now: number | null): void {
    this.op(now, () => {
      const from = this.classOf[kind].get(id)
      if (!from) return
      if (kind === 'service') {
        this.markViewers(from)
        this.noteViewers(from)
      }
      this.leave(kind, id, from)
      this.classOf[kind].delete(id)
      if (kind === 'identity') this.personal.delete(id)
    })
  }

  /** Adds or replaces a policy. */
  putPolicy(policy: IndexPolicy, now: number | null): void {
    this.op(now, () => {
      const old = this.entries.get(policy.id)
      if (old) this.uninstall(old)
      const entry = makeEntry(policy)
      const flipped = new Set<string>()
      if (old) this.countRefs(old, -1, flipped)
      this.countRefs(entry, +1, flipped)
      this.replaceFlipped(flipped)
      this.install(entry)
      if (old && policy.kind === 'service-policy' && !samePosture(old.policy, policy)) {
        for (const e of [old, entry]) for (const c of e.sides[0]!.classes) this.mark(c)
      }
    })
  }

  removePolicy(id: string, now: number | null): void {
    this.op(now, () => {
      const old = this.entries.get(id)
      if (!old) return
      this.uninstall(old)
      const flipped = new Set<string>()
      this.countRefs(old, -1, flipped)
      this.replaceFlipped(flipped)
    })
  }

  /** Services whose client-visible data changed (configs, config data): everyone who sees them gets a mark. */
  touchServices(serviceIds: readonly string[], now: number): void {
    this.op(now, () => {
      for (const id of serviceIds) {
        const c = this.classOf.service.get(id)
        if (c) this.markViewers(c)
      }
    })
  }

  /** Identities whose own client-visible data changed (service config overrides). */
  touchIdentities(identityIds: readonly string[], now: number): void {
    this.op(now, () => {
      for (const id of identityIds) {
        if (!this.classOf.identity.has(id)) continue
        const p = this.personal.get(id)
        if (p) p.own = this.opStamp!
        else this.personal.set(id, { own: this.opStamp!, joinedAt: Number.NEGATIVE_INFINITY })
      }
    })
  }

  // ---- reads ----

  servicesOfIdentity(identityId: string): readonly string[] {
    const c = this.classOf.identity.get(identityId)
    return c ? this.cached(c, 'services', () => unionMembers(new Set([...c.partners('dial').keys(), ...c.partners('bind').keys()]))) : []
  }

  permissionsOf(identityId: string, serviceId: string): readonly Permission[] {
    const ic = this.classOf.identity.get(identityId)
    const sc = this.classOf.service.get(serviceId)
    if (!ic || !sc) return []
    const bind = ic.count('bind', sc) > 0
    const dial = ic.count('dial', sc) > 0
    return bind ? (dial ? BOTH : BIND) : dial ? DIAL : NONE
  }

  identitiesOfService(serviceId: string): readonly string[] {
    const c = this.classOf.service.get(serviceId)
    return c ? this.cached(c, 'identities', () => unionMembers(new Set([...c.partners('dial').keys(), ...c.partners('bind').keys()]))) : []
  }

  routersOfIdentity(identityId: string): readonly string[] {
    return this.partnersOf('identity', identityId, 'erp')
  }

  routersOfService(serviceId: string): readonly string[] {
    return this.partnersOf('service', serviceId, 'serp')
  }

  routersFor(identityId: string, serviceId: string): readonly string[] {
    return intersectSorted(this.routersOfIdentity(identityId), this.routersOfService(serviceId))
  }

  identitiesOfRouter(routerId: string): readonly string[] {
    return this.partnersOf('router', routerId, 'erp')
  }

  servicesOfRouter(routerId: string): readonly string[] {
    return this.partnersOf('router', routerId, 'serp')
  }

  /**
   * The policies of a kind that select the entity, sorted. Kept per class until its policies change: every member of
   * a class gets the same array, so a caller holding one may compare by reference first (the router data model does).
   */
  policiesOf(kind: EntityKind, id: string, policyKind: PolicyKind): readonly string[] {
    const c = this.classOf[kind].get(id)
    if (!c) return NO_IDS
    return this.cached(c, `policies:${policyKind}`, () => {
      const out: string[] = []
      for (const pid of c.policies) if (this.entries.get(pid)!.policy.kind === policyKind) out.push(pid)
      return out.sort()
    })
  }

  membersOf(policyId: string, kind: EntityKind): readonly string[] {
    const entry = this.entries.get(policyId)
    const side = entry?.sides.find((s) => s.kind === kind)
    if (!side) return []
    if (kind !== 'posture-check') return unionMembers(side.classes)
    // the checks gating a policy are read for every service row a client lists: kept until a check or policy changes
    if (entry!.checks?.stamp !== this.postureStamp) entry!.checks = { stamp: this.postureStamp, ids: unionMembers(side.classes) }
    return entry!.checks.ids
  }

  policiesLinking(identityId: string, serviceId: string, type: PolicyType): readonly string[] {
    const ic = this.classOf.identity.get(identityId)
    const sc = this.classOf.service.get(serviceId)
    if (!ic || !sc) return NO_IDS
    // per pair of classes: bump() drops the entry whenever a policy joins or leaves the pair
    const rel = type === 'Dial' ? 'dial' : 'bind'
    const known = ic.linking[rel].get(sc)
    if (known) return known
    if (ic.count(rel, sc) === 0) return NO_IDS
    const out: string[] = []
    for (const pid of ic.policies) {
      const e = this.entries.get(pid)!
      if (e.policy.kind === 'service-policy' && e.policy.type === type && e.pair.b.classes.has(sc)) out.push(pid)
    }
    out.sort()
    ic.linking[rel].set(sc, out)
    return out
  }

  version(): number {
    return this.changes
  }

  attributesInUse(kind: EntityKind): readonly string[] {
    return (this.attrSorted[kind] ??= [...this.attrUse[kind].keys()].sort())
  }

  countOf(kind: EntityKind): number {
    return this.classOf[kind].size
  }

  lastChangeAt(identityId: string): number | undefined {
    const c = this.classOf.identity.get(identityId)
    if (!c) return undefined
    const p = this.personal.get(identityId)
    let mark = p?.own
    if (c.changedAt !== undefined && (!p || c.changedAt > p.joinedAt)) mark = mark === undefined ? c.changedAt : Math.max(mark, c.changedAt)
    return mark
  }

  /** Number of classes per kind (for benchmarks and diagnostics). */
  classCounts(): Record<EntityKind, number> {
    return { identity: this.classes.identity.size, service: this.classes.service.size, router: this.classes.router.size, 'posture-check': this.classes['posture-check'].size }
  }

  /**
   * A canonical description of the whole index (classes, members, policy links, reference counts). Two indexes
   * that hold the same entities and policies dump equal, however they got there; the property tests rely on it.
   */
  dump(): unknown {
    const out: Record<string, unknown> = {}
    for (const kind of KINDS) {
      const classes = [...this.classes[kind].values()].sort((x, y) => (x.key < y.key ? -1 : x.key > y.key ? 1 : 0))
      out[kind] = classes.map((c) => ({
        key: c.key,
        members: [...c.sortedMembers()],
        policies: [...c.policies].sort(),
        links: Object.fromEntries(
          [...c.links.entries()]
            .filter(([, m]) => m.size > 0)
            .sort(([a], [b]) => (a < b ? -1 : 1))
            .map(([rel, m]) => [rel, Object.fromEntries([...m.entries()].map(([p, n]) => [p.key, n]).sort(([a], [b]) => (a! < b! ? -1 : 1)))]),
        ),
      }))
      out[`${kind}-attributes`] = [...this.attributesInUse(kind)]
    }
    out.refs = Object.fromEntries(KINDS.map((k) => [k, Object.fromEntries([...this.refs[k].entries()].sort())]))
    return out
  }

  /**
   * A copy to apply a change to: changing it never changes this index. Classes, links and policies are copied;
   * member sets and the entity → class maps are shared until the copy changes them (copy on write), so the copy is
   * valid only until this index next changes. Costs O(classes × links); change marks are not copied (the copy is for
   * answers, not for clients). Previews apply a change to the copy with the same code as the real apply.
   */
  clone(): PolicyIndex {
    const out = new PolicyIndex()
    const map = new Map<EntityClass, EntityClass>()
    for (const kind of KINDS) {
      for (const [key, c] of this.classes[kind]) {
        const d = new EntityClass(kind, key, c.attrs, c.ownId)
        d.shareMembersOf(c)
        for (const p of c.policies) d.policies.add(p)
        map.set(c, d)
        out.classes[kind].set(key, d)
      }
      const own = out.classes[kind]
      out.classOf[kind] = new ClassOfMap({ map: this.classOf[kind], translate: (c) => own.get(c.key) })
      for (const [id, n] of this.refs[kind]) out.refs[kind].set(id, n)
      for (const [a, n] of this.attrUse[kind]) out.attrUse[kind].set(a, n)
    }
    for (const [c, d] of map) {
      for (const [rel, partners] of c.links) {
        const m = d.partners(rel)
        for (const [p, n] of partners) m.set(map.get(p)!, n)
      }
    }
    for (const [id, e] of this.entries) {
      const sides = e.sides.map((s) => ({ kind: s.kind, roles: s.roles, classes: new Set([...s.classes].map((c) => map.get(c)!)) }))
      const at = (s: Side) => sides[e.sides.indexOf(s)]!
      const copy: Entry = { policy: e.policy, semantic: e.semantic, sides, pair: { rel: e.pair.rel, a: at(e.pair.a), b: at(e.pair.b) } }
      out.entries.set(id, copy)
      for (const s of sides) out.bySideKind[s.kind].add(copy)
    }
    out.lastStamp = this.lastStamp
    return out
  }

  /** The class an entity belongs to (previews compare classes of two indexes by key). */
  classOfEntity(kind: EntityKind, id: string): EntityClass | undefined {
    return this.classOf[kind].get(id)
  }

  classByKey(kind: EntityKind, key: string): EntityClass | undefined {
    return this.classes[kind].get(key)
  }

  classesOf(kind: EntityKind): Iterable<EntityClass> {
    return this.classes[kind].values()
  }

  /** A policy as indexed. */
  policy(id: string): IndexPolicy | undefined {
    return this.entries.get(id)?.policy
  }

  // ---- internals ----

  private op(now: number | null, fn: () => void): void {
    this.changes++
    if (this.touched) {
      fn()
      return
    }
    this.opStamp = now === null ? null : Math.max(now, this.lastStamp + 1)
    this.touched = new Map()
    this.moved = this.opStamp === null ? null : new Map()
    try {
      fn()
      const stamp = this.opStamp
      if (stamp !== null) {
        for (const [c, before] of this.touched) if (c.members.size > 0 && view(c) !== before) c.changedAt = stamp
        // a member that changed class compares its whole view across the operation; marks its new class got in
        // the same operation do not count for it (joinedAt)
        for (const [id, before] of this.moved!) {
          const c = this.classOf.identity.get(id)
          if (c) this.personal.set(id, { own: view(c) !== before.view ? stamp : before.mark, joinedAt: stamp })
        }
      }
    } finally {
      if (this.opStamp !== null) this.lastStamp = this.opStamp
      this.opStamp = null
      this.touched = null
      this.moved = null
    }
  }

  private mark(ic: EntityClass): void {
    if (this.opStamp !== null) ic.changedAt = this.opStamp
  }

  /** Marks every identity class that sees some service of this service class. */
  private markViewers(sc: EntityClass): void {
    for (const rel of ['dial', 'bind'] as const) for (const ic of sc.partners(rel).keys()) this.mark(ic)
  }

  private cached(c: EntityClass, name: string, make: () => readonly string[]): readonly string[] {
    let v = c.cache.get(name)
    if (!v) c.cache.set(name, (v = make()))
    return v
  }

  private partnersOf(kind: EntityKind, id: string, rel: Relation): readonly string[] {
    const c = this.classOf[kind].get(id)
    return c ? this.cached(c, rel, () => unionMembers(c.partners(rel).keys())) : []
  }

  /** Puts an entity in the class its attributes and references call for. */
  private place(kind: EntityKind, id: string, attrs: string[]): void {
    const ownId = (this.refs[kind].get(id) ?? 0) > 0 ? id : null
    const key = classKey(attrs, ownId)
    const from = this.classOf[kind].get(id)
    if (from?.key === key) return
    let to = this.classes[kind].get(key)
    if (!to) to = this.createClass(kind, key, attrs, ownId)
    if (kind === 'identity' && this.moved && !this.moved.has(id)) {
      this.moved.set(id, { view: from ? (this.touched?.get(from) ?? view(from)) : '', mark: this.lastChangeAt(id) })
    }
    if (kind === 'service') {
      if (from) this.noteViewers(from)
      this.noteViewers(to)
    }
    if (from) this.leave(kind, id, from)
    if (kind === 'posture-check') this.postureStamp++
    to.add(id)
    this.classOf[kind].set(id, to)
    this.dropPartnerCaches(to)
    for (const a of to.attrs) this.useAttr(kind, a, +1)
  }

  private leave(kind: EntityKind, id: string, from: EntityClass): void {
    if (kind === 'posture-check') this.postureStamp++
    from.remove(id)
    this.dropPartnerCaches(from)
    for (const a of from.attrs) this.useAttr(kind, a, -1)
    if (from.members.size === 0) this.dropClass(from)
  }

  private useAttr(kind: EntityKind, attr: string, d: number): void {
    const m = this.attrUse[kind]
    const n = (m.get(attr) ?? 0) + d
    if (n === 0) m.delete(attr)
    else m.set(attr, n)
    if (n === 0 || n === d) this.attrSorted[kind] = null
  }

  private createClass(kind: EntityKind, key: string, attrs: string[], ownId: string | null): EntityClass {
    const c = new EntityClass(kind, key, new Set(attrs), ownId)
    this.classes[kind].set(key, c)
    for (const e of this.bySideKind[kind]) this.linkClass(c, e)
    return c
  }

  private dropClass(c: EntityClass): void {
    for (const pid of c.policies) {
      const e = this.entries.get(pid)!
      for (const s of e.sides) if (s.kind === c.kind) s.classes.delete(c)
    }
    c.policies.clear()
    policiesChanged(c)
    for (const [rel, partners] of c.links) {
      for (const p of partners.keys()) {
        this.noteView(p)
        p.links.get(rel)?.delete(c)
        p.dropCaches()
      }
    }
    c.links.clear()
    this.classes[c.kind].delete(c.key)
  }

  /** Links a new class to a policy if the policy selects it. */
  private linkClass(c: EntityClass, e: Entry): void {
    const side = e.sides.find((s) => s.kind === c.kind)!
    if (!selects(side, e.semantic, c)) return
    side.classes.add(c)
    c.policies.add(e.policy.id)
    policiesChanged(c)
    const { rel, a, b } = e.pair
    if (side === a) for (const other of b.classes) this.bump(c, other, rel, +1)
    else if (side === b) for (const other of a.classes) this.bump(other, c, rel, +1)
  }

  private install(e: Entry): void {
    this.postureStamp++
    this.entries.set(e.policy.id, e)
    for (const s of e.sides) {
      this.bySideKind[s.kind].add(e)
      for (const c of this.classes[s.kind].values()) {
        if (selects(s, e.semantic, c)) {
          s.classes.add(c)
          c.policies.add(e.policy.id)
          policiesChanged(c)
        }
      }
    }
    const { rel, a, b } = e.pair
    for (const x of a.classes) for (const y of b.classes) this.bump(x, y, rel, +1)
  }

  private uninstall(e: Entry): void {
    const { rel, a, b } = e.pair
    for (const x of a.classes) for (const y of b.classes) this.bump(x, y, rel, -1)
    for (const s of e.sides) {
      this.bySideKind[s.kind].delete(e)
      for (const c of s.classes) {
        c.policies.delete(e.policy.id)
        policiesChanged(c)
      }
    }
    this.entries.delete(e.policy.id)
  }

  /** Changes the count between two classes (x on side a, y on side b) on both sides. */
  private bump(x: EntityClass, y: EntityClass, rel: Relation, d: number): void {
    this.noteView(x)
    this.noteView(y)
    const mx = x.partners(rel)
    const n = (mx.get(y) ?? 0) + d
    if (n < 0) throw new Error(`policy index: negative count ${rel} ${x.key} ${y.key}`)
    const my = y.partners(rel)
    if (n === 0) {
      mx.delete(y)
      my.delete(x)
    } else {
      mx.set(y, n)
      my.set(x, n)
    }
    if (n === 0 || n === d) {
      x.dropCaches()
      y.dropCaches()
    } else if (rel === 'dial' || rel === 'bind') {
      x.linking[rel].delete(y)
    }
  }

  /** Remembers an identity class's view before the first change of this operation. */
  private noteView(c: EntityClass): void {
    if (c.kind === 'identity' && this.touched && this.opStamp !== null && !this.touched.has(c)) this.touched.set(c, view(c))
  }

  /** Notes the view of every identity class that sees a service class, before its members change. */
  private noteViewers(sc: EntityClass): void {
    for (const rel of ['dial', 'bind'] as const) for (const ic of sc.links.get(rel)?.keys() ?? []) this.noteView(ic)
  }

  /** A member joined or left: partners' member lists that include this class are stale. */
  private dropPartnerCaches(c: EntityClass): void {
    for (const partners of c.links.values()) for (const p of partners.keys()) p.dropCaches()
  }

  /** Counts `@id` mentions; collects `kind:id` of entities whose "is named by a policy" state flipped. */
  private countRefs(e: Entry, d: number, flipped: Set<string>): void {
    for (const s of e.sides) {
      const m = this.refs[s.kind]
      for (const id of s.roles.ids) {
        const n = (m.get(id) ?? 0) + d
        if (n === 0) m.delete(id)
        else m.set(id, n)
        if (n === 0 || n === d) {
          const k = `${s.kind}\u0000${id}`
          if (!flipped.delete(k)) flipped.add(k)
        }
      }
    }
  }

  private replaceFlipped(flipped: Set<string>): void {
    for (const k of flipped) {
      const [kind, id] = k.split('\u0000') as [EntityKind, string]
      const c = this.classOf[kind].get(id)
      if (c) this.place(kind, id, [...c.attrs].sort())
    }
  }
}

const BOTH: readonly Permission[] = ['Bind', 'Dial']
const BIND: readonly Permission[] = ['Bind']
const DIAL: readonly Permission[] = ['Dial']
const NONE: readonly Permission[] = []
const NO_IDS: readonly string[] = []

/**
 * What an identity class sees, as a digest: per relation, the sums of its partner service classes' member digests
 * and sizes. Service classes partition the services, so equal digests mean the same services with the same
 * permissions (up to a 64-bit hash collision).
 */
function view(ic: EntityClass): string {
  const digest = (rel: Relation) => {
    let h1 = 0
    let h2 = 0
    let n = 0
    for (const c of ic.links.get(rel)?.keys() ?? []) {
      h1 = (h1 + c.h1) >>> 0
      h2 = (h2 + c.h2) >>> 0
      n += c.members.size
    }
    return `${h1}.${h2}.${n}`
  }
  return `${digest('dial')}|${digest('bind')}`
}

function selects(side: Side, semantic: Semantic, c: EntityClass): boolean {
  const r = side.roles
  if (r.all) return true
  if (c.ownId !== null && r.ids.includes(c.ownId)) return true
  if (r.attrs.length === 0) return false
  return semantic === 'AllOf' ? r.attrs.every((a) => c.attrs.has(a)) : r.attrs.some((a) => c.attrs.has(a))
}

function side(kind: EntityKind, roles: readonly string[]): Side {
  return { kind, roles: splitRoles(roles), classes: new Set() }
}

function makeEntry(p: IndexPolicy): Entry {
  switch (p.kind) {
    case 'service-policy': {
      const a = side('identity', p.identityRoles)
      const b = side('service', p.serviceRoles)
      return { policy: p, semantic: p.semantic, sides: [a, b, side('posture-check', p.postureCheckRoles)], pair: { rel: p.type === 'Dial' ? 'dial' : 'bind', a, b } }
    }
    case 'edge-router-policy': {
      const a = side('identity', p.identityRoles)
      const b = side('router', p.edgeRouterRoles)
      return { policy: p, semantic: p.semantic, sides: [a, b], pair: { rel: 'erp', a, b } }
    }
    case 'service-edge-router-policy': {
      const a = side('service', p.serviceRoles)
      const b = side('router', p.edgeRouterRoles)
      return { policy: p, semantic: p.semantic, sides: [a, b], pair: { rel: 'serp', a, b } }
    }
  }
}

function samePosture(a: IndexPolicy, b: IndexPolicy): boolean {
  if (a.kind !== 'service-policy' || b.kind !== 'service-policy') return false
  return a.semantic === b.semantic && a.postureCheckRoles.join('\u0000') === b.postureCheckRoles.join('\u0000')
}

/** A class's policies changed: its cached lists of them are stale (policiesOf). */
function policiesChanged(c: EntityClass): void {
  for (const kind of ['service-policy', 'edge-router-policy', 'service-edge-router-policy'] as const) c.cache.delete(`policies:${kind}`)
}
