/**
 * A plain model of the policy graph for the index tests: entities with attributes, policies, a seeded random
 * operation generator, and the brute-force evaluation of every answer straight from the policies.
 */
import { rolesMatch, splitRoles } from '../../../../src/domain/policy/policy-roles.ts'
import type { EntityKind, IndexPolicy, PolicyType } from '../../../../src/domain/policy/policy-types.ts'
import type { PolicyIndex } from '../../../../src/domain/policy/policy-index.ts'
import { rng } from '../../../support/rng.ts'

export const KINDS: EntityKind[] = ['identity', 'service', 'router', 'posture-check']
const ATTRS = ['a', 'b', 'c', 'd', 'e']

export class Model {
  readonly entities = new Map<EntityKind, Map<string, string[] | null>>(KINDS.map((k) => [k, new Map()]))
  readonly policies = new Map<string, IndexPolicy>()
}

export { rng }

export type Op =
  | { op: 'putEntity'; kind: EntityKind; id: string; attrs: string[] | null }
  | { op: 'removeEntity'; kind: EntityKind; id: string }
  | { op: 'putPolicy'; policy: IndexPolicy }
  | { op: 'removePolicy'; id: string }

export function randomOp(m: Model, r: () => number): Op {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!
  const attrs = (): string[] | null => (r() < 0.1 ? null : ATTRS.filter(() => r() < 0.35))
  const roles = (kind: EntityKind): string[] => {
    const x = r()
    if (x < 0.1) return ['#all']
    if (x < 0.15) return []
    const out = new Set<string>()
    const ids = [...m.entities.get(kind)!.keys()]
    const n = 1 + Math.floor(r() * 3)
    for (let i = 0; i < n; i++) {
      if (r() < 0.65 || ids.length === 0) out.add('#' + pick(ATTRS))
      else out.add('@' + (r() < 0.05 ? 'ghost' : pick(ids)))
    }
    return [...out]
  }
  const x = r()
  if (x < 0.4) {
    const kind = pick(KINDS)
    const existing = [...m.entities.get(kind)!.keys()]
    const id = existing.length > 0 && r() < 0.4 ? pick(existing) : `${kind[0]}${Math.floor(r() * 12)}`
    return { op: 'putEntity', kind, id, attrs: attrs() }
  }
  if (x < 0.5) {
    const kind = pick(KINDS)
    const existing = [...m.entities.get(kind)!.keys()]
    if (existing.length > 0) return { op: 'removeEntity', kind, id: pick(existing) }
  }
  if (x < 0.9 || m.policies.size === 0) {
    const id = m.policies.size > 0 && r() < 0.4 ? pick([...m.policies.keys()]) : `p${Math.floor(r() * 20)}`
    const prev = m.policies.get(id)
    const kind = prev?.kind ?? pick(['service-policy', 'edge-router-policy', 'service-edge-router-policy'] as const)
    const semantic = r() < 0.5 ? 'AllOf' : 'AnyOf'
    let policy: IndexPolicy
    if (kind === 'service-policy') {
      const type: PolicyType = r() < 0.5 ? 'Dial' : 'Bind'
      policy = { id, kind, type, semantic, identityRoles: roles('identity'), serviceRoles: roles('service'), postureCheckRoles: roles('posture-check') }
    } else if (kind === 'edge-router-policy') {
      policy = { id, kind, semantic, identityRoles: roles('identity'), edgeRouterRoles: roles('router') }
    } else {
      policy = { id, kind, semantic, serviceRoles: roles('service'), edgeRouterRoles: roles('router') }
    }
    return { op: 'putPolicy', policy }
  }
  return { op: 'removePolicy', id: pick([...m.policies.keys()]) }
}

export function applyToModel(m: Model, o: Op): void {
  if (o.op === 'putEntity') m.entities.get(o.kind)!.set(o.id, o.attrs)
  else if (o.op === 'removeEntity') m.entities.get(o.kind)!.delete(o.id)
  else if (o.op === 'putPolicy') m.policies.set(o.policy.id, o.policy)
  else m.policies.delete(o.id)
}

export function applyToIndex(ix: PolicyIndex, o: Op, now: number | null): void {
  if (o.op === 'putEntity') ix.putEntity(o.kind, o.id, o.attrs, now)
  else if (o.op === 'removeEntity') ix.removeEntity(o.kind, o.id, now)
  else if (o.op === 'putPolicy') ix.putPolicy(o.policy, now)
  else ix.removePolicy(o.id, now)
}

// ---- brute force ----

function sidesOf(p: IndexPolicy): Partial<Record<EntityKind, readonly string[]>> {
  if (p.kind === 'service-policy') return { identity: p.identityRoles, service: p.serviceRoles, 'posture-check': p.postureCheckRoles }
  if (p.kind === 'edge-router-policy') return { identity: p.identityRoles, router: p.edgeRouterRoles }
  return { service: p.serviceRoles, router: p.edgeRouterRoles }
}

export function selects(m: Model, p: IndexPolicy, kind: EntityKind, id: string): boolean {
  const roles = sidesOf(p)[kind]
  if (!roles) return false
  const attrs = m.entities.get(kind)!.get(id)
  if (attrs === undefined) return false
  return rolesMatch(splitRoles(roles), p.semantic, id, attrs ?? [])
}

const sorted = (xs: Iterable<string>) => [...xs].sort()

export function brute(m: Model) {
  const ids = (k: EntityKind) => sorted(m.entities.get(k)!.keys())
  const pols = [...m.policies.values()]
  const perm = (i: string, s: string) => {
    const has = (t: PolicyType) =>
      pols.some((p) => p.kind === 'service-policy' && p.type === t && selects(m, p, 'identity', i) && selects(m, p, 'service', s))
    return [...(has('Bind') ? ['Bind'] : []), ...(has('Dial') ? ['Dial'] : [])]
  }
  const joined = (kind: 'edge-router-policy' | 'service-edge-router-policy', k1: EntityKind, id: string, k2: EntityKind) =>
    ids(k2).filter((o) => pols.some((p) => p.kind === kind && selects(m, p, k1, id) && selects(m, p, k2, o)))
  return { ids, pols, perm, joined }
}

/** Checks every read of the index against the brute-force evaluation; returns the first mismatch. */
export function crossCheck(m: Model, ix: PolicyIndex): string | undefined {
  const b = brute(m)
  const eq = (what: string, got: readonly unknown[], want: readonly unknown[]) =>
    JSON.stringify(got) === JSON.stringify(want) ? undefined : `${what}: got ${JSON.stringify(got)} want ${JSON.stringify(want)}`
  for (const k of KINDS) {
    const e = eq(`countOf ${k}`, [ix.countOf(k)], [m.entities.get(k)!.size])
    if (e) return e
    const attrs = new Set<string>()
    for (const a of m.entities.get(k)!.values()) for (const x of a ?? []) attrs.add(x)
    const e2 = eq(`attributesInUse ${k}`, ix.attributesInUse(k), sorted(attrs))
    if (e2) return e2
  }
  for (const i of b.ids('identity')) {
    const visible: string[] = []
    for (const s of b.ids('service')) {
      const want = b.perm(i, s)
      if (want.length > 0) visible.push(s)
      const e = eq(`permissionsOf ${i} ${s}`, ix.permissionsOf(i, s), want)
      if (e) return e
      for (const t of ['Dial', 'Bind'] as const) {
        const wantP = sorted(b.pols.filter((p) => p.kind === 'service-policy' && p.type === t && selects(m, p, 'identity', i) && selects(m, p, 'service', s)).map((p) => p.id))
        const e3 = eq(`policiesLinking ${i} ${s} ${t}`, ix.policiesLinking(i, s, t), wantP)
        if (e3) return e3
      }
      const e4 = eq(`routersFor ${i} ${s}`, ix.routersFor(i, s), b.joined('edge-router-policy', 'identity', i, 'router').filter((r) => b.joined('service-edge-router-policy', 'service', s, 'router').includes(r)))
      if (e4) return e4
    }
    const e = eq(`servicesOfIdentity ${i}`, ix.servicesOfIdentity(i), visible)
    if (e) return e
    const e2 = eq(`routersOfIdentity ${i}`, ix.routersOfIdentity(i), b.joined('edge-router-policy', 'identity', i, 'router'))
    if (e2) return e2
  }
  for (const s of b.ids('service')) {
    const e = eq(`identitiesOfService ${s}`, ix.identitiesOfService(s), b.ids('identity').filter((i) => b.perm(i, s).length > 0))
    if (e) return e
    const e2 = eq(`routersOfService ${s}`, ix.routersOfService(s), b.joined('service-edge-router-policy', 'service', s, 'router'))
    if (e2) return e2
  }
  for (const r of b.ids('router')) {
    const e = eq(`identitiesOfRouter ${r}`, ix.identitiesOfRouter(r), b.joined('edge-router-policy', 'router', r, 'identity'))
    if (e) return e
    const e2 = eq(`servicesOfRouter ${r}`, ix.servicesOfRouter(r), b.joined('service-edge-router-policy', 'router', r, 'service'))
    if (e2) return e2
  }
  for (const p of b.pols) {
    for (const k of KINDS) {
      const e = eq(`membersOf ${p.id} ${k}`, ix.membersOf(p.id, k), b.ids(k).filter((id) => selects(m, p, k, id)))
      if (e) return e
    }
  }
  for (const k of KINDS) {
    for (const id of b.ids(k)) {
      for (const pk of ['service-policy', 'edge-router-policy', 'service-edge-router-policy'] as const) {
        const e = eq(`policiesOf ${k} ${id} ${pk}`, ix.policiesOf(k, id, pk), sorted(b.pols.filter((p) => p.kind === pk && selects(m, p, k, id)).map((p) => p.id)))
        if (e) return e
      }
    }
  }
  return undefined
}
