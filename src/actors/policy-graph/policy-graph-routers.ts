/**
 * Handlers of routers (terminators: policy-graph-terminators.ts), and the system edge router policy of tunneler-enabled edge routers:
 * id = router id, name `edge-router-<routerId>-system`, AnyOf, identityRoles and edgeRouterRoles `['@<routerId>']`,
 * created in the same transaction as the router (or the update that turns tunneling on) and removed when tunneling
 * is turned off or the router is deleted. The router's identity lives in the identity actor; here its name is only
 * checked to be free. Fabric routers (isEdge false) carry no edge fields and join no policy; their events tell the
 * control plane (a router deleted, disabled or re-enrolled loses its control channel), and the policy resolver
 * skips them.
 *
 * Router enrollment (erott) lives in the router record (`enrollment`, `fingerprint`, `isVerified`): a router has at
 * most one enrollment, its view shows it, and redeeming it, extending the certificate or re-enrolling each change
 * that one record in one transaction.
 */
import { ApiError } from '../../errors/api-error.ts'
import { newShortId } from '../../lib/ids.ts'
import { decideCost, decideName, duplicateName } from '../../domain/policy/graph-decide.ts'
import { decideEntityRoleAttributes } from '../../domain/policy/policy-roles.ts'
import { decideRouterRedeemable } from '../../domain/enrollment/enrollment-decide.ts'
import type { EdgeRouterPolicy, Router, RouterEnrollment } from '../../domain/policy/policy-types.ts'
import type { NewRouterEnrollment, RouterFields } from './policy-graph-messages.ts'
import { pick, putPolicy, removePolicy, stripReferences, type BuildCtx, type GraphCtx } from './policy-graph-policies.ts'

export const systemPolicyName = (routerId: string) => `edge-router-${routerId}-system`

/** What a create may bring: the id the caller chose and the router's first enrollment. */
export interface RouterCreateExtras {
  id?: string
  enrollment?: NewRouterEnrollment
}

/** What a router write decides: the record, the one it replaces, and whether its system edge router policy comes or goes. */
export interface RouterDecision {
  next: Router
  prev: Router | undefined
  createSystem: boolean
  removeSystem: EdgeRouterPolicy | undefined
}

/** A router write: no id to create, `replace` for put; `isEdge` (default true) and `created` matter on create only. */
export type RouterWriteArgs = [id: string | undefined, input: RouterFields, replace: boolean, isEdge?: boolean, created?: RouterCreateExtras]

/** Decides a router create (no id), put (`replace`) or patch; writes nothing. */
export function buildRouter(ctx: BuildCtx, ...args: RouterWriteArgs): RouterDecision {
  const [id, input, replace, isEdge = true, created = {}] = args
  const s = ctx.state
  const prev = id === undefined ? undefined : s.routers.get(id)
  if (id !== undefined && !prev) throw ApiError.notFound()
  if (created.id !== undefined && s.routers.has(created.id)) throw new Error(`router id ${created.id} is taken`)
  const edge = prev ? prev.isEdge : isEdge
  const routerId = prev?.id ?? created.id ?? newShortId()
  const name = input.name !== undefined || !prev ? decideName('routers', input.name, (n) => s.routers.idByName(n), prev?.id) : prev.name
  const cost = decideCost('cost', pick(input.cost, replace, 0, prev?.cost ?? 0))
  const roleAttributes = !edge
    ? null
    : input.roleAttributes !== undefined || !prev || replace
      ? decideEntityRoleAttributes(input.roleAttributes)
      : prev.roleAttributes
  const tunneler = edge && pick(input.isTunnelerEnabled, replace, false, prev?.isTunnelerEnabled ?? false)
  const system = s.edgeRouterPolicies.get(routerId)
  const createSystem = tunneler && !system?.isSystem
  if (tunneler && (createSystem || prev?.name !== name) && ctx.lookups.identityNameTaken(name, routerId)) {
    throw duplicateName('identities', name)
  }
  if (createSystem) {
    const other = s.edgeRouterPolicies.idByName(systemPolicyName(routerId))
    if (other !== undefined && other !== routerId) throw duplicateName('edgeRouterPolicies', systemPolicyName(routerId))
  }
  const next: Router = {
    id: routerId,
    name,
    isEdge: edge,
    roleAttributes,
    cost,
    noTraversal: pick(input.noTraversal, replace, false, prev?.noTraversal ?? false),
    disabled: pick(input.disabled, replace, false, prev?.disabled ?? false),
    isTunnelerEnabled: tunneler,
    appData: !edge ? null : input.appData !== undefined ? (input.appData ?? null) : replace || !prev ? null : prev.appData,
    fingerprint: prev?.fingerprint ?? null,
    isVerified: prev?.isVerified ?? false,
    enrollment: prev ? prev.enrollment : created.enrollment ? routerEnrollment(ctx, created.enrollment) : null,
    tags: pick(input.tags, replace, {}, prev?.tags ?? {}),
    createdAt: prev?.createdAt ?? ctx.tx.now,
    updatedAt: ctx.tx.now,
  }
  return { next, prev, createSystem, removeSystem: !tunneler && system?.isSystem ? system : undefined }
}

export function saveRouter(ctx: GraphCtx, ...args: RouterWriteArgs): { id: string } {
  const { next, prev, createSystem, removeSystem } = buildRouter(ctx, ...args)
  const s = ctx.state
  const edge = next.isEdge
  const routerId = next.id
  s.putRouter(next)
  ctx.tx.put('routers', next.id, next)
  ctx.tx.emit({ type: 'graph.router.put', router: next, ...(prev ? { previous: prev } : {}) })
  if (createSystem) {
    const policy: EdgeRouterPolicy = {
      id: routerId,
      name: systemPolicyName(routerId),
      semantic: 'AnyOf',
      identityRoles: [`@${routerId}`],
      edgeRouterRoles: [`@${routerId}`],
      isSystem: true,
      tags: {},
      createdAt: ctx.tx.now,
      updatedAt: ctx.tx.now,
    }
    putPolicy(ctx, { kind: 'edge-router-policy', policy })
  } else if (removeSystem) {
    removePolicy(ctx, { kind: 'edge-router-policy', policy: removeSystem })
  }
  return { id: next.id }
}

function routerEnrollment(ctx: BuildCtx, e: NewRouterEnrollment): RouterEnrollment {
  return { token: e.token, jwt: e.jwt, expiresAt: e.expiresAt, createdAt: ctx.tx.now }
}

/** Writes a changed router record (enrollment fields only: names, roles and policies stay as they are). */
function putRouterRecord(ctx: GraphCtx, prev: Router, next: Router): void {
  ctx.state.putRouter(next)
  ctx.tx.put('routers', next.id, next)
  ctx.tx.emit({ type: 'graph.router.put', router: next, previous: prev })
}

/** Redeems the enrollment holding `token`: the router is verified with the certificate `fingerprint`. */
export function enrollRouter(ctx: GraphCtx, token: string, fingerprint: string): { id: string } {
  const prev = decideRouterRedeemable(ctx.state.routerOfEnrollmentToken(token), token, ctx.tx.now)
  putRouterRecord(ctx, prev, { ...prev, fingerprint, isVerified: true, enrollment: null, updatedAt: ctx.tx.now })
  return { id: prev.id }
}

/** Moves a verified router to a new client certificate, if `previous` still is its current one. */
export function extendRouter(ctx: GraphCtx, id: string, previous: string, fingerprint: string): void {
  const prev = ctx.state.routers.get(id)
  if (!prev || prev.fingerprint !== previous) throw ApiError.unauthorized()
  putRouterRecord(ctx, prev, { ...prev, fingerprint, updatedAt: ctx.tx.now })
}

/** Back to unenrolled with a new enrollment; an outstanding one is replaced (its token stops working). */
export function reEnrollRouter(ctx: GraphCtx, id: string, enrollment: NewRouterEnrollment): void {
  const prev = ctx.state.routers.get(id)
  if (!prev) throw ApiError.notFound()
  putRouterRecord(ctx, prev, { ...prev, fingerprint: null, isVerified: false, enrollment: routerEnrollment(ctx, enrollment), updatedAt: ctx.tx.now })
}

/** Deletes a router with its terminators and its system policy, and drops its `@id` from other policies. */
export function deleteRouter(ctx: GraphCtx, id: string): void {
  const s = ctx.state
  const prev = s.routers.get(id)
  if (!prev) throw ApiError.notFound()
  for (const t of s.terminatorsOfRouter(id)) {
    s.removeTerminator(t.id)
    ctx.tx.remove('terminators', t.id)
  }
  s.removeRouter(id)
  ctx.tx.remove('routers', id)
  ctx.tx.emit({ type: 'graph.router.deleted', router: prev })
  const system = s.edgeRouterPolicies.get(id)
  if (system?.isSystem) removePolicy(ctx, { kind: 'edge-router-policy', policy: system })
  stripReferences(ctx, 'router', id)
}

