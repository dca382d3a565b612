/**
 * Management API: the role attributes in use by edge routers, identities, services and posture checks (from the
 * policy index). The filter sees the attribute as the symbol `id`. Without `limit` every match comes back, as in the
 * real controller; unlike it (which ignores them silently), a given `limit` and `offset` are honoured.
 * @see controller-behaviour.md §2 "Role-attribute lists"; edge-api management.yml listRoleAttributesEnvelope
 */
import { Type } from '@sinclair/typebox'
import type { EntityKind } from '../../../domain/policy/policy-types.ts'
import type { PolicyReads } from '../../../domain/policy/policy-reads.ts'
import { ListQuery } from '../../../../schemas/common.ts'
import { respondList } from '../../http-list.ts'
import { route, type RouteDef } from '../../http-route.ts'

const ROUTES: Record<string, EntityKind> = {
  '/edge-router-role-attributes': 'router',
  '/identity-role-attributes': 'identity',
  '/service-role-attributes': 'service',
  '/posture-check-role-attributes': 'posture-check',
}

export function roleAttributeRoutes(deps: { reads: PolicyReads }): RouteDef[] {
  return Object.entries(ROUTES).map(([path, kind]) =>
    route({
      method: 'GET', path, apis: ['management'], access: 'admin', tag: 'Role Attributes', summary: `List the role attributes in use (${kind})`,
      query: ListQuery, response: Type.String(),
      handle: (ctx) =>
        respondList({ filter: ctx.query.filter, sort: ctx.query.sort, limit: ctx.query.limit ?? '-1', offset: ctx.query.offset }, {
          symbols: { id: 'string' },
          presortedById: true,
          candidates: () => deps.reads.attributesInUse(kind),
          toRow: (id) => ({ id }),
          toView: (id) => id,
        }),
    }),
  )
}
