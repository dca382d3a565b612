/**
 * Router writes that touch two aggregates: a router (policy graph) and the identity of a tunneler-enabled edge router
 * (identity actor). The rule kept: every tunneler-enabled edge router has an identity with its id and name, type
 * Router, marked `isRouterIdentity`; no other identity is so marked. Either router API (edge-routers, routers) writes
 * through here.
 *
 * A new router (edge or fabric) is created with its first enrollment (erott): the flow chooses the router id, has the
 * enrollment JWT made for it, then the graph stores router and enrollment in one transaction.
 *
 * Failure story:
 * - The graph writes first (router and its system policy in one transaction); a refusal there writes nothing.
 * - The identity follows second, and no rule can refuse it: its id is the router's (ids are unique), the graph refused
 *   a tunneler router named like any identity, and the identity actor refuses any identity a name a tunneler router
 *   holds (both check the other's live snapshot while deciding, so no request can slip between them). So once the
 *   graph answered, the caller gets its answer; the only failures left are a failed commit (fail-stop: the process
 *   exits) and a crash.
 * - A crash between the two writes leaves the identity behind the graph. Start-up runs
 *   `reconcileRouterIdentities` before the listener opens, which makes the identities follow the graph again; so the
 *   integrity check (which computes the same `routerIdentityDrift`) finds nothing once a controller is up.
 */
import type { Identity } from '../../domain/identity/identity-types.ts'
import type { Router } from '../../domain/policy/policy-types.ts'
import type { IdentityActor } from '../../actors/identity/identity-actor.ts'
import type { PolicyGraphActor } from '../../actors/policy-graph/policy-graph-actor.ts'
import type { NewRouterEnrollment, RouterFields } from '../../actors/policy-graph/policy-graph-messages.ts'
import { newShortId } from '../../lib/ids.ts'
import type { ChangeContext } from '../../actors/runtime/actor-runtime.ts'

export interface RouterFlowDeps {
  graph: PolicyGraphActor
  identities: IdentityActor
}

/** One identity change that brings a router's identity in line with the graph. */
export interface RouterIdentitySync {
  routerId: string
  /** The router's name (empty when `present` is false). */
  name: string
  /** True: the identity must exist as the router's; false: it must not exist. */
  present: boolean
}

/** What makes a new router's enrollment (the erott enrollment module, enroll-erott.ts). */
export interface RouterEnrollmentMaker {
  newEnrollment(target: { id: string; name: string }): Promise<NewRouterEnrollment>
}

export async function createRouter(
  deps: RouterFlowDeps & { routerEnrollments: RouterEnrollmentMaker },
  input: RouterFields,
  isEdge: boolean,
  change: ChangeContext,
): Promise<{ id: string }> {
  const routerId = newShortId()
  // the name is checked by the graph; the JWT does not carry it
  const enrollment = await deps.routerEnrollments.newEnrollment({ id: routerId, name: input.name ?? '' })
  const { id } = await deps.graph.ask({ type: 'router.create', input, isEdge, id: routerId, enrollment, change })
  await syncRouterIdentity(deps, id, change)
  return { id }
}

export async function updateRouter(deps: RouterFlowDeps, id: string, input: RouterFields, replace: boolean, change: ChangeContext): Promise<void> {
  await deps.graph.ask({ type: 'router.update', id, input, replace, change })
  await syncRouterIdentity(deps, id, change)
}

export async function deleteRouter(deps: RouterFlowDeps, id: string, change: ChangeContext): Promise<void> {
  await deps.graph.ask({ type: 'router.delete', id, change })
  await syncRouterIdentity(deps, id, change)
}

/** What the identity of `routerId` must become for the graph as it now is; undefined when it already matches. */
export function routerIdentitySyncOf(router: Router | undefined, routerId: string, identity: Identity | undefined): RouterIdentitySync | undefined {
  const present = router !== undefined && router.isEdge && router.isTunnelerEnabled
  if (present) {
    if (identity?.name === router.name && identity.typeId === 'Router' && identity.isRouterIdentity) return undefined
    return { routerId, name: router.name, present }
  }
  return identity === undefined ? undefined : { routerId, name: '', present }
}

/**
 * Every router identity that does not follow the graph: a tunneler-enabled edge router whose identity is missing,
 * misnamed or unmarked, and a marked identity whose router is gone or no longer tunnels.
 */
export function routerIdentityDrift(
  routers: { get(id: string): Router | undefined; values(): Iterable<Router> },
  identities: { identity(id: string): Identity | undefined; identities: { values(): Iterable<Identity> } },
): RouterIdentitySync[] {
  const out: RouterIdentitySync[] = []
  for (const r of routers.values()) {
    if (!r.isEdge || !r.isTunnelerEnabled) continue
    const sync = routerIdentitySyncOf(r, r.id, identities.identity(r.id))
    if (sync) out.push(sync)
  }
  for (const i of identities.identities.values()) {
    if (!i.isRouterIdentity) continue
    const r = routers.get(i.id)
    if (!r || !r.isEdge || !r.isTunnelerEnabled) out.push({ routerId: i.id, name: '', present: false })
  }
  return out
}

/** Makes the identity of `routerId` match the router as the graph now holds it (see the file header). */
export async function syncRouterIdentity(deps: RouterFlowDeps, routerId: string, change: ChangeContext): Promise<void> {
  const sync = routerIdentitySyncOf(deps.graph.snapshot().routers.get(routerId), routerId, deps.identities.snapshot().identity(routerId))
  if (sync) await deps.identities.ask({ type: 'identity.syncRouterIdentity', ...sync, change })
}

/** Start-up: brings every router identity in line with the graph (after a crash between the two writes). */
export async function reconcileRouterIdentities(deps: RouterFlowDeps, change: ChangeContext): Promise<RouterIdentitySync[]> {
  const drift = routerIdentityDrift(deps.graph.snapshot().routers, deps.identities.snapshot())
  for (const sync of drift) await deps.identities.ask({ type: 'identity.syncRouterIdentity', ...sync, change })
  return drift
}
