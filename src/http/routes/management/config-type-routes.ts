/** Management API: config types (CRUD) and the configs of a type. Admin only; the graph actor decides. */
import type { ConfigTypeFields } from '../../../actors/policy-graph/policy-graph-messages.ts'
import { ConfigDetail, ConfigTypeCreate, ConfigTypeDetail, ConfigTypePatch, ConfigTypeUpdate } from '../../../../schemas/config.ts'
import type { RouteDef } from '../../http-route.ts'
import { configListing, configTypeListing, crudRoutes, graphWrites, presentFields, subListRoute, type GraphRouteDeps } from './crud-routes.ts'

const ROUTES = { list: '/config-types', item: '/config-types/:id', configs: '/config-types/:id/configs' } as const

const FIELDS = ['name', 'schema', 'target', 'tags'] as const
const toFields = (b: object) => presentFields<ConfigTypeFields>(b, FIELDS)

export function configTypeRoutes(deps: GraphRouteDeps): RouteDef[] {
  return [
    ...crudRoutes({
      tag: 'Config', routes: ROUTES, entity: 'config-types', noun: 'config type', detail: ConfigTypeDetail,
      listing: () => configTypeListing(deps),
      bodies: { create: ConfigTypeCreate, put: ConfigTypeUpdate, patch: ConfigTypePatch },
      ...graphWrites(deps, 'configType', toFields),
    }),
    subListRoute({
      path: ROUTES.configs, tag: 'Config', summary: 'List the configs of a config type', response: ConfigDetail,
      parent: (id) => deps.graph.snapshot().configTypes.get(id),
      ids: (id) => deps.graph.snapshot().configsOfType(id).map((c) => c.id),
      listing: () => configListing(deps),
    }),
  ]
}
