/**
 * Fabric API: the links and circuits this node knows (memory only, per node: the control plane's registries behind
 * LinkControl and CircuitControl, domain/fabric/fabric-types.ts). A link's PATCH takes it out of (or back into) path
 * selection and sets its static cost, its DELETE forgets it and sends both its routers a LinkFault (they close it
 * and may dial again); a circuit's DELETE tears it down, gracefully unless `immediate`.
 * @see ziti controller/internal/routes/link_router.go, circuit_router.go
 */
import { CircuitDelete, CircuitDetail, LinkDetail, LinkPatch } from '../../../../schemas/fabric.ts'
import { ListQuery } from '../../../../schemas/common.ts'
import { ApiError } from '../../../errors/api-error.ts'
import { ok, okEmpty } from '../../http-envelope.ts'
import { respondList, type ListSpec } from '../../http-list.ts'
import { route, type RouteDef } from '../../http-route.ts'
import { DELETED_NAME } from '../../mappers/fabric-mapper.ts'
import { CIRCUIT_SYMBOLS, LINK_SYMBOLS, toCircuitDetail, toCircuitRow, toLinkDetail, toLinkRow } from '../../mappers/fabric-link-mapper.ts'
import type { CircuitControl, CircuitView, LinkControl, LinkView } from '../../../domain/fabric/fabric-types.ts'
import { found } from '../management/crud-routes.ts'
import { FABRIC, refusedRoute } from './fabric-common.ts'

const LINKS = { list: '/links', item: '/links/:id' } as const
const CIRCUITS = { list: '/circuits', item: '/circuits/:id' } as const

/** What the link and circuit routes read: this node's links and circuits, and the names their views show. */
export interface FabricLinkRouteDeps {
  links: LinkControl
  circuits: CircuitControl
  /** The names of routers and services as they are now, by id (undefined: gone). */
  names(): { router(id: string): string | undefined; service(id: string): string | undefined }
}

export function fabricLinkRoutes(deps: FabricLinkRouteDeps): RouteDef[] {
  const linkView = () => {
    const names = deps.names()
    return (l: LinkView) => toLinkDetail(l, (id) => names.router(id) ?? DELETED_NAME)
  }
  const circuitView = () => {
    const names = deps.names()
    const router = (id: string) => names.router(id) ?? DELETED_NAME
    return (c: CircuitView) => toCircuitDetail(c, { service: names.service(c.serviceId) ?? DELETED_NAME, router })
  }
  const linkList = (): ListSpec<LinkView> => ({ symbols: LINK_SYMBOLS, candidates: () => deps.links.all(), toRow: toLinkRow, toView: linkView() })
  const circuitList = (): ListSpec<CircuitView> => ({ symbols: CIRCUIT_SYMBOLS, candidates: () => deps.circuits.all(), toRow: toCircuitRow, toView: circuitView() })
  return [
    route({
      ...FABRIC, method: 'GET', path: LINKS.list, tag: 'Link', summary: 'List the links this node knows', query: ListQuery, response: LinkDetail,
      handle: (ctx) => respondList(ctx.query, linkList()),
    }),
    route({
      ...FABRIC, method: 'GET', path: LINKS.item, tag: 'Link', summary: 'Get a link', response: LinkDetail,
      handle: (ctx) => ok(linkView()(found(deps.links.get(ctx.params.id)))),
    }),
    route({
      ...FABRIC, method: 'PATCH', path: LINKS.item, tag: 'Link', summary: "Take a link out of path selection, or set its static cost", body: LinkPatch,
      handle: (ctx) => {
        found(deps.links.update(ctx.params.id, { ...ctx.body }))
        return okEmpty()
      },
    }),
    route({
      ...FABRIC, method: 'DELETE', path: LINKS.item, tag: 'Link', summary: 'Forget a link; both its routers are told to close it',
      handle: (ctx) => {
        if (!deps.links.remove(ctx.params.id)) throw ApiError.notFound()
        return okEmpty()
      },
    }),
    route({
      ...FABRIC, method: 'GET', path: CIRCUITS.list, tag: 'Circuit', summary: 'List the circuits this node built', query: ListQuery, response: CircuitDetail,
      handle: (ctx) => respondList(ctx.query, circuitList()),
    }),
    route({
      ...FABRIC, method: 'GET', path: CIRCUITS.item, tag: 'Circuit', summary: 'Get a circuit', response: CircuitDetail,
      handle: (ctx) => ok(circuitView()(found(deps.circuits.get(ctx.params.id)))),
    }),
    route({
      ...FABRIC, method: 'DELETE', path: CIRCUITS.item, tag: 'Circuit', summary: 'Tear a circuit down (at once with immediate)', body: CircuitDelete,
      handle: (ctx) => {
        if (!deps.circuits.remove(ctx.params.id, ctx.body.immediate === true)) throw ApiError.notFound()
        return okEmpty()
      },
    }),
  ]
}
