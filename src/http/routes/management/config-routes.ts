/** Management API: configs (CRUD; data checked against the type's schema by the graph actor) and their services. */
import type { ConfigFields } from '../../../actors/policy-graph/policy-graph-messages.ts'
import { ConfigCreate, ConfigDetail, ConfigPatch, ConfigUpdate } from '../../../../schemas/config.ts'
import { ServiceDetail } from '../../../../schemas/service.ts'
import type { RouteDef } from '../../http-route.ts'
import { configListing, crudRoutes, graphWrites, presentFields, serviceListing, subListRoute, type GraphRouteDeps } from './crud-routes.ts'

const ROUTES = { list: '/configs', item: '/configs/:id', services: '/configs/:id/services' } as const

const FIELDS = ['name', 'configTypeId', 'data', 'tags'] as const
const toFields = (b: object) => presentFields<ConfigFields>(b, FIELDS)

export function configRoutes(deps: GraphRouteDeps): RouteDef[] {
  return [
    ...crudRoutes({
      tag: 'Config', routes: ROUTES, entity: 'configs', noun: 'config', detail: ConfigDetail,
      listing: () => configListing(deps),
      bodies: { create: ConfigCreate, put: ConfigUpdate, patch: ConfigPatch },
      ...graphWrites(deps, 'config', toFields),
    }),
    subListRoute({
      path: ROUTES.services, tag: 'Config', summary: 'List the services using a config', response: ServiceDetail,
      parent: (id) => deps.graph.snapshot().configs.get(id),
      ids: (id) => [...deps.graph.snapshot().serviceIdsUsingConfig(id)].sort(),
      listing: (ctx) => serviceListing(deps, ctx),
    }),
  ]
}
