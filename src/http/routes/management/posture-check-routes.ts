/**
 * Management API: posture check types (built in, read only) and posture checks (CRUD; the list honours roleFilter and
 * roleSemantic). The graph actor decides each kind's fields (domain/posture/posture-decide.ts).
 */
import type { PostureCheckFields } from '../../../actors/policy-graph/policy-graph-messages.ts'
import { POSTURE_CHECK_TYPES, type PostureCheck, type PostureCheckType } from '../../../domain/posture/posture-types.ts'
import { ListQuery } from '../../../../schemas/common.ts'
import { PostureCheckCreate, PostureCheckDetail, PostureCheckPatch, PostureCheckTypeDetail, PostureCheckUpdate } from '../../../../schemas/posture.ts'
import { ok } from '../../http-envelope.ts'
import { respondList } from '../../http-list.ts'
import { route, type RouteDef } from '../../http-route.ts'
import {
  POSTURE_CHECK_SYMBOLS,
  POSTURE_CHECK_TYPE_SYMBOLS,
  toPostureCheckDetail,
  toPostureCheckRow,
  toPostureCheckTypeDetail,
  toPostureCheckTypeRow,
} from '../../mappers/posture-mapper.ts'
import { crudRoutes, found, graphWrites, presentFields, tableListing, type GraphRouteDeps, type Listing } from './crud-routes.ts'

const ROUTES = {
  list: '/posture-checks',
  item: '/posture-checks/:id',
  types: '/posture-check-types',
  type: '/posture-check-types/:id',
} as const

const FIELDS = [
  'name', 'typeId', 'roleAttributes', 'tags', 'operatingSystems', 'process', 'processes', 'semantic', 'domains', 'macAddresses',
  'timeoutSeconds', 'promptOnWake', 'promptOnUnlock', 'ignoreLegacyEndpoints',
] as const

/** Posture checks as the Management API lists them (also the service policies' posture-check sub-list). */
export function postureCheckListing(deps: Pick<GraphRouteDeps, 'graph'>): Listing<PostureCheck> {
  return tableListing(deps.graph.snapshot().postureChecks, {
    symbols: POSTURE_CHECK_SYMBOLS,
    indexed: ['id', 'name', 'roleAttributes'],
    toRow: toPostureCheckRow,
    toView: toPostureCheckDetail,
    roleOf: (c) => c,
  })
}

export function postureCheckRoutes(deps: GraphRouteDeps & { startedAt: number }): RouteDef[] {
  const common = { apis: ['management'] as const, access: 'admin' as const, tag: 'Posture Checks' }
  const typeById = (id: string): PostureCheckType | undefined => POSTURE_CHECK_TYPES.find((t) => t.id === id)
  return [
    route({
      ...common, method: 'GET', path: ROUTES.types, summary: 'List posture check types', query: ListQuery, response: PostureCheckTypeDetail,
      handle: (ctx) =>
        respondList(ctx.query, {
          symbols: POSTURE_CHECK_TYPE_SYMBOLS,
          candidates: () => POSTURE_CHECK_TYPES,
          toRow: (t) => toPostureCheckTypeRow(t, deps.startedAt),
          toView: (t) => toPostureCheckTypeDetail(t, deps.startedAt),
        }),
    }),
    route({
      ...common, method: 'GET', path: ROUTES.type, summary: 'Get a posture check type', response: PostureCheckTypeDetail,
      handle: (ctx) => ok(toPostureCheckTypeDetail(found(typeById(ctx.params.id)), deps.startedAt)),
    }),
    ...crudRoutes({
      tag: 'Posture Checks', routes: ROUTES, entity: 'posture-checks', noun: 'posture check', detail: PostureCheckDetail, roleFilter: true,
      listing: () => postureCheckListing(deps),
      bodies: { create: PostureCheckCreate, put: PostureCheckUpdate, patch: PostureCheckPatch },
      ...graphWrites(deps, 'postureCheck', (body) => presentFields<PostureCheckFields>(body, FIELDS)),
    }),
  ]
}
