/**
 * Management API: resource counts. Keys follow the real controller's store names (controller-behaviour.md §10).
 * `sessions` are service sessions, `enrollments` the outstanding enrollments the /enrollments resource lists,
 * `revocations` the stored ones `GET /revocations` lists (expired ones until pruned).
 */
import { POSTURE_CHECK_TYPES } from '../../../domain/posture/posture-types.ts'
import type { IdentityActor } from '../../../actors/identity/identity-actor.ts'
import type { SessionRegistryActor } from '../../../actors/session-registry/session-registry-actor.ts'
import type { PolicyGraphActor } from '../../../actors/policy-graph/policy-graph-actor.ts'
import type { CaActor } from '../../../actors/ca/ca-actor.ts'
import { IDENTITY_TYPES } from '../../../domain/identity/identity-types.ts'
import { Type } from '@sinclair/typebox'
import { ok } from '../../http-envelope.ts'
import { route, type RouteDef } from '../../http-route.ts'

export function summaryRoutes(deps: { identities: IdentityActor; sessions: SessionRegistryActor; graph: PolicyGraphActor; ca: CaActor }): RouteDef[] {
  return [
    route({
      method: 'GET', path: '/summary', apis: ['management'], access: 'admin', tag: 'Informational', summary: 'Counts of every resource',
      response: Type.Record(Type.String(), Type.Integer()),
      handle: () => {
        const ids = deps.identities.snapshot()
        const g = deps.graph.snapshot()
        const sessions = deps.sessions.snapshot()
        const ca = deps.ca.snapshot()
        return ok({
          apiSessionCertificates: sessions.sessionCertificates.size,
          apiSessions: sessions.byId.size,
          authPolicies: ids.authPolicies.size,
          authenticators: ids.authenticators.size,
          cas: ca.cas.size,
          configTypes: g.configTypes.size,
          configs: g.configs.size,
          edgeRouterPolicies: g.edgeRouterPolicies.size,
          enrollments: ids.enrollments.size,
          externalJwtSigners: ca.jwtSigners.size,
          identities: ids.identities.size,
          identityTypes: IDENTITY_TYPES.length,
          mfas: ids.mfaCount(),
          postureCheckTypes: POSTURE_CHECK_TYPES.length,
          postureChecks: g.postureChecks.size,
          revocations: ids.revocationCount(),
          routers: g.routers.size,
          'routers.edge': g.edgeRouters.size,
          serviceEdgeRouterPolicies: g.serviceEdgeRouterPolicies.size,
          servicePolicies: g.servicePolicies.size,
          services: g.services.size,
          sessions: sessions.serviceSessions.size,
          terminators: g.terminators.size,
        })
      },
    }),
  ]
}
