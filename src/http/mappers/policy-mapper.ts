/**
 * Policy records → wire details with their `*RolesDisplay` arrays, and filter rows.
 * Display entries: `#x` → {role:'#x', name:'#x'}; `@id` → {role:'@id', name:'@<entity name>'}; an `@id` naming no
 * readable entity is dropped. The arrays are never null.
 */
import type { EdgeRouterPolicy, EntityKind, ServiceEdgeRouterPolicy, ServicePolicy, Stored } from '../../domain/policy/policy-types.ts'
import { selfLink } from '../http-envelope.ts'
import { BASE_SYMBOLS, iso } from './common-mapper.ts'

const POLICY_SYMBOLS = { ...BASE_SYMBOLS, name: 'string', semantic: 'string' } as const
/** The fields the filter language knows on each policy kind (see the row functions below). */
export const SERVICE_POLICY_SYMBOLS = {
  ...POLICY_SYMBOLS, type: 'string', identityRoles: 'set', serviceRoles: 'set', postureCheckRoles: 'set', identities: 'set', services: 'set',
} as const
export const EDGE_ROUTER_POLICY_SYMBOLS = { ...POLICY_SYMBOLS, identityRoles: 'set', edgeRouterRoles: 'set' } as const
export const SERVICE_EDGE_ROUTER_POLICY_SYMBOLS = { ...POLICY_SYMBOLS, serviceRoles: 'set', edgeRouterRoles: 'set' } as const

/** The name of an entity of `kind`, or undefined when there is none. */
export type NameOf = (kind: EntityKind, id: string) => string | undefined

export function toNamedRoles(roles: readonly string[], kind: EntityKind, nameOf: NameOf): { role: string; name: string }[] {
  const out: { role: string; name: string }[] = []
  for (const role of roles) {
    if (!role.startsWith('@')) {
      out.push({ role, name: role })
      continue
    }
    const name = nameOf(kind, role.slice(1))
    if (name !== undefined) out.push({ role, name: `@${name}` })
  }
  return out
}

function base(p: Stored & { name: string }, path: string, subLists: readonly string[]) {
  const links: Record<string, { href: string }> = { ...selfLink(path, p.id) }
  for (const l of subLists) links[l] = { href: `./${path}/${p.id}/${l}` }
  return { id: p.id, createdAt: iso(p.createdAt), updatedAt: iso(p.updatedAt), _links: links, tags: p.tags ?? {}, name: p.name }
}

export function toServicePolicyDetail(p: ServicePolicy, nameOf: NameOf) {
  return {
    ...base(p, 'service-policies', ['identities', 'services', 'posture-checks']),
    type: p.type,
    semantic: p.semantic,
    identityRoles: p.identityRoles,
    identityRolesDisplay: toNamedRoles(p.identityRoles, 'identity', nameOf),
    serviceRoles: p.serviceRoles,
    serviceRolesDisplay: toNamedRoles(p.serviceRoles, 'service', nameOf),
    postureCheckRoles: p.postureCheckRoles,
    postureCheckRolesDisplay: toNamedRoles(p.postureCheckRoles, 'posture-check', nameOf),
  }
}

export function toEdgeRouterPolicyDetail(p: EdgeRouterPolicy, nameOf: NameOf) {
  return {
    ...base(p, 'edge-router-policies', ['edge-routers', 'identities']),
    semantic: p.semantic,
    identityRoles: p.identityRoles,
    identityRolesDisplay: toNamedRoles(p.identityRoles, 'identity', nameOf),
    edgeRouterRoles: p.edgeRouterRoles,
    edgeRouterRolesDisplay: toNamedRoles(p.edgeRouterRoles, 'router', nameOf),
    isSystem: p.isSystem,
  }
}

export function toServiceEdgeRouterPolicyDetail(p: ServiceEdgeRouterPolicy, nameOf: NameOf) {
  return {
    ...base(p, 'service-edge-router-policies', ['edge-routers', 'services']),
    semantic: p.semantic,
    serviceRoles: p.serviceRoles,
    serviceRolesDisplay: toNamedRoles(p.serviceRoles, 'service', nameOf),
    edgeRouterRoles: p.edgeRouterRoles,
    edgeRouterRolesDisplay: toNamedRoles(p.edgeRouterRoles, 'router', nameOf),
  }
}

function baseRow(p: Stored & { name: string; semantic: string }, isSystem = false): Record<string, unknown> {
  return { id: p.id, name: p.name, createdAt: p.createdAt, updatedAt: p.updatedAt, tags: p.tags ?? {}, isSystem, semantic: p.semantic }
}

/** `members(kind)` lists the entities the policy selects (the public `identities`/`services` set symbols). */
export function toServicePolicyRow(p: ServicePolicy, members: (kind: EntityKind) => readonly string[]): Record<string, unknown> {
  return {
    ...baseRow(p),
    type: p.type,
    identityRoles: p.identityRoles,
    serviceRoles: p.serviceRoles,
    postureCheckRoles: p.postureCheckRoles,
    identities: members('identity'),
    services: members('service'),
  }
}

export function toEdgeRouterPolicyRow(p: EdgeRouterPolicy): Record<string, unknown> {
  return { ...baseRow(p, p.isSystem), identityRoles: p.identityRoles, edgeRouterRoles: p.edgeRouterRoles }
}

export function toServiceEdgeRouterPolicyRow(p: ServiceEdgeRouterPolicy): Record<string, unknown> {
  return { ...baseRow(p), serviceRoles: p.serviceRoles, edgeRouterRoles: p.edgeRouterRoles }
}
