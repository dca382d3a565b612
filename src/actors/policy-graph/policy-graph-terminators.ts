/**
 * Handlers of terminators: the Management API's (create, update, delete) and a router's over its control channel
 * (establish, change cost or precedence, remove). Every create emits `graph.terminator.created` (the control plane
 * validates new terminators with their router). System terminators (made for an edge router) refuse the Management
 * API's updates and take its deletes, as the real controller's system entity constraint and terminator store do.
 */
import { ApiError } from '../../errors/api-error.ts'
import { newShortId } from '../../lib/ids.ts'
import { decideCost, decideNotSystem, decidePrecedence, decideRequired } from '../../domain/policy/graph-decide.ts'
import { conflictOf, oversizedField, ownedTerminator, TERMINATOR_LIMITS, withCostAndPrecedence } from '../../domain/policy/graph-decide-terminators.ts'
import type { Precedence, Terminator } from '../../domain/policy/policy-types.ts'
import type { RouterTerminatorInput, TerminatorEstablished, TerminatorFields, TerminatorRouterUpdated } from './policy-graph-messages.ts'
import { pick, type GraphCtx } from './policy-graph-policies.ts'

export function saveTerminator(ctx: GraphCtx, id: string | undefined, input: TerminatorFields, replace: boolean): { id: string } {
  const s = ctx.state
  const prev = id === undefined ? undefined : s.terminators.get(id)
  if (id !== undefined && !prev) throw ApiError.notFound()
  if (prev) decideNotSystem(prev, 'terminator', 'update')
  const serviceId = input.serviceId ?? prev?.serviceId ?? ''
  if (!s.services.has(serviceId)) throw ApiError.invalidField('service', `no service found with id '${serviceId}'`, serviceId)
  const routerId = input.routerId ?? prev?.routerId ?? ''
  if (!s.routers.has(routerId)) throw ApiError.invalidField('router', `no router found with id '${routerId}'`, routerId)
  const next: Terminator = {
    id: prev?.id ?? newShortId(),
    serviceId,
    routerId,
    binding: input.binding !== undefined || !prev ? decideRequired('binding', input.binding) : prev.binding,
    address: input.address !== undefined || !prev ? decideRequired('address', input.address) : prev.address,
    identity: pick(input.identity, replace, '', prev?.identity ?? ''),
    identitySecret: input.identitySecret !== undefined ? input.identitySecret : replace || !prev ? null : prev.identitySecret,
    cost: decideCost('cost', pick(input.cost, replace, 0, prev?.cost ?? 0)),
    precedence: decidePrecedence(pick(input.precedence, replace, 'default', prev?.precedence ?? 'default')),
    hostId: prev?.hostId ?? '',
    isSystem: false,
    peerData: prev?.peerData ?? {},
    sourceCtrl: prev?.sourceCtrl ?? '',
    tags: pick(input.tags, replace, {}, prev?.tags ?? {}),
    createdAt: prev?.createdAt ?? ctx.tx.now,
    updatedAt: ctx.tx.now,
  }
  putTerminator(ctx, next, prev === undefined)
  return { id: next.id }
}

export function deleteTerminator(ctx: GraphCtx, id: string): void {
  if (!ctx.state.terminators.has(id)) throw ApiError.notFound()
  ctx.state.removeTerminator(id)
  ctx.tx.remove('terminators', id)
}

/** A router's terminator: created, found the same (cost and precedence taken from the request), or a conflict. */
export function establishTerminator(ctx: GraphCtx, input: RouterTerminatorInput): TerminatorEstablished {
  const s = ctx.state
  // the id becomes a store key: one past LMDB's limit would fail the commit (fail-stop), so it is refused here too
  const oversized = oversizedField({
    id: input.id, address: input.address, binding: input.binding, instanceId: input.identity,
    instanceSecretBytes: input.identitySecret === null ? 0 : Buffer.from(input.identitySecret, 'base64').length,
    peerDataBytes: Object.values(input.peerData).reduce((n, v) => n + 4 + Buffer.from(v, 'base64').length, 0),
  })
  if (oversized) throw ApiError.invalidField(oversized, `${oversized} is larger than ${TERMINATOR_LIMITS[oversized]} bytes`)
  const prev = input.id === '' ? undefined : s.terminators.get(input.id)
  if (prev) {
    const conflict = conflictOf(prev, input)
    if (conflict) return { outcome: 'conflict', with: conflict }
    const { cost, precedence, changed } = withCostAndPrecedence(prev, input)
    if (!changed) return { outcome: 'unchanged', id: prev.id }
    putTerminator(ctx, { ...prev, cost, precedence, updatedAt: ctx.tx.now }, false)
    return { outcome: 'updated', id: prev.id }
  }
  if (!s.services.has(input.serviceId)) return { outcome: 'no-service' }
  if (!s.routers.has(input.routerId)) return { outcome: 'no-router' }
  const next: Terminator = {
    id: input.id === '' ? newShortId() : input.id,
    serviceId: input.serviceId,
    routerId: input.routerId,
    binding: input.binding,
    address: input.address,
    identity: input.identity,
    identitySecret: input.identitySecret,
    cost: decideCost('cost', input.cost),
    precedence: input.precedence,
    hostId: input.hostId,
    isSystem: input.isSystem,
    peerData: { ...input.peerData },
    sourceCtrl: input.sourceCtrl,
    tags: {},
    createdAt: ctx.tx.now,
    updatedAt: ctx.tx.now,
  }
  putTerminator(ctx, next, true)
  return { outcome: 'created', id: next.id }
}

/** A router changes the cost or precedence of a terminator on itself. */
export function routerUpdateTerminator(
  ctx: GraphCtx,
  msg: { id: string; routerId: string; binding?: string; cost?: number; precedence?: Precedence },
): TerminatorRouterUpdated {
  const owned = ownedTerminator(ctx.state.terminators.get(msg.id), msg.routerId, msg.binding)
  if (!owned.ok) return { outcome: 'refused', refusal: owned.refusal }
  const prev = owned.terminator
  const { cost, precedence, changed } = withCostAndPrecedence(prev, msg)
  if (!changed) return { outcome: 'unchanged' }
  putTerminator(ctx, { ...prev, cost: decideCost('cost', cost), precedence, updatedAt: ctx.tx.now }, false)
  return { outcome: 'updated' }
}

/** Removes the listed terminators that exist (on `routerId`, when given). */
export function removeTerminators(ctx: GraphCtx, ids: readonly string[], routerId: string | undefined): { removed: number } {
  let removed = 0
  for (const id of ids) {
    const t = ctx.state.terminators.get(id)
    if (!t || (routerId !== undefined && t.routerId !== routerId)) continue
    ctx.state.removeTerminator(id)
    ctx.tx.remove('terminators', id)
    removed++
  }
  return { removed }
}

function putTerminator(ctx: GraphCtx, next: Terminator, created: boolean): void {
  ctx.state.putTerminator(next)
  ctx.tx.put('terminators', next.id, next)
  if (created) ctx.tx.emit({ type: 'graph.terminator.created', terminator: next })
}
