/**
 * Both APIs: `GET /controllers`, the nodes of a cluster as SDKs read them to fail over (oidc-and-ha.md §5): the
 * replicated records (controllers aggregate) with `isOnline` from this node's liveness view, read from memory. The
 * Client API needs any full session, the Management API an admin. A single node answers an empty list, as the real
 * controller does without Raft.
 * @see edge-api client.yml / management.yml listControllers
 */
import type { ControllersActor } from '../../../actors/controllers/controllers-actor.ts'
import type { ControllerNode } from '../../../domain/cluster/controller-types.ts'
import { ListQuery } from '../../../../schemas/common.ts'
import { ControllerDetail } from '../../../../schemas/controller.ts'
import type { ClusterView } from '../../http-cluster.ts'
import { respondList, type ListSpec } from '../../http-list.ts'
import { route, type ApiName, type RouteDef } from '../../http-route.ts'
import { CONTROLLER_SYMBOLS, toControllerDetail, toControllerRow } from '../../mappers/controller-mapper.ts'

export interface ControllerRouteDeps {
  controllers: ControllersActor
  /** Absent on a single node. */
  cluster?: ClusterView
}

function controllerListing(deps: ControllerRouteDeps, api: ApiName): ListSpec<ControllerNode> {
  const cluster = deps.cluster
  const online = (c: ControllerNode) => cluster?.isOnline(c.id) ?? false
  return {
    symbols: CONTROLLER_SYMBOLS,
    candidates: () => (cluster ? deps.controllers.snapshot().byId.values() : []),
    toRow: (c) => toControllerRow(c, online(c)),
    toView: (c) => toControllerDetail(c, online(c), api),
  }
}

export function controllerRoutes(deps: ControllerRouteDeps): RouteDef[] {
  const common = { method: 'GET', path: '/controllers', tag: 'Controllers', query: ListQuery, response: ControllerDetail } as const
  return [
    route({
      ...common, apis: ['client'], access: 'session', summary: 'List the controllers of the cluster (edge-client and edge-oidc addresses only)',
      handle: (ctx) => respondList(ctx.query, controllerListing(deps, 'client')),
    }),
    route({
      ...common, apis: ['management'], access: 'admin', summary: 'List the controllers of the cluster',
      handle: (ctx) => respondList(ctx.query, controllerListing(deps, 'management')),
    }),
  ]
}
