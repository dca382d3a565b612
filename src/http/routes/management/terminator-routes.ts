/** Management API: terminators (CRUD); `service` and `router` name existing ones, checked by the graph actor. */
import type { TerminatorFields } from '../../../actors/policy-graph/policy-graph-messages.ts'
import { TerminatorCreate, TerminatorDetail, TerminatorPatch, TerminatorUpdate } from '../../../../schemas/terminator.ts'
import type { RouteDef } from '../../http-route.ts'
import { crudRoutes, graphWrites, presentFields, terminatorListing, type GraphRouteDeps } from './crud-routes.ts'

const ROUTES = { list: '/terminators', item: '/terminators/:id' } as const

const FIELDS = ['service', 'router', 'binding', 'address', 'identity', 'identitySecret', 'cost', 'precedence', 'tags'] as const
const toFields = (body: object) => presentFields<TerminatorFields>(body, FIELDS, { service: 'serviceId', router: 'routerId' })

export function terminatorRoutes(deps: GraphRouteDeps): RouteDef[] {
  return crudRoutes({
    tag: 'Terminator', routes: ROUTES, entity: 'terminators', noun: 'terminator', detail: TerminatorDetail,
    listing: () => terminatorListing(deps),
    bodies: { create: TerminatorCreate, put: TerminatorUpdate, patch: TerminatorPatch },
    ...graphWrites(deps, 'terminator', toFields),
  })
}
