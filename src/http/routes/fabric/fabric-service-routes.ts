/**
 * Fabric API: services (every service, as the real controller's fabric service store holds edge and fabric-only ones)
 * and their terminators. A put or patch changes only the fabric fields (name, terminatorStrategy, maxIdleTimeMillis,
 * tags) and keeps the edge ones (role attributes, configs), as the real controller overlays them; a put resets the
 * fabric fields it leaves out (strategy smartrouting, idle time 0, no tags). A create is refused: the real
 * controller makes a fabric-only service, hidden from the edge APIs, which edgeplane has no notion of.
 * @see ziti controller/internal/routes/fabric_service_router.go; controller/model/service_model.go
 */
import type { ServiceFields } from '../../../actors/policy-graph/policy-graph-messages.ts'
import { FabricServiceDetail, FabricServicePatch, FabricServiceUpdate, FabricTerminatorDetail } from '../../../../schemas/fabric.ts'
import { ListQuery } from '../../../../schemas/common.ts'
import { ok, okEmpty } from '../../http-envelope.ts'
import { respondList } from '../../http-list.ts'
import { route, type RouteDef } from '../../http-route.ts'
import { toFabricServiceDetail } from '../../mappers/fabric-mapper.ts'
import { changeOf } from '../route-change.ts'
import { found, presentFields, type GraphRouteDeps } from '../management/crud-routes.ts'
import { FABRIC, fabricServiceListing, refusedRoute, terminatorSubList } from './fabric-common.ts'

const ROUTES = { list: '/services', item: '/services/:id', terminators: '/services/:id/terminators' } as const
const FIELDS = ['name', 'terminatorStrategy', 'maxIdleTimeMillis', 'tags'] as const
const tag = 'Service'

export function fabricServiceRoutes(deps: GraphRouteDeps): RouteDef[] {
  const write = (id: string, input: ServiceFields, ctx: Parameters<typeof changeOf>[0]) =>
    deps.graph.ask({ type: 'service.update', id, input, replace: false, change: changeOf(ctx) })
  return [
    route({
      ...FABRIC, method: 'GET', path: ROUTES.list, tag, summary: 'List services', query: ListQuery, response: FabricServiceDetail,
      handle: (ctx) => respondList(ctx.query, fabricServiceListing(deps)),
    }),
    refusedRoute({
      method: 'POST', path: ROUTES.list, tag, summary: 'Create a fabric-only service (refused)',
      why: 'the real controller makes a fabric-only service here (hidden from the edge APIs), which edgeplane does not have: create a service through POST /edge/management/v1/services',
    }),
    route({
      ...FABRIC, method: 'GET', path: ROUTES.item, tag, summary: 'Get a service', response: FabricServiceDetail,
      handle: (ctx) => ok(toFabricServiceDetail(found(deps.graph.snapshot().services.get(ctx.params.id)))),
    }),
    route({
      ...FABRIC, method: 'PUT', path: ROUTES.item, tag, summary: 'Update the fabric fields of a service', body: FabricServiceUpdate,
      handle: async (ctx) => {
        const b = ctx.body
        await write(ctx.params.id, { name: b.name, terminatorStrategy: b.terminatorStrategy || 'smartrouting', maxIdleTimeMillis: b.maxIdleTimeMillis ?? 0, tags: b.tags ?? {} }, ctx)
        return okEmpty()
      },
    }),
    route({
      ...FABRIC, method: 'PATCH', path: ROUTES.item, tag, summary: 'Update the given fabric fields of a service', body: FabricServicePatch,
      handle: async (ctx) => {
        await write(ctx.params.id, presentFields<ServiceFields>(ctx.body, FIELDS), ctx)
        return okEmpty()
      },
    }),
    route({
      ...FABRIC, method: 'DELETE', path: ROUTES.item, tag, summary: 'Delete a service (and its terminators)',
      handle: async (ctx) => {
        await deps.graph.ask({ type: 'service.delete', id: ctx.params.id, change: changeOf(ctx) })
        return okEmpty()
      },
    }),
    terminatorSubList({
      path: ROUTES.terminators, tag, summary: 'List the terminators of a service', response: FabricTerminatorDetail, deps,
      terminators: (id) => (deps.graph.snapshot().services.get(id) ? deps.graph.snapshot().terminatorsOfService(id) : undefined),
    }),
  ]
}
