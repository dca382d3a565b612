/** Management API: service policies (CRUD) and the identities, services and posture checks each selects. */
import type { ServicePolicyFields } from '../../../actors/policy-graph/policy-graph-messages.ts'
import { PostureCheckDetail } from '../../../../schemas/posture.ts'
import { IdentityDetail } from '../../../../schemas/identity.ts'
import { ServicePolicyCreate, ServicePolicyDetail, ServicePolicyPatch, ServicePolicyUpdate } from '../../../../schemas/policy.ts'
import { ServiceDetail } from '../../../../schemas/service.ts'
import { postureCheckListing } from './posture-check-routes.ts'
import type { RouteDef } from '../../http-route.ts'
import {
  crudRoutes,
  graphWrites,
  identityListing,
  presentFields,
  serviceListing,
  servicePolicyListing,
  subListRoute,
  type GraphRouteDeps,
  type WriteBodies,
} from './crud-routes.ts'

const ROUTES = {
  list: '/service-policies',
  item: '/service-policies/:id',
  identities: '/service-policies/:id/identities',
  services: '/service-policies/:id/services',
  postureChecks: '/service-policies/:id/posture-checks',
} as const

const FIELDS = ['name', 'type', 'semantic', 'identityRoles', 'serviceRoles', 'postureCheckRoles', 'tags'] as const

export const SERVICE_POLICY_BODIES = {
  schemas: { create: ServicePolicyCreate, put: ServicePolicyUpdate, patch: ServicePolicyPatch },
  fields: (body) => presentFields<ServicePolicyFields>(body, FIELDS),
} satisfies WriteBodies

export function servicePolicyRoutes(deps: GraphRouteDeps): RouteDef[] {
  const sub = { tag: 'Service Policy', parent: (id: string) => deps.graph.snapshot().servicePolicies.get(id) }
  return [
    ...crudRoutes({
      tag: 'Service Policy', routes: ROUTES, entity: 'service-policies', noun: 'service policy', detail: ServicePolicyDetail,
      listing: () => servicePolicyListing(deps),
      bodies: SERVICE_POLICY_BODIES.schemas,
      ...graphWrites(deps, 'servicePolicy', SERVICE_POLICY_BODIES.fields),
    }),
    subListRoute({
      ...sub, path: ROUTES.identities, summary: 'List the identities a service policy selects', response: IdentityDetail,
      ids: (id) => deps.reads.membersOf(id, 'identity'),
      listing: () => identityListing(deps),
    }),
    subListRoute({
      ...sub, path: ROUTES.services, summary: 'List the services a service policy selects', response: ServiceDetail,
      ids: (id) => deps.reads.membersOf(id, 'service'),
      listing: (ctx) => serviceListing(deps, ctx),
    }),
    subListRoute({
      ...sub, path: ROUTES.postureChecks, summary: 'List the posture checks a service policy selects', response: PostureCheckDetail,
      ids: (id) => deps.reads.membersOf(id, 'posture-check'),
      listing: () => postureCheckListing(deps),
    }),
  ]
}
