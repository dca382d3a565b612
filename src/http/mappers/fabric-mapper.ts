/**
 * Services, routers and terminators as the fabric API renders them (`/fabric/v1`), and the entity references every
 * fabric view shares. The links are the real controller's fabric link factories: a service and a router link to
 * themselves and to their terminators, a terminator to itself only. Filter rows are the Management API's (the same
 * records, the same symbols: service-mapper.ts, router-mapper.ts, terminator-mapper.ts).
 * @see ziti controller/internal/routes/fabric_service_api_model.go, fabric_router_api_model.go,
 *   fabric_terminator_api_model.go, fabric_entity_api_model.go; specs/swagger.yml serviceDetail, routerDetail, terminatorDetail
 */
import type { Router, Service, Terminator } from '../../domain/policy/policy-types.ts'
import type { RouterPresence } from '../../domain/router/router-presence.ts'
import { toBaseEntity } from './common-mapper.ts'

/** The name a view shows for an entity that no longer exists (the real controller's circuit view does the same). */
export const DELETED_NAME = '<deleted>'

type Links = Record<string, { href: string }>

/** `./<entity>/<id>` and, for each nested list, `./<entity>/<id>/<list>`. */
function linksOf(entity: string, id: string, nested: readonly string[]): Links {
  const self = `./${entity}/${id}`
  const out: Links = { self: { href: self } }
  for (const n of nested) out[n] = { href: `${self}/${n}` }
  return out
}

/** The nested lists each fabric entity links to (fabric_*_api_model.go link factories). */
const NESTED: Record<string, readonly string[]> = {
  services: ['terminators'],
  routers: ['terminators'],
  terminators: [],
  links: [],
  circuits: ['terminators', 'services'],
}

/** A fabric entity reference: `{_links, entity, id, name}` with the entity kind's links. */
export function toFabricRef(entity: keyof typeof NESTED, id: string, name: string) {
  return { _links: linksOf(entity, id, NESTED[entity]), entity, id, name }
}

/** baseEntity with the fabric links of the entity kind. */
export function toFabricBase(entity: keyof typeof NESTED, r: { id: string; createdAt: number; updatedAt: number; tags: Record<string, unknown> | null }) {
  return { ...toBaseEntity(entity, r), _links: linksOf(entity, r.id, NESTED[entity]) }
}

export function toFabricServiceDetail(s: Service) {
  return { ...toFabricBase('services', s), name: s.name, terminatorStrategy: s.terminatorStrategy, maxIdleTimeMillis: s.maxIdleTimeMillis }
}

/**
 * `connected` is the router's presence on this node; `listenerAddresses` (its link listeners) and `versionInfo` only
 * while it is connected, as the real controller renders a router it holds no connection of. `fingerprint` is "" until
 * the router has a certificate (the spec requires the field).
 */
export function toFabricRouterDetail(r: Router, p: RouterPresence) {
  return {
    ...toFabricBase('routers', r),
    name: r.name,
    fingerprint: r.fingerprint ?? '',
    connected: p.isOnline,
    cost: r.cost,
    noTraversal: r.noTraversal,
    disabled: r.disabled,
    ...(p.isOnline
      ? { listenerAddresses: p.linkListeners.map((l) => ({ address: l.address, protocol: l.protocol })), versionInfo: { ...p.versionInfo } }
      : {}),
    ctrlChanListeners: p.ctrlChanListeners,
  }
}

/** `dynamicCost` is the static cost (no health-driven costs are kept); `hostId` empty for one an admin or a router made. */
export function toFabricTerminatorDetail(t: Terminator, names: { service: string; router: string }) {
  return {
    ...toFabricBase('terminators', t),
    serviceId: t.serviceId,
    service: toFabricRef('services', t.serviceId, names.service),
    routerId: t.routerId,
    router: toFabricRef('routers', t.routerId, names.router),
    binding: t.binding,
    address: t.address,
    instanceId: t.identity,
    cost: t.cost,
    precedence: t.precedence,
    dynamicCost: t.cost,
    hostId: t.hostId,
  }
}
