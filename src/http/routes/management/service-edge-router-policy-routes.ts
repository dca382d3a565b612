/** Management API: service edge router policies (CRUD) and the edge routers and services each selects. */
import type { ServiceEdgeRouterPolicyFields } from '../../../actors/policy-graph/policy-graph-messages.ts'
import {
  ServiceEdgeRouterPolicyCreate,
  ServiceEdgeRouterPolicyDetail,
  ServiceEdgeRouterPolicyPatch,
  ServiceEdgeRouterPolicyUpdate,
} from '../../../../schemas/policy.ts'
import { EdgeRouterDetail } from '../../../../schemas/router.ts'
import { ServiceDetail } from '../../../../schemas/service.ts'
import type { RouteDef } from '../../http-route.ts'
import {
  crudRoutes,
  edgeRouterListing,
  graphWrites,
  presentFields,
  serviceEdgeRouterPolicyListing,
  serviceListing,
  subListRoute,
  type GraphRouteDeps,
  type WriteBodies,
} from './crud-routes.ts'

const ROUTES = {
  list: '/service-edge-router-policies',
  item: '/service-edge-router-policies/:id',
  edgeRouters: '/service-edge-router-policies/:id/edge-routers',
  services: '/service-edge-router-policies/:id/services',
} as const

const FIELDS = ['name', 'semantic', 'serviceRoles', 'edgeRouterRoles', 'tags'] as const

export const SERVICE_EDGE_ROUTER_POLICY_BODIES = {
  schemas: { create: ServiceEdgeRouterPolicyCreate, put: ServiceEdgeRouterPolicyUpdate, patch: ServiceEdgeRouterPolicyPatch },
  fields: (body) => presentFields<ServiceEdgeRouterPolicyFields>(body, FIELDS),
} satisfies WriteBodies

export function serviceEdgeRouterPolicyRoutes(deps: GraphRouteDeps): RouteDef[] {
  const sub = { tag: 'Service Edge Router Policy', parent: (id: string) => deps.graph.snapshot().serviceEdgeRouterPolicies.get(id) }
  return [
    ...crudRoutes({
      tag: 'Service Edge Router Policy', routes: ROUTES, entity: 'service-edge-router-policies', noun: 'service edge router policy',
      detail: ServiceEdgeRouterPolicyDetail,
      listing: () => serviceEdgeRouterPolicyListing(deps),
      bodies: SERVICE_EDGE_ROUTER_POLICY_BODIES.schemas,
      ...graphWrites(deps, 'serviceEdgeRouterPolicy', SERVICE_EDGE_ROUTER_POLICY_BODIES.fields),
    }),
    subListRoute({
      ...sub, path: ROUTES.edgeRouters, summary: 'List the edge routers a service edge router policy selects', response: EdgeRouterDetail,
      ids: (id) => deps.reads.membersOf(id, 'router'),
      listing: () => edgeRouterListing(deps),
    }),
    subListRoute({
      ...sub, path: ROUTES.services, summary: 'List the services a service edge router policy selects', response: ServiceDetail,
      ids: (id) => deps.reads.membersOf(id, 'service'),
      listing: (ctx) => serviceListing(deps, ctx),
    }),
  ]
}
