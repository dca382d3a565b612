/**
 * Previews a write to a policy, or to an identity's, service's or edge router's role attributes, without applying it.
 * Rules:
 * - the write is decided by the same functions its real operation's actor runs (buildServicePolicy, buildService,
 *   buildRouter, buildIdentityUpdate, decideNewIdentity, decideDeletePolicy, decideDeleteIdentity), on the current
 *   snapshots: a write the real operation refuses is refused here with the same error (404, 400 COULD_NOT_VALIDATE,
 *   a duplicate name, a system policy)
 * - update, patch and delete need `id`; create takes none (a new id is made, as the real create does)
 * - the decided record becomes one index change, previewed on a copy of the policy index
 *   (domain/policy/policy-preview.ts): nothing is written, no actor is asked, no LMDB transaction runs
 * - only what the index holds is previewed: creating a tunneler-enabled edge router (its system edge router policy
 *   and its identity) previews the router alone
 */
import { buildIdentityUpdate, decideNewIdentity } from '../../actors/identity/identity-actor.ts'
import type { IdentityFields } from '../../actors/identity/identity-messages.ts'
import { buildService } from '../../actors/policy-graph/policy-graph-configs.ts'
import type {
  EdgeRouterPolicyFields,
  RouterFields,
  ServiceEdgeRouterPolicyFields,
  ServiceFields,
  ServicePolicyFields,
} from '../../actors/policy-graph/policy-graph-messages.ts'
import {
  buildEdgeRouterPolicy,
  buildServiceEdgeRouterPolicy,
  buildServicePolicy,
  decideDeletePolicy,
  type BuildCtx,
  type PolicyGraphLookups,
} from '../../actors/policy-graph/policy-graph-policies.ts'
import { buildRouter } from '../../actors/policy-graph/policy-graph-routers.ts'
import { edgeRouterPolicyIndex, serviceEdgeRouterPolicyIndex, servicePolicyIndex } from '../../actors/policy-graph/policy-graph-state.ts'
import { decideDeleteIdentity } from '../../domain/identity/identity-decide.ts'
import type { IdentityReads } from '../../domain/identity/identity-reads.ts'
import type { PolicyGraphReads } from '../../domain/policy/graph-reads.ts'
import type { IndexChange, IndexPreview } from '../../domain/policy/policy-preview.ts'
import type { PolicyKind } from '../../domain/policy/policy-types.ts'
import { ApiError } from '../../errors/api-error.ts'
import { newShortId } from '../../lib/ids.ts'

export const PREVIEW_ENTITY_TYPES = [
  'service-policies',
  'edge-router-policies',
  'service-edge-router-policies',
  'identities',
  'services',
  'edge-routers',
] as const
export type PreviewEntityType = (typeof PREVIEW_ENTITY_TYPES)[number]
export type PreviewOperation = 'create' | 'update' | 'patch' | 'delete'

export interface PreviewRequest {
  operation: PreviewOperation
  entityType: PreviewEntityType
  id?: string
  /** The operation's body, mapped to the actor's fields as its route maps it. */
  fields: object
}

export interface PreviewDeps {
  graph: () => PolicyGraphReads
  identities: () => IdentityReads
  lookups: PolicyGraphLookups
  preview(change: IndexChange): IndexPreview
  now(): number
}

export interface PreviewOutcome {
  preview: IndexPreview
  /** The entity a create would make (its id is not kept), so answers can name it. */
  created?: { id: string; name: string }
}

const POLICY_KIND: Partial<Record<PreviewEntityType, PolicyKind>> = {
  'service-policies': 'service-policy',
  'edge-router-policies': 'edge-router-policy',
  'service-edge-router-policies': 'service-edge-router-policy',
}

export function previewChange(deps: PreviewDeps, req: PreviewRequest): PreviewOutcome {
  const { operation, entityType } = req
  const id = operation === 'create' ? undefined : req.id
  if (operation !== 'create' && (id === undefined || id === '')) throw ApiError.invalidField('id', `id is required to ${operation}`, id ?? null)
  const replace = operation === 'update'
  const graph = deps.graph()
  const ctx: BuildCtx = { state: graph, lookups: deps.lookups, tx: { now: deps.now() } }
  const policyKind = POLICY_KIND[entityType]
  const change = (c: IndexChange, created?: { id: string; name: string }): PreviewOutcome => ({ preview: deps.preview(c), ...(created ? { created } : {}) })
  if (policyKind) {
    if (operation === 'delete') return change({ op: 'removePolicy', id: decideDeletePolicy(graph, policyKind, id!).policy.id })
    const made = (p: { id: string; name: string }) => (operation === 'create' ? { id: p.id, name: p.name } : undefined)
    if (policyKind === 'service-policy') {
      const { policy } = buildServicePolicy(ctx, id, req.fields as ServicePolicyFields, replace)
      return change({ op: 'putPolicy', policy: servicePolicyIndex(policy) }, made(policy))
    }
    if (policyKind === 'edge-router-policy') {
      const { policy } = buildEdgeRouterPolicy(ctx, id, req.fields as EdgeRouterPolicyFields, replace)
      return change({ op: 'putPolicy', policy: edgeRouterPolicyIndex(policy) }, made(policy))
    }
    const { policy } = buildServiceEdgeRouterPolicy(ctx, id, req.fields as ServiceEdgeRouterPolicyFields, replace)
    return change({ op: 'putPolicy', policy: serviceEdgeRouterPolicyIndex(policy) }, made(policy))
  }
  if (entityType === 'identities') {
    const reads = deps.identities()
    if (operation === 'delete') return change({ op: 'removeEntity', kind: 'identity', id: decideDeleteIdentity(reads.identity(id!), id!).id })
    if (operation === 'create') {
      const fields = req.fields as IdentityFields & { name: string }
      const newId = newShortId()
      const { name, roleAttributes } = decideNewIdentity(reads, fields, newId)
      return change({ op: 'putEntity', kind: 'identity', id: newId, attrs: roleAttributes }, { id: newId, name })
    }
    const { next } = buildIdentityUpdate(reads, id!, req.fields as IdentityFields, replace, ctx.tx.now)
    return change({ op: 'putEntity', kind: 'identity', id: next.id, attrs: next.roleAttributes })
  }
  if (entityType === 'services') {
    if (operation === 'delete') {
      if (!graph.services.has(id!)) throw ApiError.notFound()
      return change({ op: 'removeEntity', kind: 'service', id: id! })
    }
    const { next } = buildService(ctx, id, req.fields as ServiceFields, replace)
    return change({ op: 'putEntity', kind: 'service', id: next.id, attrs: next.roleAttributes }, operation === 'create' ? next : undefined)
  }
  if (operation === 'delete') {
    if (!graph.edgeRouters.has(id!)) throw ApiError.notFound()
    return change({ op: 'removeEntity', kind: 'router', id: id! })
  }
  if (id !== undefined && !graph.edgeRouters.has(id)) throw ApiError.notFound()
  const { next } = buildRouter(ctx, id, req.fields as RouterFields, replace)
  return change({ op: 'putEntity', kind: 'router', id: next.id, attrs: next.roleAttributes }, operation === 'create' ? next : undefined)
}
