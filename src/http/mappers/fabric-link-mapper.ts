/**
 * Links and circuits (held in memory by the control plane, read through domain/fabric/fabric-types.ts) as the fabric
 * API renders them, and their filter rows. A link is no stored entity: no times, tags or links of its own in its
 * view; a circuit is (baseEntity). The routers, service and links a view names are looked up by the caller (`names`):
 * an entity gone since shows DELETED_NAME.
 * @see ziti controller/internal/routes/link_api_model.go, circuit_api_model.go; controller/model/link_manager.go and
 *   circuit_manager.go (the filter symbols); specs/swagger.yml linkDetail, circuitDetail, path
 */
import type { CircuitView, LinkView } from '../../domain/fabric/fabric-types.ts'
import { toFabricBase, toFabricRef } from './fabric-mapper.ts'

/** The fields the filter language knows on links: the real controller's link store symbols. */
export const LINK_SYMBOLS = {
  id: 'string', protocol: 'string', dialAddress: 'string', sourceRouter: 'string', destRouter: 'string',
  cost: 'number', staticCost: 'number', destLatency: 'number', sourceLatency: 'number', state: 'string', iteration: 'number',
} as const

/** The fields the filter language knows on circuits: the real controller's circuit store symbols. */
export const CIRCUIT_SYMBOLS = { id: 'string', clientId: 'string', service: 'string', terminator: 'string', createdAt: 'datetime', updatedAt: 'datetime' } as const

/** The name of a router by id (DELETED_NAME when it is gone). */
export type RouterNameOf = (routerId: string) => string

export function toLinkDetail(l: LinkView, routerName: RouterNameOf) {
  return {
    id: l.id,
    protocol: l.protocol,
    sourceRouter: toFabricRef('routers', l.srcRouterId, routerName(l.srcRouterId)),
    destRouter: toFabricRef('routers', l.dstRouterId, routerName(l.dstRouterId)),
    state: l.mode,
    down: l.down,
    staticCost: l.staticCost,
    sourceLatency: l.srcLatencyNs,
    destLatency: l.dstLatencyNs,
    cost: l.cost,
    iteration: l.iteration,
    connections: l.connections.map((c) => ({ type: c.type, source: c.localAddr, dest: c.remoteAddr })),
  }
}

export function toLinkRow(l: LinkView): Record<string, unknown> {
  return {
    id: l.id,
    protocol: l.protocol,
    dialAddress: l.dialAddress,
    sourceRouter: l.srcRouterId,
    destRouter: l.dstRouterId,
    cost: l.cost,
    staticCost: l.staticCost,
    destLatency: l.dstLatencyNs,
    sourceLatency: l.srcLatencyNs,
    state: l.mode,
    iteration: l.iteration,
  }
}

/** The path's routers in order, and the links between them (each named by its id, as the real controller names them). */
export function toCircuitDetail(c: CircuitView, names: { service: string; router: RouterNameOf }) {
  return {
    ...toFabricBase('circuits', c),
    clientId: c.clientId,
    service: toFabricRef('services', c.serviceId, names.service),
    terminator: toFabricRef('terminators', c.terminatorId, c.terminatorId),
    path: {
      nodes: c.path.nodes.map((id) => toFabricRef('routers', id, names.router(id))),
      links: c.path.links.map((id) => toFabricRef('links', id, id)),
    },
  }
}

export function toCircuitRow(c: CircuitView): Record<string, unknown> {
  return { id: c.id, clientId: c.clientId, service: c.serviceId, terminator: c.terminatorId, createdAt: c.createdAt, updatedAt: c.updatedAt }
}
