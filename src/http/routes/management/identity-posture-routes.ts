/**
 * Management API: an identity's volatile posture data (over its API sessions) and its most recent service requests
 * refused for posture. Both are memory only (actors/posture-data): a restart forgets them.
 * @see edge-api management.yml /identities/{id}/posture-data, /identities/{id}/failed-service-requests
 */
import type { IdentityActor } from '../../../actors/identity/identity-actor.ts'
import type { SessionRegistryActor } from '../../../actors/session-registry/session-registry-actor.ts'
import type { PostureDataReads } from '../../../domain/posture/posture-reads.ts'
import { ApiError } from '../../../errors/api-error.ts'
import { json, ok } from '../../http-envelope.ts'
import { route, type RouteDef } from '../../http-route.ts'
import { toFailedServiceRequest, toPostureData } from '../../mappers/posture-mapper.ts'

const ROUTES = { postureData: '/identities/:id/posture-data', failed: '/identities/:id/failed-service-requests' } as const

export function identityPostureRoutes(deps: { identities: IdentityActor; sessions: SessionRegistryActor; posture: PostureDataReads }): RouteDef[] {
  const common = { method: 'GET' as const, apis: ['management'] as const, access: 'admin' as const, tag: 'Identity' }
  const existing = (id: string) => {
    if (!deps.identities.snapshot().identity(id)) throw ApiError.notFound()
    return id
  }
  return [
    route({
      ...common, path: ROUTES.postureData, summary: 'The posture data an identity\'s clients reported (volatile)',
      handle: (ctx) => {
        const sessions = deps.sessions.snapshot().sessionsOf(existing(ctx.params.id))
        return ok(toPostureData(sessions.map((s) => ({ id: s.id, isMfaComplete: s.isMfaComplete, mfaCompletedAt: s.mfaCompletedAt ?? null, data: deps.posture.dataOf(s.id) }))))
      },
    }),
    route({
      ...common, path: ROUTES.failed, summary: 'An identity\'s most recent service requests refused for posture (volatile)',
      handle: (ctx) => {
        const list = deps.posture.failedRequestsOf(existing(ctx.params.id))
        return json(200, { data: list.map(toFailedServiceRequest), meta: {} })
      },
    }),
  ]
}
