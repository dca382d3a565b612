/** Management API: edge router policies (CRUD; system ones are read-only) and the edge routers and identities each selects. */
import type { EdgeRouterPolicyFields } from '../../../actors/policy-graph/policy-graph-messages.ts'
import { IdentityDetail } from '../../../../schemas/identity.ts'
import { EdgeRouterPolicyCreate, EdgeRouterPolicyDetail, EdgeRouterPolicyPatch, EdgeRouterPolicyUpdate } from '../../../../schemas/policy.ts'
import { EdgeRouterDetail } from '../../../../schemas/router.ts'
import type { RouteDef } from '../../http-route.ts'
import {
  crudRoutes,
  edgeRouterListing,
  edgeRouterPolicyListing,
  graphWrites,
  identityListing,
  presentFields,
  subListRoute,
  type GraphRouteDeps,
  type WriteBodies,
} from './crud-routes.ts'

const ROUTES = {
  list: '/edge-router-policies',
  item: '/edge-router-policies/:id',
  edgeRouters: '/edge-router-policies/:id/edge-routers',
  identities: '/edge-router-policies/:id/identities',
} as const

const FIELDS = ['name', 'semantic', 'identityRoles', 'edgeRouterRoles', 'tags'] as const

export const EDGE_ROUTER_POLICY_BODIES = {
  schemas: { create: EdgeRouterPolicyCreate, put: EdgeRouterPolicyUpdate, patch: EdgeRouterPolicyPatch },
  fields: (body) => presentFields<EdgeRouterPolicyFields>(body, FIELDS),
} satisfies WriteBodies

export function edgeRouterPolicyRoutes(deps: GraphRouteDeps): RouteDef[] {
  const sub = { tag: 'Edge Router Policy', parent: (id: string) => deps.graph.snapshot().edgeRouterPolicies.get(id) }
  return [
    ...crudRoutes({
      tag: 'Edge Router Policy', routes: ROUTES, entity: 'edge-router-policies', noun: 'edge router policy', detail: EdgeRouterPolicyDetail,
      listing: () => edgeRouterPolicyListing(deps),
      bodies: EDGE_ROUTER_POLICY_BODIES.schemas,
      ...graphWrites(deps, 'edgeRouterPolicy', EDGE_ROUTER_POLICY_BODIES.fields),
    }),
    subListRoute({
      ...sub, path: ROUTES.edgeRouters, summary: 'List the edge routers an edge router policy selects', response: EdgeRouterDetail,
      ids: (id) => deps.reads.membersOf(id, 'router'),
      listing: () => edgeRouterListing(deps),
    }),
    subListRoute({
      ...sub, path: ROUTES.identities, summary: 'List the identities an edge router policy selects', response: IdentityDetail,
      ids: (id) => deps.reads.membersOf(id, 'identity'),
      listing: () => identityListing(deps),
    }),
  ]
}
