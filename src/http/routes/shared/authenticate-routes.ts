/**
 * Both APIs: authenticate, and the current API session (read, logout). Authenticate only parses, dispatches to the
 * registered method and renders; the API-session flow decides everything else.
 */
import type { IdentityActor } from '../../../actors/identity/identity-actor.ts'
import type { SessionRegistryActor } from '../../../actors/session-registry/session-registry-actor.ts'
import type { Clock } from '../../../lib/clock.ts'
import type { AuthMethodRegistry } from '../../../flows/authenticate/auth-method.ts'
import { openApiSession, pendingAuthQueries } from '../../../flows/authenticate/auth-api-session.ts'
import type { ExtJwtSecondary } from '../../../flows/authenticate/auth-ext-jwt.ts'
import { loginAttemptOf, type AuthGate } from '../../../flows/authenticate/auth-gate.ts'
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
  authMethods: AuthMethodRegistry
  extJwtSecondary?: ExtJwtSecondary
  /** The failed-login throttle and the concurrency window every API-session creation passes. */
  gate: AuthGate
}

export function authenticateRoutes(deps: AuthenticateRouteDeps): RouteDef[] {
  return [
    route({
      method: 'POST', path: '/authenticate', apis: ['client', 'management'], access: 'public', tag: 'Authentication',
      summary: 'Create an API session (method=password, cert with the TLS client certificate, or ext-jwt with Authorization: Bearer)',
      query: AuthenticateQuery, body: AuthenticateBody, response: CurrentApiSessionDetail,
      handle: async (ctx) => {
        const method = deps.authMethods.resolve(ctx.query.method)
        const input = { ...ctx.body, header: (name: string) => ctx.request.headers.get(name) }
        const peer = peerOf(ctx.request)
        const { session, token, authQueries } = await deps.gate.run(method.method, loginAttemptOf(method.kind, input, peer), async () => {
          const primary = await method.authenticate(input, peer)
          return openApiSession(deps, method, primary, input, peer, changeOf(ctx))
        })
        const reads = deps.identities.snapshot()
        const identity = reads.identity(session.identityId)
        const authenticator = reads.authenticators.get(session.authenticatorId)
        const detail = toCurrentApiSessionDetail(session, identity, deps.timeoutMs, token, authQueries, { authenticator })
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
      handle: (ctx) => {
        const { session, identity, bearer } = ctx.auth
        const reads = deps.identities.snapshot()
        const authQueries = pendingAuthQueries(session, identity, reads, ctx.auth.extJwtOwed ?? null)
        const authenticator = reads.authenticators.get(session.authenticatorId)
        const detail = toCurrentApiSessionDetail(session, identity, deps.timeoutMs, visibleToken(session, ctx.auth, ctx.request), authQueries, { authenticator })
        // an OIDC session lasts as long as its access token: expirationSeconds counts down to its exp (expiresAt stays
        // now + the session timeout, as the real controller renders it)
        if (bearer) detail.expirationSeconds = Math.max(0, bearer.claims.exp - Math.floor(deps.clock.now() / 1000))
        return ok(detail)
      },
    }),
    route({
      method: 'DELETE', path: '/current-api-session', apis: ['client', 'management'], access: 'partial', tag: 'Current API Session',
      summary: 'Log out: delete the caller\'s API session (of an OIDC sign-in: revoke its tokens)',
      handle: async (ctx) => {
        if (ctx.auth.bearer) {
          await deps.identities.ask({ type: 'revocation.create', revocations: [{ id: ctx.auth.session.id, type: 'API_SESSION' }], change: changeOf(ctx) })
        } else {
          await deps.sessions.ask({ type: 'apiSession.delete', id: ctx.auth.session.id, change: changeOf(ctx) })
        }
        return okEmpty()
      },
    }),
  ]
}
