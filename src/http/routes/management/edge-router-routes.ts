/**
 * Management API: edge routers (CRUD) and their sub-lists: the policies selecting them, the identities and services
 * that may use them (from the policy index). Writes go through the router-identity flow, which keeps the identity of a
 * tunneler-enabled edge router in line with it. `POST /edge-routers/{id}/re-enroll` sends a router back to enrollment.
 */
import type { RouterFields } from '../../../actors/policy-graph/policy-graph-messages.ts'
import { createRouter, deleteRouter, updateRouter } from '../../../flows/routers/router-identity.ts'
import { decideNoRouterBootstrap } from '../../../domain/policy/graph-decide.ts'
import type { ErottEnrollMethod } from '../../../flows/enroll/enroll-erott.ts'
import { okEmpty } from '../../http-envelope.ts'
import { route, type RouteDef } from '../../http-route.ts'
import { IdentityDetail } from '../../../../schemas/identity.ts'
import { EdgeRouterPolicyDetail, ServiceEdgeRouterPolicyDetail } from '../../../../schemas/policy.ts'
import { EdgeRouterCreate, EdgeRouterDetail, EdgeRouterPatch, EdgeRouterUpdate } from '../../../../schemas/router.ts'
import { ServiceDetail } from '../../../../schemas/service.ts'
import { changeOf } from '../route-change.ts'
import {
  crudRoutes,
  edgeRouterListing,
  edgeRouterPolicyListing,
  found,
  identityListing,
  presentFields,
  serviceEdgeRouterPolicyListing,
  serviceListing,
  subListRoute,
  type GraphRouteDeps,
  type WriteBodies,
} from './crud-routes.ts'

const ROUTES = {
  list: '/edge-routers',
  item: '/edge-routers/:id',
  edgeRouterPolicies: '/edge-routers/:id/edge-router-policies',
  serviceEdgeRouterPolicies: '/edge-routers/:id/service-edge-router-policies',
  identities: '/edge-routers/:id/identities',
  services: '/edge-routers/:id/services',
  reEnroll: '/edge-routers/:id/re-enroll',
} as const

const FIELDS = ['name', 'roleAttributes', 'cost', 'noTraversal', 'disabled', 'isTunnelerEnabled', 'appData', 'tags'] as const

/** Wire body → actor fields; a null name on a patch means "leave it". */
function toFields(body: object): RouterFields {
  const b = body as { configs?: string[] | null; ctrlChanListeners?: Record<string, unknown> | null }
  decideNoRouterBootstrap(b.configs, b.ctrlChanListeners)
  const f = presentFields<RouterFields>(body, FIELDS)
  if (f.name === null) delete f.name
  return f
}

export const EDGE_ROUTER_BODIES = {
  schemas: { create: EdgeRouterCreate, put: EdgeRouterUpdate, patch: EdgeRouterPatch },
  fields: toFields,
} satisfies WriteBodies

export interface RouterRouteDeps extends GraphRouteDeps {
  /** The erott module: makes new routers' enrollments and re-enrolls. */
  routerEnrollments: Pick<ErottEnrollMethod, 'newEnrollment' | 'reEnroll'>
}

export function edgeRouterRoutes(deps: RouterRouteDeps): RouteDef[] {
  const edgeRouter = (id: string) => deps.graph.snapshot().edgeRouters.get(id)
  const sub = { tag: 'Edge Router', parent: edgeRouter }
  return [
    ...crudRoutes({
      tag: 'Edge Router', routes: ROUTES, entity: 'edge-routers', noun: 'edge router', detail: EdgeRouterDetail, roleFilter: true,
      listing: () => edgeRouterListing(deps),
      bodies: EDGE_ROUTER_BODIES.schemas,
      create: (ctx) => createRouter(deps, toFields(ctx.body), true, changeOf(ctx)),
      update: (ctx, replace) => updateRouter(deps, found(edgeRouter(ctx.params.id)).id, toFields(ctx.body), replace, changeOf(ctx)),
      remove: (ctx) => deleteRouter(deps, found(edgeRouter(ctx.params.id)).id, changeOf(ctx)),
    }),
    route({
      method: 'POST', path: ROUTES.reEnroll, apis: ['management'], access: 'admin', tag: 'Edge Router',
      summary: 'Send an edge router back to enrollment: its certificate is no longer accepted, a new enrollment JWT replaces any outstanding one',
      handle: async (ctx) => {
        await deps.routerEnrollments.reEnroll(found(edgeRouter(ctx.params.id)).id, changeOf(ctx))
        return okEmpty()
      },
    }),
    subListRoute({
      ...sub, path: ROUTES.edgeRouterPolicies, summary: 'List the edge router policies selecting an edge router', response: EdgeRouterPolicyDetail,
      ids: (id) => deps.reads.policiesOf('router', id, 'edge-router-policy'),
      listing: () => edgeRouterPolicyListing(deps),
    }),
    subListRoute({
      ...sub, path: ROUTES.serviceEdgeRouterPolicies, summary: 'List the service edge router policies selecting an edge router', response: ServiceEdgeRouterPolicyDetail,
      ids: (id) => deps.reads.policiesOf('router', id, 'service-edge-router-policy'),
      listing: () => serviceEdgeRouterPolicyListing(deps),
    }),
    subListRoute({
      ...sub, path: ROUTES.identities, summary: 'List the identities that may use an edge router', response: IdentityDetail,
      ids: (id) => deps.reads.identitiesOfRouter(id),
      listing: () => identityListing(deps),
    }),
    subListRoute({
      ...sub, path: ROUTES.services, summary: 'List the services reachable over an edge router', response: ServiceDetail,
      ids: (id) => deps.reads.servicesOfRouter(id),
      listing: (ctx) => serviceListing(deps, ctx),
    }),
  ]
}
