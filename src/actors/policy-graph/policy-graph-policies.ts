/**
 * Handlers of the three policy kinds, plus the helpers every handler uses to write policies: put/remove with their
 * events, and stripping `@id` references when an entity goes away. System edge router policies are refused here.
 */
import { ApiError } from '../../errors/api-error.ts'
import { newShortId } from '../../lib/ids.ts'
import {
  decideName,
  decideNotSystem,
  decidePolicyRoles,
  decidePolicyType,
  decideSemantic,
  type RoleTarget,
} from '../../domain/policy/graph-decide.ts'
import type {
  EdgeRouterPolicy,
  EntityKind,
  ServiceEdgeRouterPolicy,
  ServicePolicy,
  Tags,
} from '../../domain/policy/policy-types.ts'
import type { AnyPolicy, PolicyGraphReads } from '../../domain/policy/graph-reads.ts'
import type { SubDbName } from '../../store/store-catalogue.ts'
import type { Tx } from '../runtime/actor-runtime.ts'
import type {
  EdgeRouterPolicyFields,
  PolicyGraphEvent,
  ServiceEdgeRouterPolicyFields,
  ServicePolicyFields,
} from './policy-graph-messages.ts'
import {
  edgeRouterPolicyIndex,
  ROLE_FIELDS,
  serviceEdgeRouterPolicyIndex,
  servicePolicyIndex,
  type PolicyGraphState,
  type RoleField,
} from './policy-graph-state.ts'

/** What the graph needs to know about identities, which live in the identity actor. */
export interface PolicyGraphLookups {
  identityExists(id: string): boolean
  /** True when an identity other than `exceptId` has this name (a tunneler router's identity takes its name). */
  identityNameTaken(name: string, exceptId?: string): boolean
}

/**
 * What deciding a write needs: the graph's reads, the identity lookups and the time. A handler's GraphCtx is one;
 * a preview (flows/insight/insight-preview.ts) builds one from the snapshot, so it decides with the same code.
 */
export interface BuildCtx {
  state: PolicyGraphReads
  lookups: PolicyGraphLookups
  tx: { now: number }
}

/** Everything a handler works with. */
export interface GraphCtx {
  state: PolicyGraphState
  tx: Tx<PolicyGraphEvent>
  lookups: PolicyGraphLookups
}

const POLICY_DB: Record<AnyPolicy['kind'], SubDbName> = {
  'service-policy': 'service-policies',
  'edge-router-policy': 'edge-router-policies',
  'service-edge-router-policy': 'service-edge-router-policies',
}

const indexOf = (p: AnyPolicy) =>
  p.kind === 'service-policy'
    ? servicePolicyIndex(p.policy)
    : p.kind === 'edge-router-policy'
      ? edgeRouterPolicyIndex(p.policy)
      : serviceEdgeRouterPolicyIndex(p.policy)

/** Stores a policy, stages its write and emits graph.policy.put (with the previous version when there was one). */
export function putPolicy(ctx: GraphCtx, p: AnyPolicy, previous?: AnyPolicy): void {
  const s = ctx.state
  if (p.kind === 'service-policy') s.putServicePolicy(p.policy)
  else if (p.kind === 'edge-router-policy') s.putEdgeRouterPolicy(p.policy)
  else s.putServiceEdgeRouterPolicy(p.policy)
  ctx.tx.put(POLICY_DB[p.kind], p.policy.id, p.policy)
  ctx.tx.emit({ type: 'graph.policy.put', policy: indexOf(p), ...(previous ? { previous: indexOf(previous) } : {}) })
}

export function removePolicy(ctx: GraphCtx, p: AnyPolicy): void {
  const s = ctx.state
  if (p.kind === 'service-policy') s.removeServicePolicy(p.policy.id)
  else if (p.kind === 'edge-router-policy') s.removeEdgeRouterPolicy(p.policy.id)
  else s.removeServiceEdgeRouterPolicy(p.policy.id)
  ctx.tx.remove(POLICY_DB[p.kind], p.policy.id)
  ctx.tx.emit({ type: 'graph.policy.deleted', policy: indexOf(p) })
}

/**
 * Drops `@<entityId>` from the role lists for `kind` of every policy naming it, persisting and announcing each
 * changed policy. `skip` leaves some policies alone (a router's own system policy, deleted instead).
 */
export function stripReferences(ctx: GraphCtx, kind: EntityKind, entityId: string, skip?: (p: AnyPolicy) => boolean): void {
  const role = `@${entityId}`
  for (const ref of ctx.state.policiesReferencing(kind, entityId)) {
    const prev = ctx.state.policy(ref.kind, ref.id)
    if (!prev || skip?.(prev)) continue
    const next = { ...prev.policy, updatedAt: ctx.tx.now } as Record<RoleField, string[]> & AnyPolicy['policy']
    for (const [field, k] of ROLE_FIELDS[ref.kind]) {
      if (k === kind) next[field] = next[field].filter((r) => r !== role)
    }
    putPolicy(ctx, { kind: prev.kind, policy: next } as AnyPolicy, prev)
  }
}

/** The role targets of a request: `@id`s must name existing entities. */
export function roleTargets(ctx: BuildCtx): Record<EntityKind, RoleTarget> {
  return {
    identity: { noun: 'identities', exists: (id) => ctx.lookups.identityExists(id) },
    service: { noun: 'services', exists: (id) => ctx.state.services.has(id) },
    router: { noun: 'edge routers', exists: (id) => ctx.state.edgeRouters.has(id) },
    'posture-check': { noun: 'posture checks', exists: (id) => ctx.state.postureChecks.has(id) },
  }
}

/** Given value, else the default on put (`replace`), else the stored one on patch. null counts as absent. */
export function pick<T>(given: T | null | undefined, replace: boolean, dflt: T, stored: T): T {
  return given ?? (replace ? dflt : stored)
}

function roles(ctx: BuildCtx, field: RoleField, given: readonly string[] | null | undefined, replace: boolean, stored: readonly string[] | undefined, kind: EntityKind): readonly string[] {
  if (given !== undefined) return decidePolicyRoles(field, given, roleTargets(ctx)[kind])
  return replace || stored === undefined ? [] : stored
}

function tags(given: Tags | null | undefined, replace: boolean, stored: Tags | undefined): Tags {
  return given !== undefined ? (given ?? {}) : replace || stored === undefined ? {} : stored
}

/** Decides the service-policy a create (no id), put (`replace`) or patch would store, and the one it replaces; writes nothing. */
export function buildServicePolicy(ctx: BuildCtx, id: string | undefined, input: ServicePolicyFields, replace: boolean): { policy: ServicePolicy; prev: ServicePolicy | undefined } {
  const s = ctx.state
  const prev = id === undefined ? undefined : s.servicePolicies.get(id)
  if (id !== undefined && !prev) throw ApiError.notFound()
  const policy: ServicePolicy = {
    id: prev?.id ?? newShortId(),
    name: input.name !== undefined || !prev ? decideName('servicePolicies', input.name, (n) => s.servicePolicies.idByName(n), prev?.id) : prev.name,
    type: input.type !== undefined || !prev ? decidePolicyType(input.type) : prev.type,
    semantic: input.semantic !== undefined || !prev || replace ? decideSemantic(input.semantic) : prev.semantic,
    identityRoles: roles(ctx, 'identityRoles', input.identityRoles, replace, prev?.identityRoles, 'identity'),
    serviceRoles: roles(ctx, 'serviceRoles', input.serviceRoles, replace, prev?.serviceRoles, 'service'),
    postureCheckRoles: roles(ctx, 'postureCheckRoles', input.postureCheckRoles, replace, prev?.postureCheckRoles, 'posture-check'),
    tags: tags(input.tags, replace, prev?.tags),
    createdAt: prev?.createdAt ?? ctx.tx.now,
    updatedAt: ctx.tx.now,
  }
  return { policy, prev }
}

export function saveServicePolicy(ctx: GraphCtx, id: string | undefined, input: ServicePolicyFields, replace: boolean): { id: string } {
  const { policy, prev } = buildServicePolicy(ctx, id, input, replace)
  putPolicy(ctx, { kind: 'service-policy', policy }, prev && { kind: 'service-policy', policy: prev })
  return { id: policy.id }
}

/** Decides the edge-router-policy a create (no id), put (`replace`) or patch would store, and the one it replaces; writes nothing. */
export function buildEdgeRouterPolicy(ctx: BuildCtx, id: string | undefined, input: EdgeRouterPolicyFields, replace: boolean): { policy: EdgeRouterPolicy; prev: EdgeRouterPolicy | undefined } {
  const s = ctx.state
  const prev = id === undefined ? undefined : s.edgeRouterPolicies.get(id)
  if (id !== undefined && !prev) throw ApiError.notFound()
  if (prev) decideNotSystem(prev, 'edgeRouterPolicy', 'update')
  const policy: EdgeRouterPolicy = {
    id: prev?.id ?? newShortId(),
    name: input.name !== undefined || !prev ? decideName('edgeRouterPolicies', input.name, (n) => s.edgeRouterPolicies.idByName(n), prev?.id) : prev.name,
    semantic: input.semantic !== undefined || !prev || replace ? decideSemantic(input.semantic) : prev.semantic,
    identityRoles: roles(ctx, 'identityRoles', input.identityRoles, replace, prev?.identityRoles, 'identity'),
    edgeRouterRoles: roles(ctx, 'edgeRouterRoles', input.edgeRouterRoles, replace, prev?.edgeRouterRoles, 'router'),
    isSystem: false,
    tags: tags(input.tags, replace, prev?.tags),
    createdAt: prev?.createdAt ?? ctx.tx.now,
    updatedAt: ctx.tx.now,
  }
  return { policy, prev }
}

export function saveEdgeRouterPolicy(ctx: GraphCtx, id: string | undefined, input: EdgeRouterPolicyFields, replace: boolean): { id: string } {
  const { policy, prev } = buildEdgeRouterPolicy(ctx, id, input, replace)
  putPolicy(ctx, { kind: 'edge-router-policy', policy }, prev && { kind: 'edge-router-policy', policy: prev })
  return { id: policy.id }
}

/** Decides the service-edge-router-policy a create (no id), put (`replace`) or patch would store, and the one it replaces; writes nothing. */
export function buildServiceEdgeRouterPolicy(
  ctx: BuildCtx,
  id: string | undefined,
  input: ServiceEdgeRouterPolicyFields,
  replace: boolean,
): { policy: ServiceEdgeRouterPolicy; prev: ServiceEdgeRouterPolicy | undefined } {
  const s = ctx.state
  const prev = id === undefined ? undefined : s.serviceEdgeRouterPolicies.get(id)
  if (id !== undefined && !prev) throw ApiError.notFound()
  const policy: ServiceEdgeRouterPolicy = {
    id: prev?.id ?? newShortId(),
    name:
      input.name !== undefined || !prev
        ? decideName('serviceEdgeRouterPolicies', input.name, (n) => s.serviceEdgeRouterPolicies.idByName(n), prev?.id)
        : prev.name,
    semantic: input.semantic !== undefined || !prev || replace ? decideSemantic(input.semantic) : prev.semantic,
    serviceRoles: roles(ctx, 'serviceRoles', input.serviceRoles, replace, prev?.serviceRoles, 'service'),
    edgeRouterRoles: roles(ctx, 'edgeRouterRoles', input.edgeRouterRoles, replace, prev?.edgeRouterRoles, 'router'),
    tags: tags(input.tags, replace, prev?.tags),
    createdAt: prev?.createdAt ?? ctx.tx.now,
    updatedAt: ctx.tx.now,
  }
  return { policy, prev }
}

export function saveServiceEdgeRouterPolicy(
  ctx: GraphCtx,
  id: string | undefined,
  input: ServiceEdgeRouterPolicyFields,
  replace: boolean,
): { id: string } {
  const { policy, prev } = buildServiceEdgeRouterPolicy(ctx, id, input, replace)
  putPolicy(ctx, { kind: 'service-edge-router-policy', policy }, prev && { kind: 'service-edge-router-policy', policy: prev })
  return { id: policy.id }
}

/** The policy a delete would remove: it must exist and not be a system policy. */
export function decideDeletePolicy(state: PolicyGraphReads, kind: AnyPolicy['kind'], id: string): AnyPolicy {
  const p = state.policy(kind, id)
  if (!p) throw ApiError.notFound()
  if (p.kind === 'edge-router-policy') decideNotSystem(p.policy, 'edgeRouterPolicy', 'delete')
  return p
}

export function deletePolicy(ctx: GraphCtx, kind: AnyPolicy['kind'], id: string): void {
  removePolicy(ctx, decideDeletePolicy(ctx.state, kind, id))
}

/** An identity is gone: drop its `@id` from every policy and its overrides. */
export function identityRemoved(ctx: GraphCtx, identityId: string): void {
  stripReferences(ctx, 'identity', identityId)
  const keys = ctx.state.overrideKeysOf('identity', identityId)
  for (const key of keys) {
    ctx.state.removeOverrideKey(key)
    ctx.tx.remove('service-config-overrides', key)
  }
  if (keys.length > 0) ctx.tx.emit({ type: 'graph.overrides.changed', identityIds: [identityId] })
}
