/**
 * The fabric API (`/fabric/v1`, on the same listener as the edge APIs): every official operation, served or refused
 * (fabric-common.ts refusedRoute), and the spec document the real controller serves at /fabric/v1/swagger.json,
 * generated from these records (public there, as go-swagger serves it before any security).
 */
import type { DatabaseSnapshots } from '../../../flows/integrity/database-snapshot.ts'
import { jsonBytes } from '../../http-envelope.ts'
import { buildSwagger } from '../../http-openapi.ts'
import { API_PREFIX, type RouteDef } from '../../http-route.ts'
import type { CircuitControl, LinkControl } from '../../../domain/fabric/fabric-types.ts'
import type { GraphRouteDeps } from '../management/crud-routes.ts'
import { graphNames } from './fabric-common.ts'
import { fabricLinkRoutes } from './fabric-link-routes.ts'
import { fabricOpsRoutes } from './fabric-ops-routes.ts'
import { fabricRouterRoutes } from './fabric-router-routes.ts'
import { fabricServiceRoutes } from './fabric-service-routes.ts'
import { fabricTerminatorRoutes } from './fabric-terminator-routes.ts'

/** Where the fabric API's spec document is served (go-swagger's `{basePath}/swagger.json`). */
export const FABRIC_SPEC_PATH = `${API_PREFIX.fabric}/swagger.json`

/** What the fabric routes take: the graph routes' dependencies, this node's links and circuits, the snapshots. */
export interface FabricRouteDeps extends GraphRouteDeps {
  links: LinkControl
  circuits: CircuitControl
  snapshots: DatabaseSnapshots
  /** A node of a cluster (the cluster operations' refusal says so). */
  clustered: boolean
}

export function fabricRoutes(deps: FabricRouteDeps): RouteDef[] {
  return [
    ...fabricServiceRoutes(deps),
    ...fabricRouterRoutes(deps),
    ...fabricTerminatorRoutes(deps),
    ...fabricLinkRoutes({ links: deps.links, circuits: deps.circuits, names: () => graphNames(deps) }),
    ...fabricOpsRoutes(deps),
  ]
}

/** The root route answering the fabric spec document: the swagger of the fabric routes of `routes`, rendered once. */
export function fabricSpecAnswer(routes: () => readonly RouteDef[], version: string): () => Response {
  let bytes: Uint8Array | undefined
  return () => jsonBytes(200, (bytes ??= Buffer.from(JSON.stringify(buildSwagger('fabric', routes(), version)))))
}
