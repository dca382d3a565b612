/**
 * What the fabric API's routes share: every route is the fabric API's and admin-only (the real controller's
 * `permissions.IsAdmin()`, or its default management access for links, circuits and inspections, which for an
 * identity without fine-grained permissions is the same), the listings of the stored entities as the fabric renders
 * them, sub-lists of terminators, and the record of an official operation edgeplane refuses.
 * @see ziti controller/internal/routes/fabric_*_router.go, link_router.go, circuit_router.go
 */
import type { TSchema } from '@sinclair/typebox'
import type { Router, Service, Terminator } from '../../../domain/policy/policy-types.ts'
import { ApiError } from '../../../errors/api-error.ts'
import { ListQuery } from '../../../../schemas/common.ts'
import { respondList } from '../../http-list.ts'
import { route, type HttpMethod, type RouteDef } from '../../http-route.ts'
import { DELETED_NAME, toFabricRouterDetail, toFabricServiceDetail, toFabricTerminatorDetail } from '../../mappers/fabric-mapper.ts'
import { ROUTER_SYMBOLS, toRouterRow } from '../../mappers/router-mapper.ts'
import { SERVICE_SYMBOLS, toServiceRow } from '../../mappers/service-mapper.ts'
import { TERMINATOR_SYMBOLS, toTerminatorRow } from '../../mappers/terminator-mapper.ts'
import { tableListing, type GraphRouteDeps, type Listing } from '../management/crud-routes.ts'

/** Every fabric route: the fabric API, admins only. */
export const FABRIC = { apis: ['fabric'], access: 'admin' } as const

/**
 * An official operation answered only with a refusal: 405 METHOD_NOT_ALLOWED whose cause says why and what to use
 * instead. Its record carries `refused`, so the served spec leaves it out and the served-spec test counts it.
 */
export function refusedRoute(def: { method: HttpMethod; path: string; tag: string; summary: string; why: string; handle?: RouteDef['handle'] }): RouteDef {
  return route({
    ...FABRIC, method: def.method, path: def.path, tag: def.tag, summary: def.summary, refused: def.why,
    handle: def.handle ?? (() => {
      throw ApiError.withMessage('METHOD_NOT_ALLOWED', def.why)
    }),
  })
}

const nameOr = (t: { name: string } | undefined): string => t?.name ?? DELETED_NAME

export function fabricServiceListing(deps: Pick<GraphRouteDeps, 'graph'>): Listing<Service> {
  return tableListing(deps.graph.snapshot().services, { symbols: SERVICE_SYMBOLS, indexed: ['id', 'name', 'roleAttributes'], toRow: toServiceRow, toView: toFabricServiceDetail })
}

/** Edge and fabric routers alike, as the real controller's fabric router store holds both. */
export function fabricRouterListing(deps: Pick<GraphRouteDeps, 'graph' | 'presence'>): Listing<Router> {
  const p = deps.presence
  return tableListing(deps.graph.snapshot().routers, {
    symbols: ROUTER_SYMBOLS,
    indexed: ['id', 'name'],
    toRow: (r) => toRouterRow(r, p.presenceOf(r.id)),
    toView: (r) => toFabricRouterDetail(r, p.presenceOf(r.id)),
  })
}

export function fabricTerminatorListing(deps: Pick<GraphRouteDeps, 'graph'>): Listing<Terminator> {
  const g = deps.graph.snapshot()
  return tableListing(g.terminators, {
    symbols: TERMINATOR_SYMBOLS,
    indexed: ['id'],
    toRow: toTerminatorRow,
    toView: (t) => toFabricTerminatorDetail(t, { service: nameOr(g.services.get(t.serviceId)), router: nameOr(g.routers.get(t.routerId)) }),
  })
}

/** The names of routers and services in the graph as it is now (for the views of links and circuits). */
export function graphNames(deps: Pick<GraphRouteDeps, 'graph'>): { router(id: string): string | undefined; service(id: string): string | undefined } {
  const g = deps.graph.snapshot()
  return { router: (id) => g.routers.get(id)?.name, service: (id) => g.services.get(id)?.name }
}

/** A list of terminators of the entity the path names (404 when it does not exist), with the list query of every list. */
export function terminatorSubList(def: {
  path: string
  tag: string
  summary: string
  response: TSchema
  deps: Pick<GraphRouteDeps, 'graph'>
  /** The parent's terminators in id order; undefined when there is no such parent. */
  terminators(parentId: string): readonly Terminator[] | undefined
}): RouteDef {
  return route({
    ...FABRIC, method: 'GET', path: def.path, tag: def.tag, summary: def.summary, query: ListQuery, response: def.response,
    handle: (ctx) => {
      const terminators = def.terminators(ctx.params.id)
      if (terminators === undefined) throw ApiError.notFound()
      const listing = fabricTerminatorListing(def.deps)
      return respondList(ctx.query, { ...listing, indexed: undefined, presortedById: true, candidates: () => terminators })
    },
  })
}
