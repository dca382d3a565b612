/**
 * Management API: what policies give an identity — its services, edge routers and the policies selecting it (from the
 * policy index), its service config overrides, and the policy advice for one service.
 */
import { Type } from '@sinclair/typebox'
import { PolicyTypeListQuery } from '../../../../schemas/common.ts'
import { ServiceConfigDetail, ServiceConfigsAssignList } from '../../../../schemas/config.ts'
import { EdgeRouterPolicyDetail, ServicePolicyDetail } from '../../../../schemas/policy.ts'
import { PolicyAdvice } from '../../../../schemas/policy-advice.ts'
import { EdgeRouterDetail } from '../../../../schemas/router.ts'
import { ServiceDetail } from '../../../../schemas/service.ts'
import { list, ok, okEmpty } from '../../http-envelope.ts'
import { route, type RouteDef } from '../../http-route.ts'
import { toServiceConfigDetail } from '../../mappers/config-mapper.ts'
import { toEntityRef } from '../../mappers/common-mapper.ts'
import { changeOf } from '../route-change.ts'
import {
  edgeRouterListing,
  edgeRouterPolicyListing,
  found,
  serviceListing,
  servicePolicyListing,
  subListRoute,
  type GraphRouteDeps,
} from './crud-routes.ts'
import { havingPermission } from './service-routes.ts'

const ROUTES = {
  services: '/identities/:id/services',
  edgeRouters: '/identities/:id/edge-routers',
  servicePolicies: '/identities/:id/service-policies',
  edgeRouterPolicies: '/identities/:id/edge-router-policies',
  serviceConfigs: '/identities/:id/service-configs',
  policyAdvice: '/identities/:id/policy-advice/:serviceId',
} as const

/** DELETE takes the pairs to remove, or no body (an empty object) to remove them all. */
const ServiceConfigsRemoval = Type.Union([ServiceConfigsAssignList, Type.Object({}, { additionalProperties: false })])

export function identityPolicyRoutes(deps: GraphRouteDeps): RouteDef[] {
  const identity = (id: string) => deps.identities.snapshot().identity(id)
  const common = { apis: ['management'] as const, access: 'admin' as const, tag: 'Identity' }
  const sub = { tag: 'Identity', parent: identity }
  return [
    subListRoute({
      ...sub, path: ROUTES.services, summary: 'List the services an identity may dial or bind', response: ServiceDetail, query: PolicyTypeListQuery,
      ids: (id, ctx) => havingPermission(deps.reads.servicesOfIdentity(id), ctx.query.policyType, (s) => deps.reads.permissionsOf(id, s)),
      listing: (ctx) => serviceListing(deps, ctx),
    }),
    subListRoute({
      ...sub, path: ROUTES.edgeRouters, summary: 'List the edge routers an identity may use', response: EdgeRouterDetail,
      ids: (id) => deps.reads.routersOfIdentity(id),
      listing: () => edgeRouterListing(deps),
    }),
    subListRoute({
      ...sub, path: ROUTES.servicePolicies, summary: 'List the service policies selecting an identity', response: ServicePolicyDetail,
      ids: (id) => deps.reads.policiesOf('identity', id, 'service-policy'),
      listing: () => servicePolicyListing(deps),
    }),
    subListRoute({
      ...sub, path: ROUTES.edgeRouterPolicies, summary: 'List the edge router policies selecting an identity', response: EdgeRouterPolicyDetail,
      ids: (id) => deps.reads.policiesOf('identity', id, 'edge-router-policy'),
      listing: () => edgeRouterPolicyListing(deps),
    }),
    route({
      ...common, method: 'GET', path: ROUTES.serviceConfigs, summary: "List an identity's service config overrides", response: Type.Array(ServiceConfigDetail),
      handle: (ctx) => {
        const i = found(identity(ctx.params.id))
        const g = deps.graph.snapshot()
        const rows = g.overridesOf(i.id).map((o) => toServiceConfigDetail(o, g.services.get(o.serviceId)?.name ?? o.serviceId, g.configs.get(o.configId)?.name ?? o.configId))
        // every override in one page, with the pagination the real controller's listWithId sends (the CLI reads it)
        return list(rows, { limit: rows.length, offset: 0, totalCount: rows.length }, [])
      },
    }),
    route({
      ...common, method: 'POST', path: ROUTES.serviceConfigs, summary: 'Add service config overrides to an identity (one per service and config type)',
      body: ServiceConfigsAssignList,
      handle: async (ctx) => {
        const i = found(identity(ctx.params.id))
        await deps.graph.ask({ type: 'overrides.add', identityId: i.id, links: ctx.body, change: changeOf(ctx) })
        return okEmpty()
      },
    }),
    route({
      ...common, method: 'DELETE', path: ROUTES.serviceConfigs, summary: 'Remove service config overrides of an identity (all without a body)',
      body: ServiceConfigsRemoval,
      handle: async (ctx) => {
        const i = found(identity(ctx.params.id))
        const links = Array.isArray(ctx.body) && ctx.body.length > 0 ? ctx.body : undefined
        await deps.graph.ask({ type: 'overrides.remove', identityId: i.id, ...(links ? { links } : {}), change: changeOf(ctx) })
        return okEmpty()
      },
    }),
    route({
      ...common, method: 'GET', path: ROUTES.policyAdvice, summary: 'Analyse the policies between an identity and a service', response: PolicyAdvice,
      handle: (ctx) => {
        const i = found(identity(ctx.params.id))
        const g = deps.graph.snapshot()
        const s = found(g.services.get(ctx.params.serviceId))
        const permissions = deps.reads.permissionsOf(i.id, s.id)
        const commonRouters = deps.reads.routersFor(i.id, s.id).flatMap((rid) => {
          const r = g.edgeRouters.get(rid)
          return r ? [{ ...toEntityRef('edge-routers', r.id, r.name), isOnline: deps.presence.presenceOf(r.id).isOnline }] : []
        })
        return ok({
          identityId: i.id,
          identity: toEntityRef('identities', i.id, i.name),
          serviceId: s.id,
          service: toEntityRef('services', s.id, s.name),
          isBindAllowed: permissions.includes('Bind'),
          isDialAllowed: permissions.includes('Dial'),
          identityRouterCount: deps.reads.routersOfIdentity(i.id).length,
          serviceRouterCount: deps.reads.routersOfService(s.id).length,
          commonRouters,
        })
      },
    }),
  ]
}
