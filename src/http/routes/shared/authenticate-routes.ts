/** Both APIs: authenticate, and the current API session (read, logout). */
import type { IdentityActor } from '../../../actors/identity/identity-actor.ts'
import type { SessionRegistryActor } from '../../../actors/session-registry/session-registry-actor.ts'
import { ApiError } from '../../../errors/api-error.ts'
import type { Clock } from '../../../lib/clock.ts'
import { authenticateUpdb } from '../../../flows/authenticate/auth-updb.ts'
import { AuthenticateBody, AuthenticateQuery } from '../../../../schemas/authenticator.ts'
import { CurrentApiSessionDetail } from '../../../../schemas/api-session.ts'
import { ok, okEmpty } from '../../http-envelope.ts'
import { route, type RouteDef } from '../../http-route.ts'
import { peerOf } from '../../peer-cert.ts'
import { toCurrentApiSessionDetail, visibleToken } from '../../mappers/api-session-mapper.ts'
import { changeOf } from '../route-change.ts'

export interface AuthenticateRouteDeps {
  identities: IdentityActor
  sessions: SessionRegistryActor
  clock: Clock
  timeoutMs: number
}

export function authenticateRoutes(deps: AuthenticateRouteDeps): RouteDef[] {
  return [
    route({
      method: 'POST', path: '/authenticate', apis: ['client', 'management'], access: 'public', tag: 'Authentication',
      summary: 'Create an API session (method=password; cert and ext-jwt arrive with their issues)',
      query: AuthenticateQuery, body: AuthenticateBody, response: CurrentApiSessionDetail,
      handle: async (ctx) => {
        if (ctx.query.method !== 'password') {
          throw ApiError.withMessage('INVALID_AUTH_METHOD', `authentication method '${ctx.query.method}' is not enabled on this controller`)
        }
        const { session, token } = await authenticateUpdb(deps, { ...ctx.body, ipAddress: peerOf(ctx.request).remoteAddress })
        const identity = deps.identities.snapshot().identity(session.identityId)
        const detail = toCurrentApiSessionDetail(session, identity, deps.timeoutMs, token)
        return ok(detail, {
          'zt-session': token,
          'expiration-seconds': String(detail.expirationSeconds),
          'expires-at': detail.expiresAt,
        })
      },
    }),
    route({
      method: 'GET', path: '/current-api-session', apis: ['client', 'management'], access: 'partial', tag: 'Current API Session',
      summary: 'The caller\'s API session', response: CurrentApiSessionDetail,
      handle: (ctx) => ok(toCurrentApiSessionDetail(ctx.auth.session, ctx.auth.identity, deps.timeoutMs, visibleToken(ctx.auth.session, { session: ctx.auth.session, request: ctx.request }))),
    }),
    route({
      method: 'DELETE', path: '/current-api-session', apis: ['client', 'management'], access: 'partial', tag: 'Current API Session',
      summary: 'Log out: delete the caller\'s API session',
      handle: async (ctx) => {
        await deps.sessions.ask({ type: 'apiSession.delete', id: ctx.auth.session.id, change: changeOf(ctx) })
        return okEmpty()
      },
    }),
  ]
}
