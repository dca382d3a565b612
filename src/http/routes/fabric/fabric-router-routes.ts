/**
 * Fabric API: routers (edge and fabric alike) with what this node's control plane knows of them (`connected`, and
 * while connected its link listeners and version), and their terminators. A put or patch changes the fabric fields
 * through the same flow as the Management API's `/routers` (so an edge router keeps its edge fields, and a tunneler's
 * identity follows its name); `fingerprint` may be repeated, not changed (fabric-decide.ts). A create is refused:
 * the real controller takes an id and the fingerprint of a certificate made elsewhere, where edgeplane makes a router
 * with an enrollment.
 * @see ziti controller/internal/routes/fabric_router_router.go, fabric_router_api_model.go
 */
import type { RouterFields } from '../../../actors/policy-graph/policy-graph-messages.ts'
import { decideRouterFingerprint } from '../../../domain/fabric/fabric-decide.ts'
import { decideNoRouterBootstrap } from '../../../domain/policy/graph-decide.ts'
import { deleteRouter, updateRouter } from '../../../flows/routers/router-identity.ts'
import { FabricRouterDetail, FabricRouterPatch, FabricRouterUpdate, FabricTerminatorDetail } from '../../../../schemas/fabric.ts'
import { ListQuery } from '../../../../schemas/common.ts'
import { ok, okEmpty } from '../../http-envelope.ts'
import { respondList } from '../../http-list.ts'
import { route, type RouteDef } from '../../http-route.ts'
import { toFabricRouterDetail } from '../../mappers/fabric-mapper.ts'
import { changeOf } from '../route-change.ts'
import { found, presentFields, type GraphRouteDeps } from '../management/crud-routes.ts'
import { FABRIC, fabricRouterListing, refusedRoute, terminatorSubList } from './fabric-common.ts'

const ROUTES = { list: '/routers', item: '/routers/:id', terminators: '/routers/:id/terminators' } as const
const FIELDS = ['name', 'cost', 'noTraversal', 'disabled', 'tags'] as const
const tag = 'Router'

export function fabricRouterRoutes(deps: GraphRouteDeps): RouteDef[] {
  const router = (id: string) => found(deps.graph.snapshot().routers.get(id))
  /** The checks of a fabric write body, then its fabric fields. */
  const fieldsOf = (id: string, body: { fingerprint?: string | null; configs?: string[] | null; ctrlChanListeners?: Record<string, unknown> | null }) => {
    decideRouterFingerprint(router(id).fingerprint, body.fingerprint)
    decideNoRouterBootstrap(body.configs, body.ctrlChanListeners)
    return presentFields<RouterFields>(body, FIELDS)
  }
  return [
    route({
      ...FABRIC, method: 'GET', path: ROUTES.list, tag, summary: 'List routers', query: ListQuery, response: FabricRouterDetail,
      handle: (ctx) => respondList(ctx.query, fabricRouterListing(deps)),
    }),
    refusedRoute({
      method: 'POST', path: ROUTES.list, tag, summary: 'Create a router from an id and a fingerprint (refused)',
      why: 'a router is made with an enrollment (POST /edge/management/v1/routers or /edge-routers), never from an id and the fingerprint of a certificate made elsewhere',
    }),
    route({
      ...FABRIC, method: 'GET', path: ROUTES.item, tag, summary: 'Get a router', response: FabricRouterDetail,
      handle: (ctx) => ok(toFabricRouterDetail(router(ctx.params.id), deps.presence.presenceOf(ctx.params.id))),
    }),
    route({
      ...FABRIC, method: 'PUT', path: ROUTES.item, tag, summary: 'Update the fabric fields of a router', body: FabricRouterUpdate,
      handle: async (ctx) => {
        const given = fieldsOf(ctx.params.id, ctx.body)
        // a put resets the fabric fields it leaves out, and only those: an edge router's edge fields are not this view's
        await updateRouter(deps, ctx.params.id, { disabled: false, tags: {}, ...Object.fromEntries(Object.entries(given).filter(([, v]) => v !== null)) }, false, changeOf(ctx))
        return okEmpty()
      },
    }),
    route({
      ...FABRIC, method: 'PATCH', path: ROUTES.item, tag, summary: 'Update the given fabric fields of a router', body: FabricRouterPatch,
      handle: async (ctx) => {
        await updateRouter(deps, ctx.params.id, fieldsOf(ctx.params.id, ctx.body), false, changeOf(ctx))
        return okEmpty()
      },
    }),
    route({
      ...FABRIC, method: 'DELETE', path: ROUTES.item, tag, summary: 'Delete a router (and its terminators)',
      handle: async (ctx) => {
        await deleteRouter(deps, ctx.params.id, changeOf(ctx))
        return okEmpty()
      },
    }),
    terminatorSubList({
      path: ROUTES.terminators, tag, summary: 'List the terminators of a router', response: FabricTerminatorDetail, deps,
      terminators: (id) => (deps.graph.snapshot().routers.get(id) ? deps.graph.snapshot().terminatorsOfRouter(id) : undefined),
    }),
  ]
}
