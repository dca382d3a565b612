/**
 * What a change to the policy graph would do, without doing it: the change is applied to a copy of the policy index
 * (PolicyIndex.clone, then the same index code the resolver runs on the real change), and the two indexes are
 * compared class by class. Identities (services) whose class did not change fare alike, so the comparison walks
 * units: the members of one class minus the entities the change may move, and each such entity alone. The answer
 * is therefore exactly what applying the change does to the index, at a cost of O(classes × partner classes) plus
 * the copy, never O(identities × services).
 * Rules:
 * - access: an (identity, service, Dial|Bind) gained or lost
 * - edge routers: an (identity, service) pair that has Dial or Bind both before and after and whose usable edge
 *   routers (identity's ∩ service's) go from at least one to none; a service policy change never moves routers
 */
import type { PolicyIndex } from './policy-index.ts'
import type { EntityClass } from './policy-index-class.ts'
import type { Permission } from './policy-reads.ts'
import { splitRoles } from './policy-roles.ts'
import type { EntityKind, IndexPolicy } from './policy-types.ts'

/** One change to what the index holds, as the resolver applies it. */
export type IndexChange =
  | { op: 'putEntity'; kind: EntityKind; id: string; attrs: readonly string[] | null }
  | { op: 'removeEntity'; kind: EntityKind; id: string }
  | { op: 'putPolicy'; policy: IndexPolicy }
  | { op: 'removePolicy'; id: string }

/** Applies a change to an index (the resolver does the same from the writing actor's events). */
export function applyIndexChange(ix: PolicyIndex, c: IndexChange, now: number | null): void {
  switch (c.op) {
    case 'putEntity':
      return ix.putEntity(c.kind, c.id, c.attrs, now)
    case 'removeEntity':
      return ix.removeEntity(c.kind, c.id, now)
    case 'putPolicy':
      return ix.putPolicy(c.policy, now)
    case 'removePolicy':
      return ix.removePolicy(c.id, now)
  }
}

/**
 * Entities that fare alike under the change: a class's untouched members, or one entity the change may move. Its
 * members are read from the index copy, which shares member sets with the index: read them before the index changes.
 */
export interface PreviewUnit {
  readonly kind: EntityKind
  /** Class key before and after (null: not there). */
  readonly before: string | null
  readonly after: string | null
  /** Role attributes (after the change when the entity is still there). */
  readonly attrs: readonly string[]
  readonly size: number
  /** Sorted member ids. */
  ids(): readonly string[]
}

export interface AccessDelta {
  identities: PreviewUnit
  services: PreviewUnit
  permission: Permission
  change: 'gained' | 'lost'
}

export interface RouterLoss {
  identities: PreviewUnit
  services: PreviewUnit
}

export interface PreviewTotals {
  dialGained: number
  dialLost: number
  bindGained: number
  bindLost: number
  /** (identity, service) pairs left without a usable edge router. */
  routersLost: number
  /** Distinct identities with any of the above. */
  identities: number
  /** Distinct services with any of the above. */
  services: number
}

export interface IndexPreview {
  access: AccessDelta[]
  routerLosses: RouterLoss[]
  totals: PreviewTotals
}

/** Previews `change` on `ix` (which is left as it is). */
export function previewIndexChange(ix: PolicyIndex, change: IndexChange): IndexPreview {
  const after = ix.clone()
  applyIndexChange(after, change, null)
  return compareIndexes(ix, after, movable(ix, change))
}

/** Entities per kind whose class the change may move: the changed entity, or the ids a changed policy names. */
function movable(ix: PolicyIndex, change: IndexChange): Record<EntityKind, Set<string>> {
  const out: Record<EntityKind, Set<string>> = { identity: new Set(), service: new Set(), router: new Set(), 'posture-check': new Set() }
  const named = (p: IndexPolicy | undefined) => {
    if (!p) return
    const lists: [EntityKind, readonly string[]][] =
      p.kind === 'service-policy'
        ? [['identity', p.identityRoles], ['service', p.serviceRoles], ['posture-check', p.postureCheckRoles]]
        : p.kind === 'edge-router-policy'
          ? [['identity', p.identityRoles], ['router', p.edgeRouterRoles]]
          : [['service', p.serviceRoles], ['router', p.edgeRouterRoles]]
    for (const [kind, roles] of lists) for (const id of splitRoles(roles).ids) out[kind].add(id)
  }
  if (change.op === 'putEntity' || change.op === 'removeEntity') out[change.kind].add(change.id)
  else if (change.op === 'putPolicy') {
    named(ix.policy(change.policy.id))
    named(change.policy)
  } else named(ix.policy(change.id))
  return out
}

function units(kind: EntityKind, b: PolicyIndex, a: PolicyIndex, moved: ReadonlySet<string>): PreviewUnit[] {
  const out: PreviewUnit[] = []
  for (const c of b.classesOf(kind)) {
    let inside = 0
    for (const id of moved) if (c.members.has(id)) inside++
    if (inside === c.members.size) continue
    // the members are read from the copy: it holds the same untouched members and nothing changes it later
    const same = a.classByKey(kind, c.key)!
    const ids = () => same.sortedMembers().filter((id) => !moved.has(id))
    out.push({ kind, before: c.key, after: c.key, attrs: [...c.attrs], size: c.members.size - inside, ids })
  }
  for (const id of [...moved].sort()) {
    const bc = b.classOfEntity(kind, id)
    const ac = a.classOfEntity(kind, id)
    if (!bc && !ac) continue
    const one = [id]
    out.push({ kind, before: bc?.key ?? null, after: ac?.key ?? null, attrs: [...(ac ?? bc)!.attrs], size: 1, ids: () => one })
  }
  return out
}

function byKey(us: readonly PreviewUnit[], side: 'before' | 'after'): Map<string, PreviewUnit[]> {
  const m = new Map<string, PreviewUnit[]>()
  for (const u of us) {
    const k = u[side]
    if (k === null) continue
    const l = m.get(k)
    if (l) l.push(u)
    else m.set(k, [u])
  }
  return m
}

/** Compares two indexes over the same entities but `moved`; `before` and `after` are not changed. */
export function compareIndexes(before: PolicyIndex, after: PolicyIndex, moved: Record<EntityKind, ReadonlySet<string>>): IndexPreview {
  const idUnits = units('identity', before, after, moved.identity)
  const svcUnits = units('service', before, after, moved.service)
  const svcBefore = byKey(svcUnits, 'before')
  const svcAfter = byKey(svcUnits, 'after')
  const cls = (ix: PolicyIndex, kind: EntityKind, key: string | null) => (key === null ? undefined : ix.classByKey(kind, key))
  const access: AccessDelta[] = []
  const routerLosses: RouterLoss[] = []
  for (const iu of idUnits) {
    const ib = cls(before, 'identity', iu.before)
    const ia = cls(after, 'identity', iu.after)
    const candidates = new Set<PreviewUnit>()
    for (const rel of ['dial', 'bind'] as const) {
      for (const sc of ib?.links.get(rel)?.keys() ?? []) for (const su of svcBefore.get(sc.key) ?? []) candidates.add(su)
      for (const sc of ia?.links.get(rel)?.keys() ?? []) for (const su of svcAfter.get(sc.key) ?? []) candidates.add(su)
    }
    for (const su of candidates) {
      const sb = cls(before, 'service', su.before)
      const sa = cls(after, 'service', su.after)
      for (const [rel, permission] of [['dial', 'Dial'], ['bind', 'Bind']] as const) {
        const was = !!ib && !!sb && ib.count(rel, sb) > 0
        const is = !!ia && !!sa && ia.count(rel, sa) > 0
        if (was !== is) access.push({ identities: iu, services: su, permission, change: is ? 'gained' : 'lost' })
      }
      const hadAny = !!ib && !!sb && (ib.count('dial', sb) > 0 || ib.count('bind', sb) > 0)
      const hasAny = !!ia && !!sa && (ia.count('dial', sa) > 0 || ia.count('bind', sa) > 0)
      if (hadAny && hasAny && shareRouter(ib!, sb!) && !shareRouter(ia!, sa!)) routerLosses.push({ identities: iu, services: su })
    }
  }
  return { access, routerLosses, totals: totalsOf(access, routerLosses) }
}

/** Whether an identity class and a service class have an edge router in common (router classes are never empty). */
function shareRouter(ic: EntityClass, sc: EntityClass): boolean {
  const ir = ic.links.get('erp')
  const sr = sc.links.get('serp')
  if (!ir || !sr) return false
  const [small, large] = ir.size <= sr.size ? [ir, sr] : [sr, ir]
  for (const rc of small.keys()) if (large.has(rc)) return true
  return false
}

function totalsOf(access: readonly AccessDelta[], losses: readonly RouterLoss[]): PreviewTotals {
  const t: PreviewTotals = { dialGained: 0, dialLost: 0, bindGained: 0, bindLost: 0, routersLost: 0, identities: 0, services: 0 }
  const ids = new Set<PreviewUnit>()
  const svcs = new Set<PreviewUnit>()
  for (const d of access) {
    const n = d.identities.size * d.services.size
    if (d.permission === 'Dial') d.change === 'gained' ? (t.dialGained += n) : (t.dialLost += n)
    else d.change === 'gained' ? (t.bindGained += n) : (t.bindLost += n)
    ids.add(d.identities)
    svcs.add(d.services)
  }
  for (const l of losses) {
    t.routersLost += l.identities.size * l.services.size
    ids.add(l.identities)
    svcs.add(l.services)
  }
  for (const u of ids) t.identities += u.size
  for (const u of svcs) t.services += u.size
  return t
}
