/**
 * Controller (cluster node) records → wire details and filter rows. The only place that renames controller fields.
 * The Client API shows `apiAddresses` of `edge-client` and `edge-oidc` only and no `ctrlAddress`, as the real
 * controller's client view (routes/controller_router.go).
 */
import type { ControllerNode } from '../../domain/cluster/controller-types.ts'
import type { ApiName } from '../http-route.ts'
import { BASE_SYMBOLS, baseEntityRow, iso, toBaseEntity } from './common-mapper.ts'

/** The fields the filter language knows on controllers. */
export const CONTROLLER_SYMBOLS = {
  ...BASE_SYMBOLS,
  name: 'string',
  fingerprint: 'string',
  isOnline: 'boolean',
  isPreferredLeader: 'boolean',
  lastJoinedAt: 'datetime',
} as const

/** The API bindings a Client API caller sees of a node. */
const CLIENT_BINDINGS: ReadonlySet<string> = new Set(['edge-client', 'edge-oidc'])

/** The detail view (the spec's controllerDetail) on `api`; `isOnline` is what the cluster view says now. */
export function toControllerDetail(c: ControllerNode, isOnline: boolean, api: ApiName) {
  const apiAddresses = api === 'client' ? Object.fromEntries(Object.entries(c.apiAddresses).filter(([b]) => CLIENT_BINDINGS.has(b))) : c.apiAddresses
  return {
    ...toBaseEntity('controllers', c),
    name: c.name,
    certPem: c.certPem,
    fingerprint: c.fingerprint,
    isOnline,
    isPreferredLeader: false,
    lastJoinedAt: iso(c.lastJoinedAt),
    apiAddresses,
    ...(api === 'management' ? { ctrlAddress: c.ctrlAddress } : {}),
  }
}

/** The row the filter language sees for a controller (see CONTROLLER_SYMBOLS). */
export function toControllerRow(c: ControllerNode, isOnline: boolean): Record<string, unknown> {
  return { ...baseEntityRow(c), name: c.name, fingerprint: c.fingerprint, isOnline, isPreferredLeader: false, lastJoinedAt: c.lastJoinedAt }
}
