/** Management API: resource counts. Keys follow the real controller's store names; stores edgeplane lacks count 0. */
import type { IdentityActor } from '../../../actors/identity/identity-actor.ts'
import type { SessionRegistryActor } from '../../../actors/session-registry/session-registry-actor.ts'
import { IDENTITY_TYPES } from '../../../domain/identity/identity-types.ts'
import { Type } from '@sinclair/typebox'
import { ok } from '../../http-envelope.ts'
import { route, type RouteDef } from '../../http-route.ts'

export function summaryRoutes(deps: { identities: IdentityActor; sessions: SessionRegistryActor }): RouteDef[] {
  return [
    route({
      method: 'GET', path: '/summary', apis: ['management'], access: 'admin', tag: 'Informational', summary: 'Counts of every resource',
      response: Type.Record(Type.String(), Type.Integer()),
      handle: () => {
        const ids = deps.identities.snapshot()
        return ok({
          apiSessionCertificates: 0,
          apiSessions: deps.sessions.snapshot().byId.size,
          authPolicies: 1,
          authenticators: ids.authenticators.size,
          cas: 0,
          configTypes: 0,
          configs: 0,
          edgeRouterPolicies: 0,
          enrollments: 0,
          externalJwtSigners: 0,
          identities: ids.identities.size,
          identityTypes: IDENTITY_TYPES.length,
          mfas: 0,
          postureCheckTypes: 0,
          postureChecks: 0,
          revocations: 0,
          routers: 0,
          'routers.edge': 0,
          serviceEdgeRouterPolicies: 0,
          servicePolicies: 0,
          services: 0,
          sessions: 0,
          terminators: 0,
        })
      },
    }),
  ]
}
