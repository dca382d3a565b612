/**
 * Fabric API: terminators (CRUD), the same records and the same graph decisions as the Management API's (a system
 * terminator an edge router made may be deleted, not updated), in the fabric's spelling: `instanceId` and
 * `instanceSecret` are the Management API's `identity` and `identitySecret`; `hostId` may only be empty
 * (fabric-decide.ts). `ziti edge validate service-hosting` reads the list.
 * @see ziti controller/internal/routes/fabric_terminator_router.go, fabric_terminator_api_model.go
 */
import type { TerminatorFields } from '../../../actors/policy-graph/policy-graph-messages.ts'
import { decideNoHostId } from '../../../domain/fabric/fabric-decide.ts'
import { FabricTerminatorCreate, FabricTerminatorDetail, FabricTerminatorPatch, FabricTerminatorUpdate } from '../../../../schemas/fabric.ts'
import { ListQuery } from '../../../../schemas/common.ts'
import { created, ok, okEmpty } from '../../http-envelope.ts'
import { respondList } from '../../http-list.ts'
import { route, type RouteCtx, type RouteDef } from '../../http-route.ts'
import { changeOf } from '../route-change.ts'
import { found, presentFields, type GraphRouteDeps } from '../management/crud-routes.ts'
import { FABRIC, fabricTerminatorListing } from './fabric-common.ts'

const ROUTES = { list: '/terminators', item: '/terminators/:id' } as const
const FIELDS = ['service', 'router', 'binding', 'address', 'instanceId', 'instanceSecret', 'cost', 'precedence', 'tags'] as const
const RENAME = { service: 'serviceId', router: 'routerId', instanceId: 'identity', instanceSecret: 'identitySecret' }
const tag = 'Terminator'

/** The graph's fields of a fabric body (after the hostId check). */
function fieldsOf(body: { hostId?: string }): TerminatorFields {
  decideNoHostId(body.hostId)
  return presentFields<TerminatorFields>(body, FIELDS, RENAME)
}

export function fabricTerminatorRoutes(deps: GraphRouteDeps): RouteDef[] {
  const update = (replace: boolean) => async (ctx: RouteCtx<{ hostId?: string }>) => {
    await deps.graph.ask({ type: 'terminator.update', id: ctx.params.id, input: fieldsOf(ctx.body), replace, change: changeOf(ctx) })
    return okEmpty()
  }
  return [
    route({
      ...FABRIC, method: 'GET', path: ROUTES.list, tag, summary: 'List terminators', query: ListQuery, response: FabricTerminatorDetail,
      handle: (ctx) => respondList(ctx.query, fabricTerminatorListing(deps)),
    }),
    route({
      ...FABRIC, method: 'POST', path: ROUTES.list, tag, summary: 'Create a terminator', body: FabricTerminatorCreate, successStatus: 201,
      handle: async (ctx) => {
        const { id } = await deps.graph.ask({ type: 'terminator.create', input: fieldsOf(ctx.body), change: changeOf(ctx) })
        return created('terminators', id)
      },
    }),
    route({
      ...FABRIC, method: 'GET', path: ROUTES.item, tag, summary: 'Get a terminator', response: FabricTerminatorDetail,
      handle: (ctx) => {
        const listing = fabricTerminatorListing(deps)
        return ok(listing.toView(found(listing.get(ctx.params.id))))
      },
    }),
    route({ ...FABRIC, method: 'PUT', path: ROUTES.item, tag, summary: 'Update all fields of a terminator', body: FabricTerminatorUpdate, handle: update(true) }),
    route({ ...FABRIC, method: 'PATCH', path: ROUTES.item, tag, summary: 'Update the given fields of a terminator', body: FabricTerminatorPatch, handle: update(false) }),
    route({
      ...FABRIC, method: 'DELETE', path: ROUTES.item, tag, summary: 'Delete a terminator',
      handle: async (ctx) => {
        await deps.graph.ask({ type: 'terminator.delete', id: ctx.params.id, change: changeOf(ctx) })
        return okEmpty()
      },
    }),
  ]
}
