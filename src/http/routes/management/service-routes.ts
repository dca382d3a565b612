/**
 * Management API: services (CRUD; the view carries the caller's permissions) and their sub-lists: configs, identities
 * and edge routers that may use it (from the policy index), the policies selecting it, its terminators. Updating and
 * deleting a service is on the Client API too, for admins, as the official client spec has it.
 */
import type { ServiceFields } from '../../../actors/policy-graph/policy-graph-messages.ts'
import { ManagementServiceListQuery, PolicyTypeListQuery } from '../../../../schemas/common.ts'
import { ConfigDetail } from '../../../../schemas/config.ts'
import { IdentityDetail } from '../../../../schemas/identity.ts'
import { ServiceEdgeRouterPolicyDetail, ServicePolicyDetail } from '../../../../schemas/policy.ts'
import { EdgeRouterDetail } from '../../../../schemas/router.ts'
import { ServiceCreate, ServiceDetail, ServicePatch, ServiceUpdate } from '../../../../schemas/service.ts'
import { TerminatorDetail } from '../../../../schemas/terminator.ts'
import type { RouteDef } from '../../http-route.ts'
import { changeOf } from '../route-change.ts'
import {
  configListing,
  crudRoutes,
  graphWrites,
  edgeRouterListing,
  identityListing,
  presentFields,
  serviceEdgeRouterPolicyListing,
  serviceListing,
  servicePolicyListing,
  subListRoute,
  terminatorListing,
  type GraphRouteDeps,
  type WriteBodies,
} from './crud-routes.ts'

const ROUTES = {
  list: '/services',
  item: '/services/:id',
  configs: '/services/:id/configs',
  identities: '/services/:id/identities',
  edgeRouters: '/services/:id/edge-routers',
  servicePolicies: '/services/:id/service-policies',
  serviceEdgeRouterPolicies: '/services/:id/service-edge-router-policies',
  terminators: '/services/:id/terminators',
} as const

const CREATE_FIELDS = ['name', 'roleAttributes', 'configs', 'encryptionRequired', 'terminatorStrategy', 'maxIdleTimeMillis', 'tags'] as const
/** encryptionRequired is read-only after create: ignored on put and patch. */
const UPDATE_FIELDS = CREATE_FIELDS.filter((f) => f !== 'encryptionRequired')

export const SERVICE_BODIES = {
  schemas: { create: ServiceCreate, put: ServiceUpdate, patch: ServicePatch },
  fields: (body, operation) => presentFields<ServiceFields>(body, operation === 'create' ? CREATE_FIELDS : UPDATE_FIELDS),
} satisfies WriteBodies

/** The `policyType` query (Dial or Bind, any case) of the identity↔service lists: keep the ids holding it. */
export function havingPermission(ids: readonly string[], policyType: unknown, permissionsOf: (id: string) => readonly string[]): readonly string[] {
  if (typeof policyType !== 'string' || policyType === '') return ids
  const wanted = policyType.toLowerCase()
  return ids.filter((id) => permissionsOf(id).some((p) => p.toLowerCase() === wanted))
}

export function serviceRoutes(deps: GraphRouteDeps): RouteDef[] {
  const service = (id: string) => deps.graph.snapshot().services.get(id)
  const sub = { tag: 'Service', parent: service }
  return [
    ...crudRoutes({
      tag: 'Service', routes: ROUTES, entity: 'services', noun: 'service', detail: ServiceDetail, roleFilter: true, clientWrites: true, listQuery: ManagementServiceListQuery,
      listing: (ctx) => serviceListing(deps, ctx),
      bodies: SERVICE_BODIES.schemas,
      ...graphWrites(deps, 'service', (body) => SERVICE_BODIES.fields(body, 'update')),
      create: (ctx) => deps.graph.ask({ type: 'service.create', input: SERVICE_BODIES.fields(ctx.body, 'create') as ServiceFields, change: changeOf(ctx) }),
    }),
    subListRoute({
      ...sub, path: ROUTES.configs, summary: 'List the configs of a service', response: ConfigDetail,
      ids: (id) => [...service(id)!.configs].sort(),
      listing: () => configListing(deps),
    }),
    subListRoute({
      ...sub, path: ROUTES.identities, summary: 'List the identities that may dial or bind a service', response: IdentityDetail, query: PolicyTypeListQuery,
      ids: (id, ctx) => havingPermission(deps.reads.identitiesOfService(id), ctx.query.policyType, (i) => deps.reads.permissionsOf(i, id)),
      listing: () => identityListing(deps),
    }),
    subListRoute({
      ...sub, path: ROUTES.edgeRouters, summary: 'List the edge routers a service may be reached over', response: EdgeRouterDetail,
      ids: (id) => deps.reads.routersOfService(id),
      listing: () => edgeRouterListing(deps),
    }),
    subListRoute({
      ...sub, path: ROUTES.servicePolicies, summary: 'List the service policies selecting a service', response: ServicePolicyDetail,
      ids: (id) => deps.reads.policiesOf('service', id, 'service-policy'),
      listing: () => servicePolicyListing(deps),
    }),
    subListRoute({
      ...sub, path: ROUTES.serviceEdgeRouterPolicies, summary: 'List the service edge router policies selecting a service', response: ServiceEdgeRouterPolicyDetail,
      ids: (id) => deps.reads.policiesOf('service', id, 'service-edge-router-policy'),
      listing: () => serviceEdgeRouterPolicyListing(deps),
    }),
    subListRoute({
      ...sub, path: ROUTES.terminators, summary: 'List the terminators of a service', response: TerminatorDetail,
      ids: (id) => deps.graph.snapshot().terminatorsOfService(id).map((t) => t.id),
      listing: () => terminatorListing(deps),
    }),
  ]
}
